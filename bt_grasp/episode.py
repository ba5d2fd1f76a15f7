"""One episode end to end: profile -> world (driver, perceiver, services) -> runner -> result.

A world that cannot be set up (the driver factory, the perceiver's or reset() raising, or reset
past its wall-clock limit) is a recorded decision too: WAIT_CLARIFY "setup failed: <why>" with
exit code EXIT_SETUP, and the trace's final line. Closing the world afterwards never hides the
decision: a failure there is one warning line.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bt_grasp import seam
from bt_grasp.blackboard import Blackboard
from bt_grasp.call_limit import SETUP_LIMIT_S, call_limit, limiter_for
from bt_grasp.context import EpisodeClock, LogicalClock, RunContext, WallClock
from bt_grasp.default_registry import default_registry
from bt_grasp.drivers.capabilities import RealTime, TaskSource, TimeSource
from bt_grasp.errors import BackendUnavailable, UserError
from bt_grasp.goal_text import goal_object
from bt_grasp.observers import RunObserver
from bt_grasp.outcomes import Decision
from bt_grasp.profile import RobotProfile, load_profile
from bt_grasp.runner import (
    EpisodeResult,
    Interrupted,
    Runner,
    describe,
    finish,
    interrupts,
    stop_driver,
    warn,
)
from bt_grasp.spec.model import TreeSpec
from bt_grasp.tick_budget import episode_limits
from bt_grasp.trace_header import header_record
from bt_grasp.trace_writer import TraceWriter

EXIT_SETUP = 3  # `bt-grasp run`: the robot could not start (the decision is WAIT_CLARIFY "setup failed: ...")


def goal_blackboard(goal_text: str | None, tree_goal: dict[str, Any], task: str | None) -> dict[str, Any]:
    """goal.* keys: --goal wins, then the tree's goal: block, then the scene's own task."""
    if goal_text:
        return {"goal.text": goal_text, "goal.object": goal_object(goal_text)}
    if tree_goal:
        out = {f"goal.{k}": v for k, v in tree_goal.items()}
        out.setdefault("goal.text", f"Grasp the {out.get('goal.object', 'object')}")
        return out
    if task:
        return {"goal.text": f"Grasp the {task}", "goal.object": task}
    return {}


def episode_clock(driver: Any) -> EpisodeClock:
    """Logical time, unless the driver moves in real time: then its own clock (now/sleep), read as
    a wall clock."""
    if not (isinstance(driver, RealTime) and driver.realtime):
        return LogicalClock()
    source = getattr(driver, "clock", None)
    if isinstance(source, TimeSource):
        # every reading passes the seam check: a clock of '1.5 s' or infinity is a fault, not a time
        return WallClock(now=lambda: seam.seconds(source.now(), "driver clock"), sleep=source.sleep)
    return WallClock()


def build_context(spec: Any, world: Any, goal: dict[str, Any]) -> RunContext:
    """The episode's context. A driver that moves in real time (`realtime`: a real robot) gets a
    wall clock, so timeouts preempt at wall-clock deadlines and ticks poll it at a steady rate."""
    clock = episode_clock(world.driver)
    registry = getattr(spec, "registry", None) or default_registry()
    return RunContext(registry=registry, limits=episode_limits(spec, registry),
                      driver=world.driver, perceiver=world.perceiver, profile=world.profile,
                      blackboard=Blackboard(goal), services=world.services, clock=clock,
                      limiter=limiter_for(world.driver))


def run_episode(tree: Any, robot: Any = None, seed: int = 0, episode: int = 0,
                goal: str | None = None, trace: str | None = None, gui: bool = False,
                perception: str | None = None, lighting: str = "easy", image_size: int | None = None,
                handle_signals: bool = False, world: Any = None, dry_run: bool = False,
                driver: str | None = None, observers: Iterable[RunObserver] = (),
                vocabulary: str | None = None) -> EpisodeResult:
    """Load, set up, run. With `handle_signals`, SIGINT/SIGTERM at any moment after the inputs
    are validated — set-up included — stop the driver and record WAIT_CLARIFY "interrupted";
    the trace's header is written before set-up, so even SIGKILL leaves a readable file.

    `tree`: a tree file or an already validated TreeSpec; `robot`: a profile name, file or
    RobotProfile. `perception` and `driver` name plug-ins (default: the profile's). `world`
    replaces the whole set-up (driver, perceiver, services). `observers` watch the run
    (bt_grasp.observers), after the trace writer if `trace` is given. `vocabulary`: the
    perceiver's vocabulary file (default: the profile's)."""
    spec = tree if isinstance(tree, TreeSpec) else _load(tree)
    profile = robot if isinstance(robot, RobotProfile) else load_profile(robot)
    chosen = perception or profile.perception
    about = {"robot": profile.name, "seed": seed, "episode": episode, "lighting": lighting}
    start = time.perf_counter()
    own_world = world is None
    writer: TraceWriter | None = None
    observers = list(observers)
    with interrupts(handle_signals):
        try:
            try:
                writer = TraceWriter(trace) if trace else None  # held before the header is written
                _early_header(writer, spec, goal, {**about, "perception": chosen})
                try:
                    if own_world:
                        world = build_world_for(profile, chosen, gui, lighting, image_size, dry_run, driver,
                                                      vocabulary)
                    elif callable(world):  # built here, so that its failure is this run's decision
                        world = world()
                    ctx, header = _prepare(spec, world, goal, trace, about)
                except (UserError, BackendUnavailable):
                    raise  # bad input or a missing extra: one line, exit 2
                except Exception as exc:
                    stop_driver(getattr(world, "driver", None))
                    return setup_failed(spec, profile.name, exc, _watchers(writer, observers),
                                        time.perf_counter() - start)
                runner = Runner(spec, ctx, header_extra=header, observers=_watchers(writer, observers))
            except Interrupted as exc:
                stop_driver(getattr(world, "driver", None))
                return _interrupted(spec, exc, _watchers(writer, observers), time.perf_counter() - start)
            return runner.run(handle_signals=handle_signals)
        finally:
            if own_world and world is not None:
                close_world(world)


def close_world(world: Any) -> None:
    """world.close() under a wall-clock limit; a failure is one warning line (the decision is
    recorded already)."""
    try:
        limit = call_limit(getattr(world, "profile", None), 1)
        limiter_for(world.driver).call(world.close, limit, "close()")
    except Interrupted:
        pass  # the decision is recorded; a second signal only cuts the clean-up short
    except Exception as exc:
        warn(f"the robot did not close cleanly: {describe(exc)}")


def setup_failed(spec: Any, robot: str, exc: BaseException, observers: list[RunObserver],
                 wall: float) -> EpisodeResult:
    """The result (and final trace line) of a run whose robot could not start."""
    result = EpisodeResult(decision=Decision.WAIT_CLARIFY, reason=f"setup failed: {describe(exc)}", ticks=0,
                           clock=0.0, wall=wall, actions=0, action_budget=spec.budgets.actions, counters={},
                           exit_code=EXIT_SETUP, robot=robot)
    finish(observers, result)
    return result


def _watchers(writer: TraceWriter | None, observers: list[RunObserver]) -> list[RunObserver]:
    """The trace writer first (a trace holds every record even if an observer fails), then the rest."""
    return ([writer] if writer is not None else []) + observers


def _load(tree: Any) -> TreeSpec:
    from bt_grasp.spec.loader import load_tree

    return load_tree(tree)


def build_world_for(profile: Any, perception: str | None, gui: bool, lighting: str, image_size: int | None,
                    dry_run: bool, driver: str | None = None, vocabulary: str | None = None) -> Any:
    """The run's world, built as every entry point builds it (bt_grasp.world.build_world)."""
    from bt_grasp.world import build_world

    return build_world(profile, perception=perception, gui=gui, lighting=lighting,
                       image_size=image_size, dry_run=dry_run, driver=driver, vocabulary=vocabulary)


