"""A check repeated beside a task: parallel(success_on_one) of an unbounded repeat of a cheap
leaf and a bounded task.

Specification pinned here:
- the first branch to finish ends a success_on_one parallel, so it lasts no longer than its
  shortest-lived branch, and the repeated check runs at most one call per tick of it;
- `verify` proves such a tree at once, with the true worst case reached by a witness run:
  repeat(lift) beside retry{3}(grasp -> evaluate_grasp) makes 1800 lifts in 1800 ticks
  (three 600-tick grasps that fail, a lift that ends in each tick), which a scripted run on the
  Runner reaches too;
- the symbolic search settles such a tree by itself (without the summary) in a few dozen states,
  not one per tick: a call of the repeated check whose outcome nothing reads ends at its first
  poll (its twin of one-tick calls makes as many calls or more, with the same run beside it),
  and a tick in which only the check runs again, with everything beside it still running, is
  an idle tick that costs one call; its exact bounds and witnesses are the reference search's,
  which tries every length of every call (short calls), for the check before or after the
  task, two checks, a check under a timeout, one whose outcome the task reads, and one under a
  reactive guard; a check that repeats forever once its task has ended is a loop whose
  counterexample replays on the Runner.
"""

from __future__ import annotations

import pytest
from bt_strategies import blocking_registry
from helpers import tree

import bt_grasp.verifier.core as core
from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.spec.loader import load_tree_text
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


def _search_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify_tree with the symbolic search only: the compositional summary never answers."""
    monkeypatch.setattr(core, "from_summary", lambda setup: None)


def test_the_search_alone_settles_a_repeated_check_in_a_state_per_event(monkeypatch):
    _search_alone(monkeypatch)
    result = core.verify_tree(tree(WATCH), engine="symbolic", replay_all=True)
    assert result.method == "symbolic" and result.proven, result.problem
    assert result.bounds["ticks"] == 1800 and result.bounds["primitive:lift"] == 1800
    assert result.unreached == [] and result.unreplayed == []
    assert result.states < 200  # a state per grasp event, not one per tick of the 1800


TASK = "{retry: {attempts: 3, child: {sequence: {children: [grasp, evaluate_grasp]}}}}"
BESIDE = {
    "check first": f"{{parallel: {{policy: success_on_one, children: [{{repeat: {{child: lift}}}}, {TASK}]}}}}",
    "check last": f"{{parallel: {{policy: success_on_one, children: [{TASK}, {{repeat: {{child: lift}}}}]}}}}",
    "two checks": ("{parallel: {policy: success_on_one, children: [{repeat: {child: lift}}, "
                   f"{{repeat: {{child: place}}}}, {TASK}]}}}}"),
    "under a timeout": ("{parallel: {policy: success_on_one, children: [{repeat: {child: lift}}, "
                        f"{{timeout: {{seconds: 0.12, child: {TASK}}}}}]}}}}"),
    "outcome read": ("{parallel: {policy: success_on_one, children: [{repeat: {child: lift}}, "
                     "{sequence: {children: [grasp, {label_is: {key: '{lift.outcome}', label: done}}]}}]}}"),
    "reactive guard": ("{reactive_sequence: {children: [{inverter: {child: {label_is: {key: '{grasp.label}', "
                       "label: SUCCESS}}}}, {parallel: {policy: success_on_one, children: "
                       f"[{{repeat: {{child: open_gripper}}}}, {TASK}]}}}}]}}}}"),
}


@pytest.mark.parametrize("cap", [2, 3])
@pytest.mark.parametrize("case", sorted(BESIDE))
def test_the_search_alone_agrees_with_the_reference_search(case, cap, monkeypatch):
    text = ("tree: beside\nbudgets: {actions: 6}\nroot:\n  selector:\n    children:\n"
            f"      - sequence: {{children: [{BESIDE[case]}, {{finalize: {{reason: done}}}}]}}\n"
            "      - wait_clarify: {reason: failed}\n")

    def spec():
        out = load_tree_text(text, "<beside>")
        out.registry = blocking_registry(cap=cap)  # short calls: the reference tries every length
        return out

    ref = core.verify_tree(spec(), engine="reference")
    _search_alone(monkeypatch)
    sym = core.verify_tree(spec(), engine="symbolic", replay_all=True)
    assert sym.complete and ref.complete
    assert sym.method == "symbolic" and sym.proven == ref.proven, (sym.problem, ref.problem)
    assert sym.bounds == ref.bounds
    assert set(sym.endings) == set(ref.endings)
    assert sym.unreached == []  # every bound reached by a witness replayed on the Runner


def test_a_check_repeated_after_its_task_ended_is_a_replayed_loop(monkeypatch):
    """success_on_all waits for the check, which repeats forever: a loop, whose counterexample
    replays on the Runner with the check's calls ending at their first poll, as searched."""
    check = "{force_success: {child: {repeat: {child: lift}}}}"
    body = "{parallel: {policy: success_on_all, children: [" + check + ", " + TASK + "]}}"
    text = ("tree: forever\nbudgets: {actions: 6}\nroot:\n  selector:\n    children:\n"
            "      - sequence: {children: [" + body + ", {finalize: {reason: done}}]}\n"
            "      - wait_clarify: {reason: failed}\n")
    _search_alone(monkeypatch)
    result = core.verify_tree(load_tree_text(text, "<forever>"), engine="symbolic")
    assert not result.proven and result.counterexample is not None
    assert result.problem.startswith("loop"), result.problem  # not an internal error
