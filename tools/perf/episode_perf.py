"""Wall time per benchmark episode on one core, and where it goes.

Runs episodes one after another in this process (one core; BLAS capped to one thread) through
the same instrumented path as `bt-grasp bench`, then prints the median and p95 wall seconds per
episode and the share spent in physics (driver calls: stepping, IK, collision queries, scene
generation), rendering (the camera), perception (segmentation, grounding, grasp and push
planning) and the tree (ticking, guards, Watchdog, bookkeeping). Target: a median <= 2 s and a
p95 <= 4 s per episode per core at 512² (the published harness spent 142.5 s per episode).

    python tools/perf/episode_perf.py [--trees trees/clutter.yaml ...] [--episodes 10] [--image-size 512]
    python tools/perf/episode_perf.py --from out/bench/results.jsonl   # summarise an existing run

Timing is taken by proxies around the driver, the perceiver and the planning services
(bt_grasp/bench/instrument.py); the driver itself is not modified. Scene generation (reset) is
shown separately because it is part of physics + rendering but not of the policy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bt_grasp.threads import use_one_thread

use_one_thread()  # before numpy is imported: one core means one thread

ROOT = Path(__file__).resolve().parents[2]
TARGET_MEDIAN_S, TARGET_P95_S = 2.0, 4.0  # per episode per core at 512² (docs/benchmark.md, Performance)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", nargs="+", default=[str(ROOT / "trees" / "clutter.yaml")])
    ap.add_argument("--perception", nargs="+", default=["sim", "geometric"])
    ap.add_argument("--lighting", nargs="+", default=["easy"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--image-size", type=int, default=512)
    ap.add_argument("--robot", default=None, help="robot profile (default: the tree's, else ur5e_robotiq)")
    ap.add_argument("--from", dest="source", default=None, help="summarise this results.jsonl instead")
    args = ap.parse_args(argv)

    from bt_grasp.bench.metrics import perf_summary
    from bt_grasp.bench.report import perf_table
    from bt_grasp.bench.results import load_records
    from bt_grasp.bench.tasks import make_tasks
    from bt_grasp.bench.worker import close_worlds, run_task

    if args.source:
        records = [r for r in load_records(args.source) if "error" not in r]
    else:
        tasks = make_tasks([str(Path(t).resolve()) for t in args.trees], [args.seed], args.episodes,
                           args.lighting, args.perception, args.image_size, robot=args.robot)
        records = []
        for i, t in enumerate(tasks, 1):
            rec = run_task(t)
            if "error" in rec:
                print(f"{t.key}: {rec['error']}", file=sys.stderr)
                continue
            records.append(rec)
            print(f"[{i}/{len(tasks)}] {t.key}: {rec['wall']:.2f} s", file=sys.stderr)
        close_worlds()
    if not records:
        print("no episodes", file=sys.stderr)
        return 1
    print(perf_table(records))
    print()
    print("| Method | Episodes | Median s/ep | p95 s/ep | Physics | Render | Perception | Tree |")
    print("|---|---|---|---|---|---|---|---|")
    for m in sorted({r["method"] for r in records}):
        s = perf_summary([r for r in records if r["method"] == m])
        sh = s["shares"]
        print(f"| {m} | {s['episodes']} | {s['median_s']:.2f} | {s['p95_s']:.2f} | "
              f"{100 * sh['physics']:.0f}% | {100 * sh['render']:.0f}% | {100 * sh['perception']:.0f}% | "
              f"{100 * sh['tree']:.0f}% |")
    s = perf_summary(records)
    verdict = "meets" if s["median_s"] <= TARGET_MEDIAN_S and s["p95_s"] <= TARGET_P95_S else "misses"
    print(f"\nmedian {s['median_s']:.2f} s, p95 {s['p95_s']:.2f} s per episode per core: {verdict} the "
          f"target of {TARGET_MEDIAN_S:g} s median, {TARGET_P95_S:g} s p95 (published harness: 142.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
