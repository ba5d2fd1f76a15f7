"""`bt-grasp bench`: run the clutter benchmark and write results.jsonl, report.md and PNG plots.

Registered by bt_grasp.cli through add_bench_parser (imported only if this module exists).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bt_grasp.cliargs import add_out_argument
from bt_grasp.errors import UserError

DEFAULT_TREES = ["clutter", "open_loop", "remove_all"]
# bench/instructions.py's FORMS (not imported here: `bt-grasp --help` stays fast)
INSTRUCTION_FORMS = ("name", "synonym", "attributes", "relation", "superlative", "ambiguous", "absent")


def add_bench_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bench", help="clutter benchmark: trees × seeds × episodes × lighting × perception",
        description="Run every tree on the same simulated scenes; one JSONL line per episode in "
                    "OUT/results.jsonl (a rerun skips finished episodes), traces of failed "
                    "episodes in OUT/traces, then OUT/report.md and PNG plots. A bare `bt-grasp bench` "
                    f"runs {len(DEFAULT_TREES)} trees x 1 seed x 100 episodes = {len(DEFAULT_TREES) * 100} "
                    f"episodes at 512 px on every core ({os.cpu_count() or 1} workers here); a quick "
                    "look: --trees clutter --episodes 1 --image-size 128.")
    p.add_argument("--trees", nargs="+", default=DEFAULT_TREES,
                   help=f"trees (methods): shipped names or tree files (default {' '.join(DEFAULT_TREES)})")
    p.add_argument("--seeds", nargs="+", type=int, default=None, help="base seeds (default 0)")
    p.add_argument("--split", choices=["dev", "test"], default=None,
                   help="dev: tuning seeds (0-499; alone: 0-5); test: held-out seeds (500-999; "
                        "alone: the lowest unspent one); --seeds must then lie in it (docs/benchmark.md)")
    p.add_argument("--episodes", type=int, default=100, help="episodes per base seed (default 100)")
    p.add_argument("--lighting", nargs="+", default=["easy"], choices=["easy", "hard"], help="(default easy)")
    p.add_argument("--perception", nargs="+", default=["geometric"], choices=["geometric", "sim"],
                   help="geometric: RGB-D only (default); sim: the simulator's annotator, an upper bound for scoring")
    p.add_argument("--instructions", nargs="+", default=None, metavar="FORM", choices=INSTRUCTION_FORMS,
                   help="referring-expression forms, each on every scene: " + ", ".join(INSTRUCTION_FORMS)
                        + " (default: the target's name only; docs/benchmark.md, Instructions)")
    p.add_argument("--robot", default=None, help="robot profile (default: the UR5e arm)")
    p.add_argument("--image-size", type=int, default=512, help="square camera image side (px, default 512)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help=f"worker processes, one PyBullet DIRECT client each (default: every core, "
                        f"{os.cpu_count() or 1} here)")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="local process pool, or Ray (pip install 'bt_grasp[ray]')")
    add_out_argument(p, "output directory (default out/bench)", default="out/bench")
    p.add_argument("--no-traces", action="store_true", help="do not keep traces of failed episodes")
    p.add_argument("--no-scene-cache", action="store_true",
                   help="regenerate every scene instead of reusing OUT/scene_cache (same result, slower)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--report-only", action="store_true",
                   help="do not run anything: rebuild the report from OUT/results.jsonl")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from bt_grasp.resources import tree_path

    from .rates import write_rates
    from .report import markdown, write_report
    from .results import load_records
    from .runner import WorkerDied, run_bench
    from .splits import seeds_for
    from .tasks import make_tasks

    args.seeds = seeds_for(args.split, args.seeds, [0])
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError("is a file; -o names the folder the benchmark writes (results.jsonl, "
                        "report.md, plots)", file=args.out)
    results = out / "results.jsonl"
    args.trees = [tree_path(t) for t in args.trees]
    if args.report_only:
        records = load_records(results)
    else:
        from bt_grasp.spec.loader import load_tree

        for t in args.trees:  # fail fast, before any worker starts, on a broken tree
            load_tree(t)
        from bt_grasp.profile import load_profile
        from bt_grasp.world import read_vocabulary

        # ... and on a broken profile or vocabulary file (the workers read the same)
        read_vocabulary(load_profile(args.robot).perception_vocabulary)
        tasks = make_tasks([str(Path(t).resolve()) for t in args.trees], args.seeds, args.episodes,
                           args.lighting, args.perception, args.image_size, args.robot,
                           None if args.no_traces else str((out / "traces").resolve()),
                           None if args.no_scene_cache else str((out / "scene_cache").resolve()),
                           interleave=args.workers, instructions=args.instructions)
        try:
            records = run_bench(tasks, results, workers=args.workers, backend=args.backend,
                                progress=not args.no_progress)
        except WorkerDied as exc:
            print(exc, file=sys.stderr)
            return 1
    if not records:
        print(f"{results}: no episode records", file=sys.stderr)
        return 1
    try:
        md, pngs = write_report(records, out)
        rates = write_rates(records, out)
    except OSError as exc:
        from bt_grasp.outputs import output_error

        raise UserError(output_error("report", exc) + f"; {results} is complete", file=str(out)) from None
    print(markdown(records))
    print(f"wrote {results}, {md}, " + ", ".join(str(p) for p in [*pngs, *rates]), file=sys.stderr)
    return 0
