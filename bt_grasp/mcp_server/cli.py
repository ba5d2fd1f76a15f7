"""`bt-grasp serve`: run the MCP tool server for one robot profile.

bt_grasp/cli.py adds this subcommand through `add_serve_parser`; for debugging
`python -m bt_grasp.mcp_server --robot ur5e_robotiq` runs the same command.

stdout is the MCP wire, so nothing else may write there: while the world is built (PyBullet
prints its build banner from C), file descriptor 1 points at stderr and C stdio is flushed before
it is restored; while serving, the SDK's stdio transport keeps fd 1 diverted the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from bt_grasp.errors import BackendUnavailable, UserError


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Point fd 1 at stderr for the block, flushing Python and C buffers on the way out."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        with contextlib.suppress(Exception):
            ctypes.CDLL(None).fflush(None)  # C-level printf (PyBullet) still buffered for fd 1
        os.dup2(saved, 1)
        os.close(saved)


def _limits(args: argparse.Namespace) -> Any:
    from bt_grasp.context import EpisodeLimits

    for name, value, low in (("--actions", args.actions, 0), ("--perception-streak", args.perception_streak, 0),
                             ("--max-ticks", args.max_ticks, 1)):
        if value < low:
            raise UserError(f"{name} must be >= {low}, got {value}")
    return EpisodeLimits(args.actions, args.perception_streak, args.max_ticks)


def cmd_serve(args: argparse.Namespace) -> int:
    """Build the world on the robot thread, then serve until the client closes stdin."""
    from bt_grasp.episode import EXIT_SETUP, close_world
    from bt_grasp.mcp_server.server import SessionThread, build_server, require_mcp
    from bt_grasp.mcp_server.session import ToolSession
    from bt_grasp.profile import load_profile
    from bt_grasp.runner import describe

    require_mcp()  # fail in one line before loading a simulator
    limits = _limits(args)
    profile = load_profile(args.robot)

    def make_session() -> ToolSession:
        from bt_grasp.world import build_world

        world = build_world(profile, perception=args.perception, lighting=args.lighting,
                            image_size=args.image_size)
        try:
            return ToolSession(world, limits, episode=args.episode, seed=args.seed, target=args.target,
                               log_path=args.log)
        except Exception:
            close_world(world)
            raise

    with stdout_to_stderr():
        try:
            runner = SessionThread(make_session)
        except (UserError, BackendUnavailable):
            raise
        except Exception as exc:  # the driver factory or reset() failed: one line, no traceback
            print(f"bt-grasp: robot '{profile.name}' could not start: {describe(exc)}", file=sys.stderr)
            return EXIT_SETUP
    previous = signal.signal(signal.SIGTERM, _terminate)  # SIGTERM: stop the robot, then exit 0
    try:
        with stdout_to_stderr():
            app = build_server(runner)
            s = runner.session
            print(f"bt-grasp serve: {profile.name}, perception {args.perception}, "
                  f"actions {limits.actions}, perception streak {limits.perception_streak}, "
                  f"task {s.blackboard.get('goal.object')!r}; tools: {', '.join(s.tools())}", file=sys.stderr)
        app.run(transport=args.transport)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        runner.close("the client went away")  # stdin closed, SIGINT or SIGTERM: nobody waits for it
    return 0


def _terminate(signum: int, frame: Any) -> None:  # noqa: ARG001
    """SIGTERM ends serving the way Ctrl-C does, so the robot is stopped and closed."""
    raise KeyboardInterrupt


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `serve` to bt-grasp's sub-commands (returns the new parser)."""
    from bt_grasp.context import EpisodeLimits

    d = EpisodeLimits()
    p = subparsers.add_parser("serve", help="serve the robot's tools over the Model Context Protocol",
                              description="Expose survey_scene, locate_object, grasp, push, place (and "
                                          "nav_to/gaze_at on mobile robots) as MCP tools inside one "
                                          "budgeted episode. Needs: pip install 'bt_grasp[mcp]'.")
    p.add_argument("--robot", default=None,
                   help="robot profile: a shipped name (ur5e_robotiq, stretch3) or a YAML file (default ur5e_robotiq)")
    p.add_argument("--perception", default="geometric", choices=("geometric", "sim"),
                   help="geometric: RGB-D only (default); sim: the simulator's annotator, an upper bound for scoring")
    p.add_argument("--transport", default="stdio", choices=("stdio",))
    p.add_argument("--actions", type=int, default=d.actions, help="episode action budget (grasp + push)")
    p.add_argument("--perception-streak", type=int, default=d.perception_streak,
                   help="perception calls in a row allowed without a grasp or push")
    p.add_argument("--max-ticks", type=int, default=d.max_ticks, help="episode tick cap, over all calls")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--episode", type=int, default=0)
    p.add_argument("--target", default=None, help="ask the scene generator for this target object")
    p.add_argument("--lighting", default="easy", choices=("easy", "hard"))
    p.add_argument("--image-size", type=int, default=None)
    p.add_argument("--log", default=None, help="append one JSON line per tool call here")
    p.set_defaults(func=cmd_serve)
    return p


def main(argv: list[str] | None = None) -> int:
    """`python -m bt_grasp.mcp_server ARGS` = `bt-grasp serve ARGS`, with the CLI's error lines."""
    parser = argparse.ArgumentParser(prog="bt-grasp")
    add_serve_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["serve", *(sys.argv[1:] if argv is None else argv)])
    from bt_grasp.quiet import import_pybullet_quietly

    import_pybullet_quietly()  # stdout is the protocol channel: no banner on it
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except BackendUnavailable as exc:
        print(f"backend unavailable: {exc}", file=sys.stderr)
        return 2
