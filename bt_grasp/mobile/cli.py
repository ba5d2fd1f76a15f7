"""`bt-grasp scenarios`: the mobile recovery-scenario suite (bt_grasp/cli.py calls
`add_scenarios_parser(subparsers)`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import IO, Any

from bt_grasp.cliargs import add_out_argument
from bt_grasp.errors import UserError, did_you_mean


def add_scenarios_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register `scenarios` on the bt-grasp subparsers; the handler is set as `func`."""
    p = subparsers.add_parser("scenarios", help="mobile fetch-and-place recovery scenarios (simulated Stretch)")
    p.add_argument("--trials", type=int, default=10, help="trials per scenario and variant")
    p.add_argument("--scenario", action="append", help="only these scenarios (repeatable)")
    p.add_argument("--variant", action="append", help="only these variants (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="first trial seed")
    p.add_argument("--perception", nargs="+", default=["geometric"], metavar="BACKEND",
                   help="perception backends to run: geometric (RGB-D only, default) and/or sim (the simulator's "
                        "annotator, an upper bound for scoring)")
    add_out_argument(p, "folder for results.jsonl, table.md, success.png (default runs/scenarios)",
                     default="runs/scenarios")
    p.add_argument("--from-jsonl", nargs="*", help="only aggregate these results files (no new runs)")
    p.set_defaults(func=run_scenarios_command)
    return p


def run_scenarios_command(args: argparse.Namespace) -> int:
    from bt_grasp.mobile.scenarios import (
        PERCEPTION,
        SCENARIOS,
        VARIANTS,
        Trial,
        aggregate,
        markdown,
        plot,
        run_suite,
    )

    out = Path(args.out)
    trials: list[Trial] = []
    if args.from_jsonl:
        for f in args.from_jsonl:
            for line in Path(f).read_text().splitlines():
                if line.strip():
                    trials.append(Trial(**json.loads(line)))
    else:
        for option, names, known in (("scenario", args.scenario or [], SCENARIOS),
                                     ("variant", args.variant or [], VARIANTS),
                                     ("perception", args.perception, PERCEPTION)):
            for name in names:
                if name not in known:
                    raise UserError(f"unknown {option} {name!r}{did_you_mean(name, known)}; "
                                    f"choose from {', '.join(known)}")
        log: IO[str] | None = None  # opened with the first trial: a run that fails first leaves no file

        def progress(t: Trial) -> None:
            nonlocal log
            if log is None:
                out.mkdir(parents=True, exist_ok=True)
                log = (out / "results.jsonl").open("w")
            log.write(json.dumps(t.__dict__) + "\n")
            log.flush()
            print(f"{t.scenario:18s} {t.perception:9s} {t.variant:16s} seed {t.seed:3d} {t.decision:12s} "
                  f"{'ok ' if t.success else 'FAIL'} picks {t.picks} wrong {t.wrong_picks} empty {t.empty_picks} "
                  f"sim {t.sim_time:.1f} s", flush=True)

        try:
            trials = run_suite(args.trials, args.scenario, args.variant, args.seed, progress, args.perception)
        finally:
            if log is not None:
                log.close()
    out.mkdir(parents=True, exist_ok=True)
    rows = aggregate(trials)
    table = markdown(rows)
    (out / "table.md").write_text(table + "\n")
    png = plot(rows, out / "success.png")
    print(table)
    print(f"wrote {out / 'table.md'} and {png}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (`python -m bt_grasp.mobile.cli ...`), the same as `bt-grasp scenarios`."""
    parser = argparse.ArgumentParser(prog="bt-grasp")
    sub = parser.add_subparsers(dest="command", required=True)
    add_scenarios_parser(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UserError as exc:  # bad input: one line on stderr, exit 2, as `bt-grasp scenarios`
        print(exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
