"""`bt-grasp watchdog record | eval | calibrate` (bt_grasp/cli.py calls add_watchdog_parser).

Each subcommand's handler is `args.func(args) -> int` (exit code); bad input raises UserError.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from bt_grasp.errors import BackendUnavailable, UserError
from bt_grasp.resources import profile_path


def add_watchdog_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `watchdog` with its three subcommands to an argparse subparsers object."""
    wd = subparsers.add_parser("watchdog", help="record, evaluate and calibrate the grasp Watchdog",
                               description="Labelled grasp telemetry: record on the simulator, score the "
                                           "Watchdog, fit a profile's thresholds.")
    sub = wd.add_subparsers(dest="watchdog_cmd", metavar="{record,eval,calibrate}")
    sub.required = True

    rec = sub.add_parser("record", help="run grasps in simulation, inducing every outcome, and save labelled traces")
    rec.add_argument("--robot", default=None, help="robot profile name or YAML path (default ur5e_robotiq)")
    rec.add_argument("--n", type=int, default=300, help="number of traces (default 300)")
    rec.add_argument("-o", "--out", required=True, help="output trace directory (appended to)")
    rec.add_argument("--seed", type=int, default=0)
    rec.add_argument("--no-noise", action="store_true", help="store clean simulator telemetry")
    rec.add_argument("-q", "--quiet", action="store_true")
    rec.set_defaults(func=cmd_record)

    ev = sub.add_parser("eval", help="confusion matrix and per-label precision/recall (95 %% CIs), split into "
                                     "calibration seeds and held-out seeds")
    ev.add_argument("traces", nargs="+", help="trace directories (index.jsonl + .npz)")
    ev.add_argument("--calibration-seeds", type=int, nargs="*", default=None,
                    help="recording seeds the thresholds were fitted on (default: the profile's "
                         "watchdog.calibration_seeds); traces from other seeds are reported as held out")
    ev.add_argument("--robot", default=None, help="profile whose watchdog thresholds to use (default ur5e_robotiq)")
    ev.add_argument("--png", default=None, help="where to write the matrix PNG (default <traces>/confusion.png)")
    ev.add_argument("--json", action="store_true", help="print the scores as JSON instead of a table")
    ev.set_defaults(func=cmd_eval)

    cal = sub.add_parser("calibrate", help="fit a profile's watchdog thresholds from labelled traces")
    cal.add_argument("traces", help="trace directory")
    cal.add_argument("-o", "--out", required=True,
                     help="robot profile YAML to write: an existing one has only its watchdog: block "
                          "replaced; a new one starts as a copy of --robot")
    cal.add_argument("--robot", default=None,
                     help="starting profile, a shipped name or a file (default: the -o file if it exists, "
                          "else ur5e_robotiq)")
    cal.add_argument("--test-frac", type=float, default=0.3, help="held-out share (default 0.3)")
    cal.add_argument("--seed", type=int, default=0)
    cal.add_argument("--rounds", type=int, default=3)
    cal.add_argument("--dry-run", action="store_true", help="report only; do not write the profile")
    cal.set_defaults(func=cmd_calibrate)
    return wd


def _profile(name: str | None) -> Any:
    from bt_grasp.profile import load_profile

    return load_profile(name)


def _driver_factory(profile: Any) -> Any:
    """The profile's simulated arm, built when recording starts (a missing mujoco fails here, first)."""
    if profile.driver == "pybullet_arm":
        def make() -> Any:
            from bt_grasp.drivers.pybullet_arm.driver import PyBulletArm

            return PyBulletArm(profile)
        return make
    if profile.driver == "mujoco_arm":
        from bt_grasp.builtin_drivers import require_mujoco

        require_mujoco()

        def make_mj() -> Any:
            from bt_grasp.drivers.mujoco_arm import MujocoArm

            return MujocoArm(profile, image_size=64)  # the recorder never looks through the camera
        return make_mj
    raise UserError(f"watchdog record needs a simulated driver with fault injection and ground truth; "
                    f"profile driver {profile.driver!r} is not supported (use pybullet_arm or mujoco_arm)",
                    file=profile.source)


