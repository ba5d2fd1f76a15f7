"""Which labels the merge key keeps: a label is dropped only when no reader can see its value.

- a selector child that writes the label whether it succeeds or fails hides the old value from
  every later child: runs that differ only in it merge;
- a manipulation leaf under a spent `budget` fails without writing: its label stays in the key;
- once the writer has run, a reader later in the same sequence sees the value: it stays;
- the Watchdog with `semantic: true` writes `<label>.semantic` on every outcome, which is why
  that key counts as written by it;
- a leaf whose label nobody reads is explored with one outcome per status, one whose label is
  read with every outcome.
"""

from __future__ import annotations

import pytest
from bt_strategies import blocking_calls  # noqa: F401  (autouse: calls end in the tick that starts them)
from helpers import run_oracle, tree

from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.tick_budget import episode_limits
from bt_grasp.verifier.compiled.machine import Machine, distinct_outcomes
from bt_grasp.verifier.core import verify_tree as _verify_tree
from bt_grasp.verifier.static import keys_read
from bt_grasp.verifier.symbolic.machine import ModelMachine


def verify_tree(spec, *args, **kwargs):
    """This file pins the reference search (the compiled tree itself)."""
    return _verify_tree(spec, *args, engine="reference", **kwargs)


def _board_at(spec, outcomes: list[str]) -> dict:
    """The board part of the merge key at the choice reached after `outcomes` (tick 1)."""
    reg = default_registry()
    m = Machine(spec, reg, episode_limits(spec),
                {"goal.object": "mug"}, keys_read(spec, reg))
    point = m.advance(m.start().snap, [])
    script: list[int] = []
    for outcome in outcomes:
        script.append(point.alphabet.index(outcome))
        point = m.advance(point.snap, list(script))
    assert point.kind == "choice"
    return dict(point.key[1])


def _guarded(second: str) -> str:
    return f"""
        tree: guarded
        budgets: {{actions: 4}}
        root:
          selector:
            children:
              - sequence:
                  children:
                    - force_success: {{child: {{grasp: {{id: first, outcome: "{{x}}"}}}}}}
                    - selector:
                        children:
                          - {second}
                          - switch:
                              "on": "{{x}}"
                              cases: {{done: {{finalize: {{reason: "done"}}}}}}
                              default: {{wait_clarify: {{reason: "other"}}}}
                    - finalize: {{reason: "second done"}}
              - wait_clarify: {{reason: "failed"}}
    """


def test_a_label_rewritten_by_a_failing_selector_child_is_not_in_the_key():
    spec = tree(_guarded('grasp: {id: second, outcome: "{x}"}'))
    done, fault = _board_at(spec, ["done"]), _board_at(spec, ["fault"])
    assert "x" not in done and done == fault
    res = verify_tree(spec)
    assert res.proven and res.bounds["primitive:grasp"] == 2


def test_a_manipulation_under_a_spent_budget_does_not_hide_the_label():
    spec = tree(_guarded('budget: {actions: 1, child: {grasp: {id: second, outcome: "{x}"}}}'))
    assert _board_at(spec, ["done"])["x"] == "done"
    assert _board_at(spec, ["fault"])["x"] == "fault"
    assert verify_tree(spec).proven


def test_a_label_stays_in_the_key_once_its_writer_has_run():
    spec = tree("""
        tree: read_later
        root:
          selector:
            children:
              - sequence:
                  children:
                    - force_success: {child: {lift: {id: first, outcome: "{x}"}}}
                    - force_success: {child: {lift: {id: middle}}}
                    - switch:
                        "on": "{x}"
                        cases: {done: {finalize: {reason: "done"}}}
                        default: {wait_clarify: {reason: "other"}}
              - wait_clarify: {reason: "failed"}
    """)
    at_middle = {_board_at(spec, [o]).get("x") for o in ("done", "infeasible", "fault")}
    assert at_middle == {"done", "infeasible", "fault"}


