"""What `summarise()` (bt_grasp/verifier/summary/bounds.py) promises, on small trees whose worst case is known.

Specification pinned here (docs/semantics.md, "The verifier"):
- a retry's attempts are per episode: a loop above a retry does not multiply what it allows;
- every failed attempt that costs an action also costs one tick, so the action budget bounds the
  ticks of a retry chain (the nested k-block family of tools/perf/verify_scaling.py);
- a timeout bounds the ticks of what it wraps on the logical clock;
- the episode action budget and scoped `budget` decorators cap actions;
- a tree whose root can end without a Decision is not proven to decide, and the witness shows it;
- every witness replays (per-node scripted outcomes) to the cost it was recorded with, and that
  cost never exceeds the bound; on the chain it reaches the bound.
"""

from __future__ import annotations

import pytest
from bt_strategies import blocking_calls  # noqa: F401  (autouse: calls end in the tick that starts them)
from helpers import ROOT, tree

from bt_grasp.oracles import ScriptedOracle
from bt_grasp.spec.loader import load_tree, load_tree_text
from bt_grasp.testing.families import nested as chain
from bt_grasp.verifier.summary.bounds import summarise
from bt_grasp.verifier.summary.witness import play, run_costs

SHIPPED = sorted(p for p in (ROOT / "trees").rglob("*.yaml") if "subtrees" not in p.parts)



def replay(spec, choices):
    script: dict[str, list[str]] = {}
    for node, outcome in choices:
        script.setdefault(node, []).append(outcome)
    return play(spec, spec.registry, ScriptedOracle(script))


def test_a_repeat_around_a_retry_does_not_refill_its_attempts():
    spec = tree("""
        tree: t
        budgets: {actions: 10}
        root:
          selector:
            children:
              - repeat:
                  times: 3
                  child:
                    retry:
                      attempts: 2
                      child: grasp
              - wait_clarify
        """)
    summary = summarise(spec)
    assert summary.bounds["primitive:grasp"] == 2
    assert summary.bounds["actions"] == 2


def test_the_action_budget_bounds_the_ticks_of_a_retry_chain():
    for k, actions in ((2, 10), (3, 10), (16, 10), (16, 4)):
        spec = load_tree_text(chain(k), "<chain>")
        spec.budgets.actions = actions
        summary = summarise(spec)
        assert summary.bounds["actions"] == min(2 * k, actions)
        assert summary.bounds["ticks"] == min(k, actions) + 1
        assert summary.decides is True


@pytest.mark.parametrize("k", [2, 3])
def test_chain_witnesses_reach_the_bounds(k):
    """Within its budget the witness search reaches every bound."""
    spec = load_tree_text(chain(k), "<chain>")
    summary = summarise(spec)
    for key in ("actions", "ticks", "primitive:grasp"):
        res = replay(spec, summary.witnesses[key])
        assert run_costs(res)[key] == summary.bounds[key], key


def test_a_timeout_bounds_the_ticks_of_an_endless_repeat():
    spec = tree("""
        tree: t
        budgets: {max_ticks: 500}
        root:
          selector:
            children:
              - timeout:
                  seconds: 0.12
                  child:
                    repeat:
                      child: {label_is: {key: "{grasp.label}", label: SUCCESS}}
              - wait_clarify
        """)
    summary = summarise(spec)
    # the clock moves 0.05 s per tick: RUNNING at clocks 0, 0.05, 0.10 at most, then expired
    assert summary.bounds["ticks"] <= 5
    assert summary.decides is True


def test_scoped_budgets_cap_the_actions_inside():
    spec = tree("""
        tree: t
        budgets: {actions: 10}
        root:
          selector:
            children:
              - retry:
                  attempts: 5
                  child:
                    budget:
                      actions: 2
                      scope: pool
                      child: {sequence: {children: [grasp, push]}}
              - wait_clarify
        """)
    summary = summarise(spec)
    assert summary.bounds["actions"] == 2
    assert summary.bounds["primitive:grasp"] == 2


def test_a_root_that_can_end_without_a_decision_is_not_proven():
    spec = tree("""
        tree: t
        root:
          sequence:
            children: [grasp, finalize]
        """)
    summary = summarise(spec)
    assert summary.decides is not True
    assert "decides" in summary.reasons
    if summary.decides is False:
        assert "no decision" in replay(spec, summary.witnesses["decides"]).reason


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_trees_decide_and_their_witnesses_replay_within_the_bounds(path):
    spec = load_tree(str(path))
    summary = summarise(spec)
    assert summary.decides is True
    for key, choices in summary.witnesses.items():
        cost = run_costs(replay(spec, choices))[key]
        assert cost <= summary.bounds[key], key


NAV2 = ROOT / "tests" / "data" / "nav2"
# Every system recovery fails clearing, Spin and Wait and succeeds on BackUp: 6 / 6 / 6 / 13.
SYSTEM_RECOVERIES = {
    "ComputePathToPose": ["failure"] * 50, "ClearGlobalCostmap-Context": ["success"] * 50,
    "GoalUpdated": ["failure"] * 50, "ClearLocalCostmap-Subtree": ["failure"] * 50,
    "Spin": ["failure"] * 50, "Wait": ["failure"] * 50, "BackUp": ["success"] * 50,
}
# Every navigation attempt plans after a contextual clear, fails to follow the path after another
# one; every system recovery clears both costmaps (the round robin comes back to them): 26 clears.
CONTEXT_RECOVERIES = {
    "ComputePathToPose": ["failure", "success"] * 7, "ClearGlobalCostmap-Context": ["success"] * 7,
    "FollowPath": ["failure"] * 14, "ClearLocalCostmap-Context": ["success"] * 7,
    "GoalUpdated": ["failure"] * 6, "ClearLocalCostmap-Subtree": ["success"] * 6,
    "ClearGlobalCostmap-Subtree": ["success"] * 6, "Spin": ["failure"] * 6, "Wait": ["failure"] * 6,
    "BackUp": ["failure"] * 6,
}


@pytest.mark.parametrize("name", ["navigate_w_replanning_and_recovery",
                                  "navigate_w_replanning_and_recovery_round_robin"])
def test_nav2_bounds_with_a_synchronous_follow_path_are_reached(name):
    from bt_grasp.interop.btcpp_import import import_spec
    from bt_grasp.verifier.summary.bounds import summary_bounds

    spec = import_spec(NAV2 / f"{name}.xml", outcomes={"FollowPath": ["success", "failure"]})
    summary = summary_bounds(spec)
    assert summary.decides is True
    reached: dict[str, int] = {}
    for script in (SYSTEM_RECOVERIES, CONTEXT_RECOVERIES):
        res = play(spec, spec.registry, ScriptedOracle(script))
        for key, value in run_costs(res).items():
            reached[key] = max(reached.get(key, 0), value)
    assert reached["primitive:btcpp.Spin"] == reached["primitive:btcpp.BackUp"] == 6
    assert reached["primitive:btcpp.ClearEntireCostmap"] == 26
    for key, bound in summary.bounds.items():
        assert reached.get(key, 0) == bound, key
