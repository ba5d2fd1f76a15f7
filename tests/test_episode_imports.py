"""Running an episode imports no verifier code: the tick cap lives in bt_grasp/tick_budget.py,
and only a tree that does not give budgets.max_ticks needs the compositional summary its
structural bound comes from (verifier/summary_*.py), never the search, models or report."""

from __future__ import annotations

import json
import subprocess
import sys

from bt_grasp.testing.faults import DEMO_TREE

# Runs one episode on the fault plug-ins' fake arm and perceiver, then prints the verifier
# modules the process holds (a fresh process: this one imports the verifier for other tests).
PROGRAM = """
import json, sys
from bt_grasp.episode import run_episode
from bt_grasp.spec.loader import load_tree_text
from bt_grasp.resources import tree_path
tree = tree_path('clutter') if sys.argv[1] == 'clutter' else load_tree_text(sys.argv[1])
result = run_episode(tree, driver='bt_grasp.testing.faults:fault_driver', trace=sys.argv[2],
                     perception='bt_grasp.testing.faults:fault_perceiver')
print(json.dumps([result.decision.value, sorted(m for m in sys.modules if m.startswith('bt_grasp.verifier'))]))
"""
SUMMARY = {"bt_grasp.verifier", "bt_grasp.verifier.summary", "bt_grasp.verifier.summary.btcpp", "bt_grasp.verifier.summary.leaves",
           "bt_grasp.verifier.summary.loops", "bt_grasp.verifier.summary.node_sum",
           "bt_grasp.verifier.summary.rules", "bt_grasp.verifier.summary.tables"}


def _verifier_modules_after_a_run(tree: str, trace: str) -> tuple[str, set[str]]:
    out = subprocess.run([sys.executable, "-c", PROGRAM, tree, trace], capture_output=True, text=True,
                         timeout=120, check=True)
    decision, modules = json.loads(out.stdout.strip().splitlines()[-1])
    return decision, set(modules)


def test_a_shipped_tree_runs_without_importing_the_verifier(tmp_path):
    """clutter.yaml gives budgets.max_ticks: the run, its trace header included, imports nothing
    of bt_grasp.verifier."""
    decision, modules = _verifier_modules_after_a_run("clutter", str(tmp_path / "run.jsonl"))
    assert decision in ("FINALIZE", "WAIT_CLARIFY")
    assert modules == set()


def test_a_tree_without_a_tick_cap_imports_only_the_summary_its_cap_comes_from(tmp_path):
    """Without budgets.max_ticks the cap is the structural bound: the compositional summary is
    imported for it, and nothing of the verifier's search, models or report."""
    assert "max_ticks" not in DEMO_TREE
    decision, modules = _verifier_modules_after_a_run(DEMO_TREE, str(tmp_path / "run.jsonl"))
    assert decision in ("FINALIZE", "WAIT_CLARIFY")
    assert "bt_grasp.verifier.summary.rules" in modules
    assert modules <= SUMMARY, sorted(modules - SUMMARY)
