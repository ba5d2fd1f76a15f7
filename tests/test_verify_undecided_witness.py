"""A run past the tick cap, found by the structure's witness search, settles a slow search.

Specification pinned here:
- a push ticked anew every tick beside a grasp (a reactive selector [guard, push, grasp]) makes
  every tick an event of its own, so the search meets each tick of the grasp as a state; where
  the search does not settle the tree within the work it is given after the summary has
  answered, a witness run of the summary that ends on the tick cap, replayed on the Runner,
  is the answer: a counterexample (method "witness"), settled, not "incomplete";
- its run is real: replayed with a scripted oracle on the Runner it ends on the tick cap;
- it does not say what the longest run is (only the search knows): `upper=False`
  (`verify --exact`) searches on and answers with the longest run, counted by hand: each push
  runs 400 ticks and fails, the grasp starts in the same tick and is halted by the next push,
  two actions per 400 ticks, so 20 actions last 4000 ticks and the 21st ends the run at 4001;
- on the logical clock (`verify`'s default), such a run that also replays past the cap with the
  Runner's logical clock deciding each deadline is the answer there too, without the reference
  search the logical clock otherwise takes;
- a tree the search settles within that work keeps the search's exact answer;
- a witness that decides when replayed is never taken for a counterexample.
"""

from __future__ import annotations

from helpers import tree

from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import ScriptedOracle, scripts_of
from bt_grasp.verifier.replay import Setup
from bt_grasp.verifier.summary.proof import undecided
from bt_grasp.verifier_api import verify_tree

PUSH_BESIDE_GRASP = """
tree: push_beside_grasp
budgets: {actions: 20}
root:
  selector:
    children:
      - sequence:
          children:
            - parallel:
                policy: success_on_one
                children:
                  - repeat: {child: lift}
                  - retry:
                      attempts: 3
                      child:
                        reactive_selector:
                          children:
                            - {label_is: {key: "{grasp.outcome}", label: done}}
                            - {push: {id: push}}
                            - {grasp: {id: grasp}}
            - finalize: {reason: done}
      - wait_clarify: {reason: failed}
"""

WATCH_CAPPED = """
tree: watch_capped
budgets: {actions: 20, max_ticks: 50}
root:
  selector:
    children:
      - sequence:
          children:
            - parallel:
                policy: success_on_one
                children:
                  - repeat: {child: lift}
                  - retry:
                      attempts: 3
                      child: {sequence: {children: [{grasp: {id: grasp}}, evaluate_grasp]}}
            - finalize: {reason: done}
      - wait_clarify: {reason: failed}
"""


def _replayed(spec, steps, clock: str = "wall"):
    oracle = ScriptedOracle(scripts_of([(s["node"], s["outcome"]) for s in steps]))
    return Setup(spec, default_registry(), None, clock=clock).replay(oracle)


def test_a_witness_run_past_the_cap_settles_a_search_that_would_take_long():
    spec = tree(PUSH_BESIDE_GRASP)
    result = verify_tree(spec)
    assert result.complete and not result.proven
    assert result.method == "witness"
    assert result.problem.startswith("tick cap (1000 ticks) reached by a run")
    res = _replayed(spec, result.counterexample)
    assert res.reason.startswith("tick cap") and res.ticks == 1000


def test_on_the_logical_clock_a_run_past_the_cap_on_that_clock_is_the_answer():
    spec = tree(PUSH_BESIDE_GRASP.replace("- {grasp: {id: grasp}}",
                                          "- {timeout: {seconds: 8.0, child: {grasp: {id: grasp}}}}"))
    result = verify_tree(spec, clock="logical")
    assert result.complete and result.method == "witness" and result.clock == "logical"
    res = _replayed(spec, result.counterexample, clock="logical")
    assert res.reason.startswith("tick cap")


def test_verify_exact_searches_on_to_the_longest_run():
    result = verify_tree(tree(PUSH_BESIDE_GRASP), upper=False)
    assert result.method == "symbolic" and result.counterexample is not None
    assert "the longest run takes 4001 ticks" in result.problem


def test_a_tree_the_search_settles_soon_keeps_its_exact_answer():
    result = verify_tree(tree(WATCH_CAPPED))
    assert result.method == "symbolic" and result.counterexample is not None
    # three 600-tick grasps that fail, a lift in each tick beside them
    assert "the longest run takes 1800 ticks" in result.problem


def test_a_witness_that_decides_when_replayed_is_no_counterexample():
    spec = tree(WATCH_CAPPED)
    setup = Setup(spec, default_registry(), None)
    deciding = [("lift_1#running", "ends"), ("lift_1", "done"), ("grasp#running", "ends"),
                ("grasp", "done"), ("evaluate_grasp_1", "SUCCESS")]  # done in one tick
    assert setup.replay(ScriptedOracle(scripts_of(deciding))).reason == "done"
    assert undecided(setup, deciding) is None
    assert undecided(setup, None) is None
