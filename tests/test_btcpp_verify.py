"""What `bt-grasp verify` says about imported Nav2-style trees (tests/data/btcpp fixtures).

The simple recovery fallback is bounded, and the bound shows the refill: the inner RecoveryNode
allows one retry, but every outer retry re-enters it with a full budget. The replanning tree
lets FollowPath run while the planner is re-ticked, and the verifier finds the run that loops
forever, with the contextual recovery budgets refilled on each pass.
"""

from __future__ import annotations

import pytest
from helpers import BTCPP_DATA, spec_of

from bt_grasp.interop.btcpp_import import import_btcpp
from bt_grasp.interop.common import interop_registry

verify = pytest.importorskip("bt_grasp.verifier_api")


def _verify(name: str):
    spec = spec_of(import_btcpp(BTCPP_DATA / name))
    return verify.verify_tree(spec, interop_registry())


def test_simple_recovery_fallback_is_bounded_and_the_bound_shows_the_refill():
    res = _verify("nav2_simple_recovery_fallback.xml")
    assert res.proven and res.counterexample is None
    # outer: 2 retries -> 3 activations of the inner RecoveryNode, each 1 retry -> 2 FollowPaths
    assert res.bounds["primitive:btcpp.FollowPath"] == (2 + 1) * (1 + 1)
    assert res.bounds["primitive:btcpp.ClearEntireCostmap"] == 3   # 1 per inner activation
    # the round robin hands out one system recovery per outer retry
    assert res.bounds["primitive:btcpp.Spin"] == 2


def test_replanning_tree_has_a_counterexample_where_recovery_budgets_refill():
    res = _verify("nav2_navigate_replanning_recovery.xml")
    assert not res.proven
    assert res.counterexample, res.problem
    assert "loop" in (res.problem or "")
    steps = [(c["node"], c["outcome"]) for c in res.counterexample]
    # A contextual recovery has number_of_retries=1, yet it runs again and again: the outer
    # RecoveryNode halts (and so refills) it on every system recovery.
    for context in ("ClearLocalCostmap-Context", "ClearGlobalCostmap-Context"):
        if sum(s[0] == context for s in steps) > 1:
            break
    else:
        raise AssertionError(f"no contextual recovery runs twice: {steps[:20]}")
    start, period = res.loop
    assert len(steps) >= start + 2 * period


def test_reference_search_finds_the_loop_where_followpath_stays_running():
    spec = spec_of(import_btcpp(BTCPP_DATA / "nav2_navigate_replanning_recovery.xml"))
    res = verify.verify_tree(spec, interop_registry(), engine="reference")
    steps = [(c["node"], c["outcome"]) for c in res.counterexample]
    assert sum(s[0] == "ClearLocalCostmap-Context" for s in steps) > 1
    # ... and the run ends with the planner re-ticked while FollowPath stays RUNNING.
    assert ("FollowPath", "running") in steps[-3:]


def test_bt_grasp_retry_over_opaque_leaves_keeps_its_static_budget():
    """The same opaque Nav2 actions under a bt_grasp retry: the count is per episode."""
    yaml_text = """
tree: bounded
root:
  selector:
    children:
      - sequence:
          children:
            - retry:
                attempts: 3
                scope: follow
                child:
                  selector:
                    children:
                      - opaque_action: {id: FollowPath, btcpp_id: FollowPath}
                      - sequence:
                          children:
                            - opaque_action: {id: ClearLocal, btcpp_id: ClearEntireCostmap}
                            - force_failure: {child: {opaque_action: {id: FollowAgain, btcpp_id: FollowPath}}}
            - finalize
      - wait_clarify
"""
    res = verify.verify_tree(spec_of(yaml_text), interop_registry())
    assert res.proven
    assert res.bounds["primitive:btcpp.FollowPath"] == 6  # 3 attempts x 2 calls, never refilled
