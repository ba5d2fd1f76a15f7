"""Shared test helpers: load a tree from text and run it against an oracle (no robot)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.runner import EpisodeResult, Runner
from bt_grasp.verifier.tick_cap import episode_limits

ROOT = Path(__file__).resolve().parent.parent


def tree(text: str, file: str = "<test>.yaml"):
    from bt_grasp.spec.loader import load_tree_text

    return load_tree_text(textwrap.dedent(text), file=file, base_dir=ROOT / "trees")


def run_oracle(spec, oracle, goal: str = "red mug", trace: str | None = None) -> EpisodeResult:
    registry = getattr(spec, "registry", None) or default_registry()
    ctx = RunContext(registry=registry, limits=episode_limits(spec, registry), oracle=oracle,
                     blackboard=Blackboard({"goal.object": goal}))
    return Runner(spec, ctx, trace_path=trace).run()


ENDLESS = """tree: endless
budgets: {max_ticks: 100000}
root:
  repeat:
    child:
      force_success:
        child:
          open_gripper: {id: open}
"""


def start_endless_run(tmp_path: Path, ready: Callable[[str], bool], timeout: float,
                      what: str) -> tuple[subprocess.Popen, Path]:
    """`bt-grasp run` of a tree that never decides on the arm, returned once `ready(trace text)`."""
    path = tmp_path / "endless.yaml"
    path.write_text(ENDLESS)
    trace = tmp_path / "run.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "bt_grasp.cli", "run", str(path), "--trace", str(trace),
                             "--image-size", "256"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if trace.exists() and ready(trace.read_text()):
            return proc, trace
        if proc.poll() is not None:
            pytest.fail(f"run ended early: {proc.stderr.read()}")
        time.sleep(0.01)
    proc.kill()
    pytest.fail(f"{what} in time")
