"""One episode end to end: profile -> world (driver, perceiver, services) -> runner -> result."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.outcomes import Decision
from bt_grasp.profile import load_profile
from bt_grasp.registry import default_registry
from bt_grasp.runner import (
    EpisodeResult,
    Interrupted,
    Runner,
    goal_object,
    interrupts,
    stop_driver,
    versions,
    write_final,
)
from bt_grasp.structure import structure
from bt_grasp.trace import TraceWriter, jsonable


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


def build_context(spec: Any, world: Any, goal: dict[str, Any]) -> RunContext:
    b = spec.budgets
    return RunContext(registry=getattr(spec, "registry", None) or default_registry(),
                      limits=EpisodeLimits(b.actions, b.perception_streak, b.max_ticks),
                      driver=world.driver, perceiver=world.perceiver, profile=world.profile,
                      blackboard=Blackboard(goal), services=dict(world.services))


def run_episode(tree: str, robot: str | None = None, seed: int = 0, episode: int = 0,
                goal: str | None = None, trace: str | None = None, gui: bool = False,
                perception: str = "geometric", lighting: str = "easy", image_size: int | None = None,
                handle_signals: bool = False, world: Any = None, dry_run: bool = False,
                on_record: Any = None) -> EpisodeResult:
    """Load, set up, run. With `handle_signals`, SIGINT/SIGTERM at any moment after the inputs
    are validated — set-up included — stop the driver and record WAIT_CLARIFY "interrupted";
    the trace's header is written before set-up, so even SIGKILL leaves a readable file.
    `on_record` receives every trace record as it is made (the live view)."""
    from bt_grasp.spec import load_tree

    spec = load_tree(tree)
    profile = load_profile(robot)
    about = {"robot": profile.name, "seed": seed, "episode": episode, "lighting": lighting}
    start = time.perf_counter()
    own_world = world is None
    writer: TraceWriter | None = None
    with interrupts(handle_signals):
        try:
            try:
                writer = TraceWriter(trace) if trace else None  # held before the header is written
                _early_header(writer, spec, goal, {**about, "perception": perception})
                if own_world:
                    world = build_world_for(profile, perception, gui, lighting, image_size, dry_run)
                ctx, header = _prepare(spec, world, goal, trace, about)
                runner = Runner(spec, ctx, header_extra=header, trace=writer, on_record=on_record)
            except Interrupted as exc:
                stop_driver(getattr(world, "driver", None))
                return _interrupted(spec, exc, writer, time.perf_counter() - start)
            return runner.run(handle_signals=handle_signals)
        finally:
            if own_world and world is not None:
                try:
                    world.close()
                except Interrupted:
                    pass  # the decision is recorded; a second signal only cuts the clean-up short


def build_world_for(profile: Any, perception: str, gui: bool, lighting: str, image_size: int | None,
                    dry_run: bool) -> Any:
    from bt_grasp.world import build_world

    return build_world(profile, perception=perception, gui=gui, lighting=lighting,
                       image_size=image_size, dry_run=dry_run)


def _prepare(spec: Any, world: Any, goal: str | None, trace: str | None,
             about: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Reset the scene and build the run's context; (context, trace header fields)."""
    wanted = goal_blackboard(goal, spec.goal, None).get("goal.object")
    world.driver.reset(episode=about["episode"], seed=about["seed"], target=wanted)
    task = world.driver.task() if hasattr(world.driver, "task") else None
    ctx = build_context(spec, world, goal_blackboard(goal, spec.goal, task))
    if trace:
        ctx.services["trace_dir"] = str(Path(trace).resolve().parent / f"{Path(trace).stem}_marks")
    return ctx, {**about, "perception": world.perceiver.name}


def _early_header(writer: TraceWriter | None, spec: Any, goal: str | None, about: dict[str, Any]) -> None:
    """Write what is known before set-up; the runner's header refines it."""
    if writer is None:
        return
    b = spec.budgets
    writer.write({"type": "header", "tree": spec.name, "file": getattr(spec, "file", None),
                  "structure": structure(spec.root), "source": getattr(spec, "source", None),
                  "budgets": {"actions": b.actions, "perception_streak": b.perception_streak,
                              "max_ticks": b.max_ticks},
                  "goal": {k[5:]: v for k, v in goal_blackboard(goal, spec.goal, None).items()},
                  "versions": versions(), **jsonable(about)})


def _interrupted(spec: Any, exc: Interrupted, writer: TraceWriter | None, wall: float) -> EpisodeResult:
    """The result (and final trace line) of a run stopped before its first tick."""
    result = EpisodeResult(decision=Decision.WAIT_CLARIFY, reason="interrupted", ticks=0, clock=0.0,
                           wall=wall, actions=0, action_budget=spec.budgets.actions, counters={},
                           exit_code=128 + exc.signum)
    if writer is not None:
        write_final(writer, result)
    return result