def _prepare(spec: Any, world: Any, goal: str | None, trace: str | None,
             about: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Reset the scene and build the run's context; (context, trace header fields)."""
    wanted = goal_blackboard(goal, spec.goal, None).get("goal.object")
    driver = world.driver
    extra = {"target": wanted} if _accepts(driver.reset, "target") else {}  # a simulator places it in view
    limit = getattr(world.profile, "call_timeout_s", None) or SETUP_LIMIT_S
    limiter_for(driver).call(lambda: driver.reset(episode=about["episode"], seed=about["seed"], **extra),
                             limit, "reset()")
    task = world.driver.task() if isinstance(world.driver, TaskSource) else None
    ctx = build_context(spec, world, goal_blackboard(goal, spec.goal, task))
    if trace:
        ctx.services = replace(ctx.services, trace_dir=str(Path(trace).resolve().parent / f"{Path(trace).stem}_marks"))
    return ctx, {**about, "perception": getattr(world.perceiver, "name", type(world.perceiver).__name__)}


def _accepts(method: Any, keyword: str) -> bool:
    """Does `method` take `keyword` (by name or through **kwargs)?"""
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == keyword or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _early_header(writer: TraceWriter | None, spec: Any, goal: str | None, about: dict[str, Any]) -> None:
    """Write what is known before set-up; the runner's header refines it."""
    if writer is not None:
        writer.write(header_record(spec, episode_limits(spec, getattr(spec, "registry", None)),
                                   goal_blackboard(goal, spec.goal, None), about))


def _interrupted(spec: Any, exc: Interrupted, observers: list[RunObserver], wall: float) -> EpisodeResult:
    """The result (and final trace line) of a run stopped before its first tick."""
    result = EpisodeResult(decision=Decision.WAIT_CLARIFY, reason="interrupted", ticks=0, clock=0.0,
                           wall=wall, actions=0, action_budget=spec.budgets.actions, counters={},
                           exit_code=128 + exc.signum)
    finish(observers, result)
    return result