def cmd_record(args: argparse.Namespace) -> int:
    from bt_grasp.watchdog.record import record
    from bt_grasp.watchdog.thresholds import thresholds_from_profile

    if args.n <= 0:
        raise UserError(f"--n must be positive, got {args.n}")
    prof = _profile(args.robot)
    th = thresholds_from_profile(prof)
    stroke = prof.gripper.max_aperture_m - prof.gripper.min_aperture_m
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError("output exists and is not a directory", file=str(out))
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr))
    entries = record(_driver_factory(prof), args.n, out, seed=args.seed, th=th, robot=prof.name,
                     noise=not args.no_noise, stroke_m=stroke, progress=log)
    counts: dict[str, int] = {}
    for e in entries:
        counts[e["label"]] = counts.get(e["label"], 0) + 1
    print(f"recorded {len(entries)} traces to {out}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from bt_grasp.watchdog.dataset import load_dataset
    from bt_grasp.watchdog.evaluate import evaluate, plot_confusion, split_by_seed
    from bt_grasp.watchdog.thresholds import thresholds_from_profile

    traces = []
    for d in args.traces:
        got = load_dataset(d)
        if not got:
            raise UserError("no traces in the index", file=str(Path(d) / "index.jsonl"))
        traces += got
    th = thresholds_from_profile(_profile(args.robot))
    seeds = th.calibration_seeds if args.calibration_seeds is None else args.calibration_seeds
    cal, held = split_by_seed(traces, seeds)
    parts = {"all": traces, "calibration seeds": cal, "held-out seeds": held} if seeds else {"all": traces}
    scores = {name: evaluate(part, th) for name, part in parts.items() if part}
    main_name = "held-out seeds" if "held-out seeds" in scores else "all"
    png = Path(args.png) if args.png else Path(args.traces[0]) / "confusion.png"
    plot_confusion(scores[main_name], png, title=f"Watchdog on {' '.join(args.traces)} ({main_name})")
    if args.json:
        print(json.dumps({**scores["all"].summary(), "png": str(png), "calibration_seeds": list(seeds),
                          "splits": {k: v.summary() for k, v in scores.items()}}, indent=2))
        return 0
    for name, sc in scores.items():
        part_seeds = sorted({tr.meta.get("seed") for tr in parts[name]}, key=str)
        print(f"== {name} (n={sc.n}, seeds {', '.join(map(str, part_seeds))})")
        print(sc.table())
        print()
    if not seeds:
        print("no calibration seeds known (profile watchdog.calibration_seeds or --calibration-seeds): "
              "no held-out split")
    print(f"confusion matrix PNG ({main_name}): {png}")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from bt_grasp.watchdog.calibrate import calibrate, write_profile
    from bt_grasp.watchdog.dataset import load_dataset
    from bt_grasp.watchdog.thresholds import thresholds_from_profile

    if not 0.0 < args.test_frac < 1.0:
        raise UserError(f"--test-frac must be in (0, 1), got {args.test_frac}")
    out = Path(args.out)
    if out.exists() and not out.is_file():
        raise UserError("output exists and is not a file", file=args.out)
    if not out.parent.is_dir():
        raise UserError(f"no folder {out.parent} to write into (create it, or choose another -o)", file=args.out)
    start = args.robot or (args.out if out.exists() else "ur5e_robotiq")
    prof = _profile(start)
    traces = load_dataset(args.traces)
    if not traces:
        raise UserError("no traces in the index", file=str(Path(args.traces) / "index.jsonl"))
    res = calibrate(traces, thresholds_from_profile(prof), test_frac=args.test_frac, seed=args.seed,
                    rounds=args.rounds)
    print(res.report())
    if not args.dry_run:
        ho = res.held_out
        unscored = [name for name, value in (("held-out macro-F1", ho.macro_f1()),
                                              ("EMPTY recall", ho.empty_recall())) if math.isnan(value)]
        if unscored:
            raise UserError(f"not written: {' and '.join(unscored)} could not be scored on the held-out "
                            f"{ho.n} of {len(traces)} traces (record more, e.g. "
                            f"`bt-grasp watchdog record --n 180 -o {args.traces}`)", file=args.out)
        if not out.exists():
            out.write_text(profile_path(start).read_text())
        write_profile(args.out, res.thresholds,
                      comment=f"fitted by bt-grasp watchdog calibrate on {_seeds_text(res.thresholds.calibration_seeds)} "
                              f"(n={len(traces)}, held-out macro-F1 {ho.macro_f1():.3f}, "
                              f"EMPTY recall {ho.empty_recall():.3f})")
        print(f"wrote the watchdog block of {args.out}" + ("" if start == args.out else f" (from {start})"))
    return 0


def _seeds_text(seeds: list[int]) -> str:
    """'seeds 101 and 102': what a profile says it was fitted on (a trace folder's path is this
    machine's, meaningless in a shared profile)."""
    if not seeds:
        return "traces without recording seeds"
    names = [str(s) for s in seeds]
    if len(names) == 1:
        return f"seed {names[0]}"
    return f"seeds {', '.join(names[:-1])} and {names[-1]}"


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (`python -m bt_grasp.watchdog.cli ...`), the same commands as `bt-grasp watchdog`."""
    ap = argparse.ArgumentParser(prog="bt-grasp")
    sub = ap.add_subparsers(dest="cmd")
    sub.required = True
    add_watchdog_parser(sub)
    args = ap.parse_args(argv)
    try:
        return int(args.func(args))
    except (UserError, BackendUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
