"""Watchdog benchmark: batch throughput, streaming per-sample cost, decision latency.

    python tools/perf/watchdog.py [--traces DIR] [--n 600] [--repeat 3]

Traces: a recorded directory (bt-grasp watchdog record) or, by default, synthetic attempts
(bt_grasp.watchdog.synthetic -- kinematic sketches, used here only for timing).
Decision latency is reported two ways: from the end of the deciding window to the label (the
classifier's own delay: samples and the wall time of the deciding feed() call), and from the start
of the deciding window to the label (the hysteresis delay, in samples and sim seconds).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from bt_grasp.watchdog.classify import StreamingClassifier, classify, classify_many
from bt_grasp.watchdog.thresholds import WatchdogThresholds


def _load(args: argparse.Namespace) -> tuple[list, str]:
    if args.traces:
        from bt_grasp.watchdog.dataset import load_dataset
        return [tr.telemetry for tr in load_dataset(args.traces)], f"recorded traces in {args.traces}"
    from bt_grasp.watchdog.synthetic import synth_dataset
    return [tel for _, tel in synth_dataset(args.n, seed=0)], "synthetic attempts"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", default=None)
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    th = WatchdogThresholds()
    tels, what = _load(args)
    n_samples = sum(len(t) for t in tels)
    print(f"{len(tels)} {what}, {n_samples} samples ({n_samples / len(tels):.0f} per attempt)")

    # batch: per attempt
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for tel in tels:
            classify(tel, th)
        best = min(best, time.perf_counter() - t0)
    print(f"batch, one call per attempt: {n_samples / best / 1e6:.2f} M samples/s "
          f"({best / len(tels) * 1e6:.0f} us per attempt)")

    # batch: classify_many, one (attempts x samples) matrix per chunk of attempts
    for chunk in (64, 512):
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            for k in range(0, len(tels), chunk):
                classify_many(tels[k:k + chunk], th)
            best = min(best, time.perf_counter() - t0)
        print(f"batch, classify_many in chunks of {chunk} attempts: {n_samples / best / 1e6:.2f} M samples/s "
              f"({best / len(tels) * 1e6:.0f} us per attempt)")

    # batch: one long stream (all attempts back to back, times made monotonic) -> vectorised core
    from bt_grasp.watchdog.telemetry import Telemetry
    cols = {k: [] for k in tels[0].to_dict()}
    offset = 0.0
    for tel in tels:
        d = tel.to_dict()
        for k in cols:
            cols[k].append(d[k] + offset if k == "t" else d[k])
        offset += float(d["t"][-1]) + 1.0
    long = Telemetry(**{k: np.concatenate(v) for k, v in cols.items()})
    th_long = th.model_copy(update={"attempt_time_budget_s": 600.0})
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        classify(long, th_long)
        best = min(best, time.perf_counter() - t0)
    print(f"batch, one long stream of {len(long)} samples: {len(long) / best / 1e6:.2f} M samples/s")

    # streaming
    fed = 0
    t_total = 0.0
    decide_ms: list[float] = []
    lat_samples: list[int] = []
    hyst_samples: list[int] = []
    hyst_s: list[float] = []
    for tel in tels:
        samples = tel.samples()
        sc = StreamingClassifier(th)
        for s in samples:
            t0 = time.perf_counter()
            out = sc.feed(s)
            dt = time.perf_counter() - t0
            fed += 1
            t_total += dt
            if out is not None:
                decide_ms.append(dt * 1e3)
                win = out.evidence.get("window")
                if win and out.index is not None:
                    lat_samples.append(out.index - win["i1"])
                    hyst_samples.append(win["i1"] - win["i0"] + 1)
                    hyst_s.append(win["duration_s"])
                break
        sc.finish()
    print(f"streaming: {t_total / fed * 1e6:.1f} us per sample over {fed} samples fed "
          f"({fed / t_total / 1e3:.0f} k samples/s)")
    if decide_ms:
        print(f"decision latency after the window closes: {max(lat_samples)} samples (max), "
              f"{statistics.median(decide_ms):.3f} ms median / {max(decide_ms):.3f} ms max compute for the "
              "deciding sample")
        print(f"hysteresis (deciding window): median {statistics.median(hyst_samples)} samples = "
              f"{statistics.median(hyst_s) * 1e3:.0f} ms of telemetry")


if __name__ == "__main__":
    main()
