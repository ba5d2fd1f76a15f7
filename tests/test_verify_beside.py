"""A check repeated beside a task: parallel(success_on_one) of an unbounded repeat of a cheap
leaf and a bounded task.

Specification pinned here:
- the first branch to finish ends a success_on_one parallel, so it lasts no longer than its
  shortest-lived branch, and the repeated check runs at most one call per tick of it;
- `verify` proves such a tree at once, with the true worst case reached by a witness run:
  repeat(lift) beside retry{3}(grasp -> evaluate_grasp) makes 1800 lifts in 1800 ticks
  (three 600-tick grasps that fail, a lift that ends in each tick), which a scripted run on the
  Runner reaches too.
"""

from __future__ import annotations

from helpers import tree

from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.testing.running import RunningOracle, longest
from bt_grasp.verifier.summary.witness import play
from bt_grasp.verifier_api import verify_tree

WATCH = """
tree: watch
budgets: {actions: 20}
root:
  selector:
    children:
      - sequence:
          children:
            - parallel:
                policy: success_on_one
                children:
                  - repeat: {child: {lift: {id: lift}}}
                  - retry:
                      attempts: 3
                      child: {sequence: {children: [{grasp: {id: grasp}}, evaluate_grasp]}}
            - finalize: {reason: done}
      - wait_clarify: {reason: failed}
"""


def test_a_repeated_check_beside_a_task_is_proven_with_its_true_worst_case():
    result = verify_tree(tree(WATCH))
    assert result.proven, result.problem
    assert result.bounds["ticks"] == 1800 and result.bounds["primitive:lift"] == 1800
    assert result.unreached == []  # each reached by a witness replayed on the Runner


def test_a_scripted_run_reaches_the_worst_case_on_the_runner():
    spec = tree(WATCH)
    lengths = RunningOracle(ScriptedOracle({"grasp": ["infeasible"] * 3}, fallback="done"), spec,
                            longest, by_leaf=lambda leaf, top: top if leaf == "grasp" else 1)
    res = play(spec, default_registry(), lengths)
    assert res.ticks == 1800
    assert res.counters["primitive_calls"]["lift"] == 1800
