"""Shared test helpers: load a tree from text and run it against an oracle (no robot)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.registry import default_registry
from bt_grasp.runner import EpisodeResult, Runner

ROOT = Path(__file__).resolve().parent.parent


def tree(text: str, file: str = "<test>.yaml"):
    from bt_grasp.spec import load_tree_text

    return load_tree_text(textwrap.dedent(text), file=file, base_dir=ROOT / "trees")


def run_oracle(spec, oracle, goal: str = "red mug", trace: str | None = None) -> EpisodeResult:
    b = spec.budgets
    ctx = RunContext(registry=getattr(spec, "registry", None) or default_registry(),
                     limits=EpisodeLimits(b.actions, b.perception_streak, b.max_ticks), oracle=oracle,
                     blackboard=Blackboard({"goal.object": goal}))
    return Runner(spec, ctx, trace_path=trace).run()
