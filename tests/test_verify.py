"""The verifier: proofs, bounds, counterexamples and the CLI contract of `bt-grasp verify`."""

from __future__ import annotations

import json

from bt_strategies import enumerate_runs
from helpers import ROOT, tree

from bt_grasp.cli import main
from bt_grasp.spec.loader import load_tree
from bt_grasp.verifier_api import verify_tree

SMALL = """
    tree: small
    budgets: {actions: 3, max_ticks: 5000}
    root:
      selector:
        children:
          - retry:
              attempts: 2
              child:
                sequence:
                  children:
                    - grasp: {id: g}
                    - force_success: {child: {evaluate_grasp: {id: w}}}
                    - switch:
                        "on": "{grasp.label}"
                        cases:
                          SUCCESS: {finalize: {reason: held}}
                          EMPTY: {force_failure: {child: {open_gripper: {id: o}}}}
                        default: {wait_clarify: {reason: "not empty, not held"}}
          - wait_clarify: {reason: spent}
"""


def test_shipped_clutter_tree_is_proven_with_bounds_within_its_budgets():
    spec = load_tree(ROOT / "trees" / "clutter.yaml")
    res = verify_tree(spec)
    assert res.proven and res.counterexample is None
    assert res.bounds["actions"] <= spec.budgets.actions
    for key, static in res.static_bounds.items():
        if static is not None and key in res.bounds:
            assert res.bounds[key] <= static, key


def test_bounds_are_sound_and_tight_against_every_real_run_of_a_small_tree():
    spec = tree(SMALL)
    res = verify_tree(spec)
    assert res.proven
    worst = {"ticks": 0, "actions": 0, "primitive:grasp": 0, "primitive:open_gripper": 0}
    # every outcome sequence, with every call ending in the tick that starts it and with every
    # call running its maximum of ticks
    shortest, longest = (enumerate_runs(spec, 10_000, lengths) for lengths in (lambda top: 1, lambda top: top))
    assert shortest is not None and longest is not None, "the small tree has fewer than 10,000 runs"
    for run, _ in shortest + longest:
        assert run.decision is not None
        worst["ticks"] = max(worst["ticks"], run.ticks)
        worst["actions"] = max(worst["actions"], run.actions)
        for name in ("grasp", "open_gripper"):
            worst[f"primitive:{name}"] = max(worst[f"primitive:{name}"],
                                             run.counters["primitive_calls"].get(name, 0))
    for key, value in worst.items():
        assert value <= res.bounds[key], key      # sound
        assert value == res.bounds[key], key      # tight: some run reaches it


def test_unbounded_repeat_around_a_failing_primitive_is_a_counterexample():
    spec = tree("""
        tree: loop
        budgets: {max_ticks: 1000}  # room for several 300-tick lifts
        root:
          repeat:
            child:
              force_success:
                child:
                  lift: {id: up}
    """)
    res = verify_tree(spec)
    assert not res.proven
    assert res.counterexample and all(step["node"].split("#")[0] == "up" for step in res.counterexample)
    assert "loop" in res.problem


def test_a_root_that_can_finish_without_a_decision_is_a_counterexample():
    spec = tree("""
        tree: nodecision
        root:
          sequence:
            children:
              - grasp: {id: g}
              - finalize: {reason: done}
    """)
    res = verify_tree(spec)
    assert not res.proven
    assert res.counterexample == [{"node": "g", "outcome": "infeasible"}] or \
        res.counterexample[-1]["node"] == "g"
    assert "without a decision" in res.problem


def test_unrouted_switch_labels_are_reported():
    res = verify_tree(tree(SMALL.replace("default: {wait_clarify: {reason: \"not empty, not held\"}}", "")))
    assert {"switch_1: SLIP", "switch_1: TIMEOUT"} <= set(res.unrouted)


def test_verify_json_has_the_documented_stable_keys(capsys):
    code = main(["verify", str(ROOT / "trees" / "clutter.yaml"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"proven", "bounds", "runs_explored", "counterexample"} <= set(out)
    assert out["proven"] is True and out["counterexample"] is None
    assert isinstance(out["runs_explored"], int) and out["runs_explored"] > 0
    assert {"actions", "ticks", "primitive:grasp"} <= set(out["bounds"])


def test_verify_cli_prints_counterexample_and_exits_1(tmp_path, capsys):
    path = tmp_path / "loop.yaml"
    path.write_text("tree: loop\nbudgets: {max_ticks: 2000}\nroot:\n  repeat:\n    child:\n"
                    "      force_success: {child: {lift: {id: up}}}\n")
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "COUNTEREXAMPLE" in out and "up -> " in out and "repeat until the tick cap" in out
