"""The structural tick bound (bt_grasp/tick_budget.py) on trees whose longest run is known.

Specification pinned here:
- with no budgets.max_ticks, the cap in force is the structure's tick bound, and no run is longer:
  a run replayed on the Runner with every call at its max_ticks (the cap lifted) takes at most
  that many ticks, and on these trees exactly that many;
- a retry's RUNNING returns follow from the actions its failed attempts spent (the same
  actions, not more): `retry{4}(retry{2}(grasp, evaluate_grasp, finalize))` takes 1203 ticks
  with 2 actions as with 3 (two 600-tick grasps, one RUNNING return between them, three of the
  outer retry once the inner one has no attempts left);
- a repeat goes on at one tick per repetition after the action budget ran out inside it;
- `verify` proves such a tree with its ticks exact, the witness run reaching them;
- a tree with a timeout is verified against wall-clock timings (every uncertain deadline check
  answered both ways), and the result says so (`wall_clock`, printed by `verify`).
"""

from __future__ import annotations

import copy

import pytest
from helpers import tree

from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.testing.running import RunningOracle, longest
from bt_grasp.tick_budget import structural_ticks, tick_cap
from bt_grasp.verifier.summary.witness import play
from bt_grasp.verifier_api import verify_tree

REPEAT_OVER_RETRY = """
tree: repeat_over_retry
budgets: {actions: 2}
root:
  selector:
    children:
      - sequence:
          children:
            - repeat:
                times: 4
                child:
                  selector:
                    children:
                      - retry:
                          attempts: 2
                          child: {sequence: {children: [grasp, evaluate_grasp]}}
                      - force_success:
                          child: {label_is: {key: "{grasp.label}", label: EMPTY}}
            - finalize: {reason: done}
      - wait_clarify: {reason: failed}
"""


def retry_over_retry(actions: int) -> str:
    return f"""
tree: retry_over_retry
budgets: {{actions: {actions}}}
root:
  retry:
    attempts: 4
    child:
      retry:
        attempts: 2
        child: {{sequence: {{children: [grasp, evaluate_grasp, {{finalize: {{reason: done}}}}]}}}}
"""


def longest_run_ticks(spec, grasp_outcome: str) -> int:
    """Ticks of the run in which every grasp runs its max_ticks and answers `grasp_outcome`, on
    the Runner with the cap lifted far above the structural bound (so the run shows its length)."""
    lifted = copy.deepcopy(spec)
    lifted.budgets.max_ticks = int(structural_ticks(spec)) + 1000
    oracle = RunningOracle(ScriptedOracle({}, fallback=grasp_outcome), lifted, longest)
    return play(lifted, default_registry(), oracle).ticks


@pytest.mark.parametrize("actions", [2, 3])
def test_a_retry_over_a_spent_retry_is_bounded_by_its_true_longest_run(actions):
    """Two full-length grasps, then the outer retry's attempts one tick each: 1203 ticks."""
    spec = tree(retry_over_retry(actions))
    assert structural_ticks(spec) == 1203
    assert tick_cap(spec).value == 1203
    assert longest_run_ticks(spec, "infeasible") == 1203


def test_a_repeat_goes_on_after_the_budget_ran_out_inside_its_retry():
    """Two 600-tick grasps spend the budget by tick 1200; two more repetitions and the
    finalize take three ticks more."""
    spec = tree(REPEAT_OVER_RETRY)
    assert structural_ticks(spec) == 1203
    assert longest_run_ticks(spec, "EMPTY") == 1203


def test_verify_proves_the_repeat_over_retry_with_its_exact_tick_count():
    spec = tree(REPEAT_OVER_RETRY)
    result = verify_tree(spec)
    assert result.proven, result.counterexample
    assert result.bounds["ticks"] == 1203
    assert result.complete and "ticks" not in result.unreached


def _deadlines(inner: str) -> str:
    """A tree whose attempt `inner` runs under a 0.5 s timeout."""
    return f"""
tree: deadlines
budgets: {{actions: 12}}
root:
  selector:
    children:
      - sequence:
          children:
            - timeout:
                seconds: 0.5
                child: {inner}
            - finalize: {{reason: in time}}
      - wait_clarify: {{reason: late}}
"""


ATTEMPTS = "{retry: {attempts: 6, child: {sequence: {children: [grasp, evaluate_grasp]}}}}"


def test_a_tree_with_a_timeout_says_its_bounds_cover_wall_clock_timings():
    """Each uncertain deadline check is answered both ways: the output and the JSON say so."""
    result = verify_tree(tree(_deadlines(ATTEMPTS)))
    assert result.wall_clock and result.to_json()["wall_clock"] is True
    assert not verify_tree(tree(REPEAT_OVER_RETRY)).wall_clock


def test_with_several_timeouts_the_output_says_a_witness_may_mix_clocks():
    """Each timeout's checks are answered on their own: with two nested, a witness may pass the
    inner (later) deadline while the outer one is "not yet", which no clock does, and the output
    says such a bound is an upper bound; one timeout alone gets only the wall-clock note."""
    from bt_grasp.verifier.report import render

    nested = verify_tree(tree(_deadlines("{timeout: {seconds: 1.0, child: " + ATTEMPTS + "}}")))
    assert nested.proven and nested.timeouts == 2 and nested.wall_clock
    assert any(line.startswith("several timeouts") for line in render(nested, "deadlines"))
    single = verify_tree(tree(_deadlines(ATTEMPTS)))
    assert single.proven and single.timeouts == 1 and single.wall_clock
    assert not any(line.startswith("several timeouts") for line in render(single, "deadlines"))
