"""`bt-grasp run`: one episode of a tree on a robot, its observers (recording, live views) and
the summary line or JSON document it ends with."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bt_grasp.errors import BackendUnavailable, UserError
from bt_grasp.observe.formats import record_format_names

_CLI_START = time.monotonic()


def process_wall() -> float:
    """Seconds since this process started (interpreter start-up and imports included).

    Linux knows the start time (/proc); elsewhere we count from the import of this module.
    """
    try:
        stat = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - int(stat[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.monotonic() - _CLI_START


def add_run_parser(sub: Any) -> None:
    """The `run` sub-command and its options."""
    p = sub.add_parser("run", help="run one episode of a tree on a robot (headless PyBullet by default)")
    p.add_argument("tree", help="a shipped tree name (clutter) or a tree file")
    p.add_argument("--robot", default=None,
                   help="robot profile: a shipped name (ur5e_robotiq, stretch3) or a YAML file "
                        "(default ur5e_robotiq)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--episode", type=int, default=0, help="episode index (seed + 1000 x episode)")
    p.add_argument("--goal", default=None, help='instruction, e.g. "Grasp the red mug"')
    p.add_argument("--trace", default=None, help="write a JSONL trace here")
    p.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--live", nargs="?", const="auto", default=None,
                   choices=("auto", "frames", "lines", "foxglove"),
                   help="draw the tree each tick: --live redraws in place on a terminal, one line per "
                        "tick otherwise; --live=frames or --live=lines forces one (NO_COLOR honoured); "
                        "--live=foxglove serves the run to Foxglove on ws://127.0.0.1:PORT instead")
    p.add_argument("--port", type=int, default=None,
                   help="the port of --live=foxglove (default 8765; 0 picks a free one)")
    p.add_argument("--record", default=None, metavar="FILE",
                   help="record the run: RUN.mcap for Foxglove (ticks, events, tree, poses, points) or "
                        "RUN.db3 for a ROS 2 bag (frames, camera info, tf, tree status)")
    p.add_argument("--record-images", action="store_true",
                   help="with --record: add the RGB and depth frames perception captured")
    p.add_argument("--record-format", default=None, choices=record_format_names(),
                   help="with --record: the format, when the file name's suffix does not say it")
    p.add_argument("--groot2", nargs="?", type=int, const=1667, default=None, metavar="PORT",
                   help="serve the run to Groot2's live monitor (ZMQ on PORT and PORT+1, default 1667)")
    p.add_argument("--groot2-subtree", default=None, metavar="NODE",
                   help="show Groot2 only the part of the tree under node id NODE (its free edition "
                        "draws at most 20 nodes)")
    p.add_argument("--perception", default=None, metavar="NAME",
                   help="perceiver plug-in (default: the profile's, geometric): geometric, RGB-D only; "
                        "sim, the simulator's annotator, an upper bound for scoring; or an installed one")
    p.add_argument("--driver", default=None, metavar="NAME",
                   help="driver plug-in (default: the profile's driver:): pybullet_arm, stretch or an installed one")
    p.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="the perceiver's vocabulary (docs/perception.md, Vocabulary; default: the profile's "
                        "perception: {vocabulary: FILE}, else the shipped catalogue vocabulary)")
    p.add_argument("--lighting", default="easy", choices=("easy", "hard"))
    p.add_argument("--image-size", type=int, default=None)
    p.add_argument("--dry-run", action="store_true",
                   help="hardware drivers only read telemetry and never command motion")
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    import contextlib

    from bt_grasp.episode import EXIT_SETUP, run_episode
    from bt_grasp.proof_note import unproven_note
    from bt_grasp.resources import tree_path
    from bt_grasp.run_summary import GoalSeen, result_json, summary_line
    from bt_grasp.runner import describe, warn

    if note := unproven_note(tree_path(args.tree)):
        print(note, file=sys.stderr)
    observers = _tool_observers(args)
    if args.live and args.live != "foxglove":
        from bt_grasp.live.view import TerminalView

        observers.append(TerminalView(stream=sys.stderr if args.json else sys.stdout, mode=args.live))
    goal = GoalSeen()
    # With --json, stdout is the one result document: whatever the run prints goes to stderr.
    shown = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    try:
        with shown:
            result = run_episode(tree_path(args.tree), robot=args.robot, seed=args.seed, episode=args.episode,
                                 goal=args.goal, trace=args.trace, gui=args.gui, perception=args.perception,
                                 lighting=args.lighting, image_size=args.image_size, handle_signals=True,
                                 dry_run=args.dry_run, driver=args.driver, observers=[*observers, goal],
                                 vocabulary=args.vocabulary)
    finally:
        for observer in observers:  # the live view's last frame, the recording's end, the servers
            try:
                observer.close()
            except Exception as exc:  # after the decision: a warning, never a traceback
                warn(f"{type(observer).__name__} did not close: {describe(exc)}")
    total = process_wall()
    if args.json:
        print(json.dumps({**result_json(result, goal.goal), "process_wall": round(total, 3)}))
    elif result.exit_code == EXIT_SETUP:  # one line, no summary: nothing ran
        print(f"bt-grasp: robot '{result.robot}' could not start: {result.reason.removeprefix('setup failed: ')}",
              file=sys.stderr)
    else:
        print(f"{summary_line(result, goal.goal)} episode, {total:.1f} s process")
    return result.exit_code


def _tool_observers(args: argparse.Namespace) -> list[Any]:
    """--record FILE (MCAP for Foxglove, .db3 for a ROS 2 bag), --live=foxglove (a WebSocket
    server) and --groot2 (Groot2's live monitor), each opened now so that a bad path or a port in
    use is one line before the run."""
    if args.record_images and not args.record:
        raise UserError("--record-images needs --record FILE (.mcap or .db3)", file=args.tree)
    if args.record_format and not args.record:
        raise UserError("--record-format needs --record FILE", file=args.tree)
    if args.port is not None and args.live != "foxglove":
        raise UserError("--port is the port of --live=foxglove", file=args.tree)
    out: list[Any] = []
    try:
        if args.record:
            from bt_grasp.observe.recorders import recorder_for

            out.append(recorder_for(args.record, args.record_images, args.record_format))
        if args.live == "foxglove":
            from bt_grasp.observe.foxglove_live import FoxgloveLive

            out.append(FoxgloveLive(port=8765 if args.port is None else args.port, stream=sys.stderr))
        if args.groot2 is not None:
            from bt_grasp.observe.groot2_live import Groot2Publisher

            out.append(Groot2Publisher(args.groot2, subtree=args.groot2_subtree,
                                       notify=lambda text: print(text, file=sys.stderr)))
    except (UserError, BackendUnavailable):
        for observer in out:
            observer.close()
        raise
    return out