@pytest.mark.parametrize("label", ["SUCCESS", "EMPTY", "SLIP", "STALL"])
@pytest.mark.parametrize("semantic", ["ok", "mismatch", "unknown"])
def test_the_semantic_watchdog_writes_its_semantic_key_on_every_outcome(label, semantic):
    spec = tree("""
        tree: judged
        root:
          selector:
            children:
              - sequence:
                  children:
                    - grasp: {id: g}
                    - force_success: {child: {evaluate_grasp: {id: w, semantic: true}}}
                    - label_is: {key: "{grasp.label.semantic}", label: "n/a"}
                    - finalize: {reason: "not a success"}
              - switch:
                  "on": "{grasp.label.semantic}"
                  cases: {ok: {finalize: {reason: "ok"}}, mismatch: {finalize: {reason: "mismatch"}}}
                  default: {wait_clarify: {reason: "unknown"}}
    """)
    res = run_oracle(spec, ScriptedOracle({"g": ["done"], "w": [label], "w#semantic": [semantic]}))
    expected = "not a success" if label != "SUCCESS" else semantic
    assert res.reason == expected


def test_only_a_read_label_makes_every_outcome_worth_exploring():
    spec = tree(_guarded('lift: {id: second}'))
    reg = default_registry()
    m = Machine(spec, reg, episode_limits(spec),
                {"goal.object": "mug"}, keys_read(spec, reg))
    outcomes = distinct_outcomes(m.state.nodes, keys_read(spec, reg))
    assert "first" not in outcomes  # writes {x}, which the switch reads
    assert outcomes["second"] == ("done", "infeasible")  # lift.outcome is read by nobody
    res = verify_tree(spec)
    assert res.proven and res.bounds["primitive:lift"] == 1 and res.bounds["primitive:grasp"] == 1


_LAST_LOOK = """
tree: last_look
budgets: {{actions: 3}}
root:
  selector:
    children:
      - sequence:
          children:
            - force_success: {{child: {{locate_object: {{id: look, target: "{{goal.object}}", outcome: "{{seen}}"}}}}}}
            - retry: {{attempts: 2, child: {{sequence: {{children: [grasp, evaluate_grasp]}}}}}}
            - finalize: {{reason: done}}
      - sequence:
          children:
            - {reader}
            - wait_clarify: {{reason: "not found"}}
      - wait_clarify: {{reason: "gave up"}}
"""


_CASE = "{force_success: {child: open_gripper}}"
_SEES_ALL = ('switch: {"on": "{seen}", cases: {'
             + ", ".join(f"{o}: {_CASE}" for o in ("found", "occluded", "not_found", "fault")) + "}}")


@pytest.mark.parametrize("reader", [
    'label_is: {key: "{seen}", label: not_found}',
    'switch: {"on": "{seen}", cases: {not_found: ' + _CASE + "}}",
])
def test_a_label_only_conditions_and_switches_still_read_is_kept_as_far_as_they_tell_it_apart(reader):
    """After the look (whatever it answered, the task goes on), only a reader comparing `{seen}`
    with `not_found` can see the label: the other outcomes answer it alike, so their runs merge (fewer states than when a switch has a
    case for every outcome), with the same endings and bounds as the compiled tree's search."""
    merged = _verify_tree(tree(_LAST_LOOK.format(reader=reader)), engine="symbolic")
    whole = _verify_tree(tree(_LAST_LOOK.format(reader=_SEES_ALL)), engine="symbolic")
    reference = verify_tree(tree(_LAST_LOOK.format(reader=reader)))
    assert merged.proven and reference.proven
    assert merged.bounds == reference.bounds
    assert set(merged.endings) == set(reference.endings)
    assert merged.states < whole.states
    # the point after the look (the first grasp) as the search keys it, per answer of the look
    spec, reg = tree(_LAST_LOOK.format(reader=reader)), default_registry()
    machine = ModelMachine(spec, reg, episode_limits(spec), {"goal.object": "mug"}, keys_read(spec, reg))
    look = machine.advance(machine.start().snap, [])
    assert look.node_id == "look"
    keys = {o: machine.branch(look, look.alphabet.index(o)).key for o in ("found", "occluded", "not_found")}
    assert keys["found"] == keys["occluded"] != keys["not_found"]
