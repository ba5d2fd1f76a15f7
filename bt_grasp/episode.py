"""One episode end to end: profile -> world (driver, perceiver, services) -> runner -> result."""

from __future__ import annotations

from typing import Any

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.profile import load_profile
from bt_grasp.registry import default_registry
from bt_grasp.runner import EpisodeResult, Runner, goal_object


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
                perception: str = "sim", lighting: str = "easy", image_size: int | None = None,
                handle_signals: bool = False, world: Any = None, dry_run: bool = False) -> EpisodeResult:
    from bt_grasp.spec import load_tree
    from bt_grasp.world import build_world

    spec = load_tree(tree)
    profile = load_profile(robot)
    own_world = world is None
    if own_world:
        world = build_world(profile, perception=perception, gui=gui, lighting=lighting,
                            image_size=image_size, dry_run=dry_run)
    try:
        wanted = goal_blackboard(goal, spec.goal, None).get("goal.object")
        world.driver.reset(episode=episode, seed=seed, target=wanted)
        task = world.driver.task() if hasattr(world.driver, "task") else None
        ctx = build_context(spec, world, goal_blackboard(goal, spec.goal, task))
        if trace:
            from pathlib import Path

            ctx.services["trace_dir"] = str(Path(trace).resolve().parent / f"{Path(trace).stem}_marks")
        runner = Runner(spec, ctx, trace_path=trace,
                        header_extra={"robot": profile.name, "seed": seed, "episode": episode,
                                      "perception": world.perceiver.name, "lighting": lighting})
        return runner.run(handle_signals=handle_signals)
    finally:
        if own_world:
            world.close()
