"""The Watchdog of a running grasp: cost per poll, incremental vs re-classifying the prefix.

    python tools/perf/watchdog_live.py [--traces DIR] [--n 200] [--per-poll 4] [--repeat 3]

Each attempt is replayed as a grasp polled once per control period: `--per-poll` new samples per
poll (the arm records 80 Hz, 0.05 s per poll = 4). Two ways of keeping a label so far:
- incremental: LiveWatchdog.update on the growing telemetry (only the new samples are fed);
- naive: the batch classifier on the whole prefix at every poll (what "re-classify" would cost).
Both stop feeding once a label is final, as the grasp leaf does. Prints the mean and the worst
median and 95th-percentile cost per poll of each, and their ratios, measured in the same run; checks both end with the batch
label. Traces: a recorded directory or, by default, synthetic attempts (timing only).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bt_grasp.watchdog.classify import classify
from bt_grasp.watchdog.live import LiveWatchdog
from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds


def _load(args: argparse.Namespace) -> tuple[list[Telemetry], str]:
    if args.traces:
        from bt_grasp.watchdog.dataset import load_dataset
        return [tr.telemetry for tr in load_dataset(args.traces)], f"recorded traces in {args.traces}"
    from bt_grasp.watchdog.synthetic import synth_dataset
    return [tel for _, tel in synth_dataset(args.n, seed=0)], "synthetic attempts"


def _prefixes(tel: Telemetry, per_poll: int) -> list[Telemetry]:
    """What `motion.telemetry()` returns at each poll (built before timing: the driver's cost)."""
    cols = tel.to_dict()
    return [Telemetry(**{k: v[:n] for k, v in cols.items()})
            for n in range(per_poll, len(tel) + per_poll, per_poll)]


def _incremental(polls: list[Telemetry], th: WatchdogThresholds) -> tuple[list[float], str]:
    live, costs = LiveWatchdog(th), []
    for tel in polls:
        t0 = time.perf_counter()
        live.update(tel)
        costs.append(time.perf_counter() - t0)
    return costs, live.final(polls[-1]).label.value


def _naive(polls: list[Telemetry], th: WatchdogThresholds) -> tuple[list[float], str]:
    costs, label = [], None
    for tel in polls:
        t0 = time.perf_counter()
        v = classify(tel, th)
        costs.append(time.perf_counter() - t0)
        if v.index is not None:  # decided inside the prefix: final, stop re-classifying
            label = v.label.value
            break
    return costs, label or classify(polls[-1], th).label.value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", default=None)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--per-poll", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    th = WatchdogThresholds()
    tels, what = _load(args)
    polls = [_prefixes(tel, args.per_poll) for tel in tels if len(tel)]
    print(f"{len(polls)} {what}, {args.per_poll} samples per poll, "
          f"{sum(map(len, polls)) / len(polls):.0f} polls per attempt")
    best: dict[str, tuple[float, float]] = {}
    for name, run in (("incremental", _incremental), ("naive", _naive)):
        for _ in range(args.repeat):
            costs: list[float] = []
            for attempt, tel in zip(polls, tels, strict=False):
                c, label = run(attempt, th)
                assert label == classify(tel, th).label.value, (name, label)
                costs.extend(c)
            median, p95 = (float(x) for x in np.percentile(costs, [50, 95]))
            if name not in best or median < best[name][0]:
                best[name] = (median, p95)
        print(f"{name:12s} median {best[name][0] * 1e6:8.1f} us/poll   p95 {best[name][1] * 1e6:8.1f} us/poll")
    (inc, inc_95), (naive, naive_95) = best["incremental"], best["naive"]
    print(f"naive / incremental: x{naive / inc:.1f} median per poll, x{naive_95 / inc_95:.1f} at p95 "
          "(both end with the batch label)")


if __name__ == "__main__":
    main()
