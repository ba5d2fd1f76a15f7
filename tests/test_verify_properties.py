"""Properties in the tree file (`properties:`), proven or refuted over every run by `verify`.

Specification pinned here:
- clutter.yaml states its safety properties and `verify` proves them (HOLDS);
- a copy of clutter.yaml whose delivery check no longer gates FINALIZE shows a violation, with a
  witness that, replayed on the Runner, FINALIZEs "target in basket" after a failed check;
- on random trees, a property a run of the real Runner violates is reported VIOLATED, and every
  VIOLATED comes with a witness the Runner replays to a violation (so HOLDS is exact);
- merged states keep their pasts apart: a monitor state is part of the product's key;
- a bad `properties:` block is one `file:line:col` error.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from bt_strategies import enumerate_runs, load_text, profile_settings, tree_texts
from helpers import ROOT, tree
from hypothesis import assume, given
from hypothesis import strategies as st

from bt_grasp.errors import UserError
from bt_grasp.spec.loader import load_tree
from bt_grasp.verifier.symbolic.properties import violates
from bt_grasp.verifier_api import verify_tree

ENUMERATION_CAP = 2_000


def verdicts(res) -> dict[str, bool | None]:
    return {p.name: p.holds for p in res.properties}


def test_clutter_safety_properties_hold() -> None:
    """FINALIZE "target in basket" only after the delivery check passed; place only with a grasp
    judged SUCCESS since the last grasp or opening: both hold over every run of clutter.yaml."""
    res = verify_tree(load_tree(ROOT / "trees" / "clutter.yaml"))
    assert res.proven
    assert verdicts(res) == {"finalize_only_when_delivered": True, "place_only_when_held": True}
    assert res.to_json()["properties"][0]["verdict"] == "HOLDS"


def test_broken_clutter_copy_violates_delivery_property(tmp_path: Path) -> None:
    """With the delivery check's answer ignored, a run FINALIZEs "target in basket" after the
    check said not_delivered: VIOLATED, and the witness replays to exactly that."""
    shutil.copytree(ROOT / "trees", tmp_path / "trees")
    sub = tmp_path / "trees" / "subtrees" / "deliver_checked.yaml"
    text = sub.read_text()
    gate = '- verify_delivery: {id: confirm, outcome: "{deliver.step}"}'
    assert gate in text
    sub.write_text(text.replace(gate, '- force_success: {id: ignore_check, child: '
                                      '{verify_delivery: {id: confirm, outcome: "{deliver.step}"}}}'))
    res = verify_tree(load_tree(tmp_path / "trees" / "clutter.yaml"))
    assert res.proven
    got = {p.name: p for p in res.properties}
    bad = got["finalize_only_when_delivered"]
    assert bad.holds is False and bad.ending == "FINALIZE: target in basket"
    answers = [(s["node"], s["outcome"]) for s in bad.witness]
    checks = [o for n, o in answers if n == "deliver/confirm"]
    assert checks and "delivered" not in checks
    assert got["place_only_when_held"].holds is True


def test_merged_states_keep_their_pasts_apart() -> None:
    """After `first` the two ways merge into one state (force_success forgets the outcome), yet
    `second` after a failed `first` violates "second only after first done"."""
    spec = tree("""
tree: merged
properties:
  - name: second_after_first_done
    never: {node: second}
    unless_after: {node: first, outcome: done}
  - name: at_most_two_grasps
    at_most: {count: 2, event: {node: grasp}}
  - name: at_most_one_grasp
    at_most: {count: 1, event: {node: grasp}}
  - name: done_then_decides
    after: {node: first, outcome: done}
    eventually: {decision: FINALIZE}
  - name: first_never_faults
    never: {node: first, outcome: fault}
root:
  selector:
    children:
      - sequence:
          children:
            - force_success: {child: {grasp: {id: first}}}
            - grasp: {id: second}
            - finalize: {reason: both}
      - wait_clarify: {reason: failed}
""")
    res = verify_tree(spec)
    v = verdicts(res)
    # first's outcome is read by no node: the search answers it with one outcome per status,
    # which stands for the others of its status; a property naming one of them still sees it
    assert v == {"second_after_first_done": False, "at_most_two_grasps": True,
                 "at_most_one_grasp": False, "done_then_decides": False, "first_never_faults": False}
    wit = {p.name: p for p in res.properties}
    assert wit["second_after_first_done"].witness[0]["outcome"] != "done"
    assert wit["done_then_decides"].ending.startswith("WAIT_CLARIFY")
    assert {"node": "first", "outcome": "fault"} in wit["first_never_faults"].witness


@st.composite
def _property(draw, types: list[str]) -> dict:
    def event() -> dict:
        return {"node": draw(st.sampled_from(types))}
    kind = draw(st.sampled_from(["never", "only_after", "at_most", "eventually"]))
    if kind == "never":
        return {"never": event(), "unless_after": event()}
    if kind == "only_after":
        return {"only_after": {"event": event(), "after": {**event(), "outcome": "done"}}}
    if kind == "at_most":
        return {"at_most": {"count": draw(st.integers(0, 2)), "event": event()}}
    return {"after": event(), "eventually": draw(st.sampled_from(
        [event(), {"decision": "FINALIZE"}, {"decision": "WAIT_CLARIFY"}]))}


@profile_settings(multiplier=2)
@given(text=tree_texts(max_leaves=6), data=st.data())
def test_random_trees_properties_match_every_run(text: str, data) -> None:
    """Every run the Runner enumerates that violates a property is caught (VIOLATED), and every
    VIOLATED is real (its witness replays to a violation; else holds would be None)."""
    plain = load_text(text)
    types = sorted({n.type for n in plain.root.walk() if n.type in ("grasp", "lift", "place", "open_gripper")})
    assume(types)
    doc = yaml.safe_load(text)
    doc["properties"] = [dict(data.draw(_property(types)), name=f"p{i}") for i in range(3)]
    spec = load_text(yaml.safe_dump(doc, sort_keys=False))
    res = verify_tree(spec, max_runs=20_000)
    assume(res.proven)
    runs = enumerate_runs(spec, ENUMERATION_CAP)
    assume(runs is not None)
    for prop, got in zip(spec.properties, res.properties, strict=True):
        assert got.holds is not None, got.why
        broken = any(violates(prop, choices, f"{r.decision.value}: {r.reason}") for r, choices in runs)
        if broken:
            assert got.holds is False, (prop.text(), text)


@pytest.mark.parametrize(("block", "where", "message"), [
    ("  - never: {node: grab}\n", (4, 19), "no leaf or leaf type 'grab'"),
    ("  - never: {node: g, outcome: held}\n", (4, 31), "no outcome 'held'"),
    ("  - never: {node: g}\n    until: {node: g}\n", (5, 5), "unknown key 'until'"),
    ("  - at_most: {count: -1, event: {node: g}}\n", (4, 22), "count must be an integer"),
    ("  - never: {decision: DONE}\n", (4, 23), "decision must be FINALIZE or WAIT_CLARIFY"),
    ("  - eventually: {node: g}\n", (4, 5), "needs 'after:'"),
    ("  - {}\n", (4, 5), "exactly one of"),
])
def test_bad_properties_are_one_positioned_error(block: str, where: tuple[int, int], message: str) -> None:
    """Each mistake names its file:line:col and what is wrong."""
    text = f"tree: t\nroot: {{grasp: {{id: g}}}}\nproperties:\n{block}"
    with pytest.raises(UserError) as err:
        tree(text, file="bad.yaml")
    assert (err.value.line, err.value.col) == where, str(err.value)
    assert message in str(err.value)


def test_each_pattern_on_hand_written_runs() -> None:
    """The monitors' meaning, run by run: at_most counts after its first `after` event; a
    reset takes an allowance back; a response is owed until the run ends."""
    spec = tree("""
tree: patterns
properties:
  - name: two_grasps_after_empty
    at_most: {count: 1, event: {node: g}, after: {node: e, outcome: EMPTY}}
  - name: lift_after_success
    never: {node: l}
    unless_after: {node: e, outcome: SUCCESS}
    reset_by: {node: g}
  - name: grasp_then_judged
    after: {node: g, outcome: done}
    eventually: {node: e}
root:
  sequence:
    children:
      - grasp: {id: g}
      - evaluate_grasp: {id: e}
      - lift: {id: l}
      - finalize: {reason: ok}
""")
    at_most, never, response = spec.properties
    end = "FINALIZE: ok"
    assert not violates(at_most, [("g", "done"), ("g", "done"), ("e", "EMPTY"), ("g", "done")], end)
    assert violates(at_most, [("e", "EMPTY"), ("g", "done"), ("g", "done")], end)
    assert not violates(never, [("g", "done"), ("e", "SUCCESS"), ("l", "done")], end)
    assert violates(never, [("e", "SUCCESS"), ("g", "done"), ("l", "done")], end)
    assert violates(never, [("l", "done")], end)
    assert not violates(response, [("g", "done"), ("e", "EMPTY")], end)
    assert violates(response, [("g", "done")], end)
    assert not violates(response, [("g", "infeasible")], end)


GUARDED = """
tree: guarded
properties:
  - name: heard_at_most_twice
    at_most: {count: 2, event: {node: guard}}
  - name: heard_at_most_a_thousand
    at_most: {count: 1000, event: {node: guard}}
root:
  selector:
    children:
      - sequence:
          children:
            - reactive_sequence:
                children:
                  - listen: {id: guard}
                  - lift: {id: up}
            - finalize: {reason: lifted}
      - wait_clarify: {reason: interrupted}
"""


def test_answers_of_idle_ticks_are_counted() -> None:
    """A guard heard again every tick a lift goes on: the search skips those idle ticks, the
    property check does not (the witness hears it three times, replayed). A count the lift's
    time cannot reach is not claimed either way: NOT CHECKED, never VIOLATED."""
    res = verify_tree(tree(GUARDED))
    got = {p.name: p for p in res.properties}
    twice = got["heard_at_most_twice"]
    assert twice.holds is False
    assert sum(s["node"] == "guard" for s in twice.witness) >= 3
    lots = got["heard_at_most_a_thousand"]
    assert lots.holds is None and "idle tick" in lots.why


_BUDGET_CUT = """
tree: budget_cut
properties:
  - name: never_push
    never: {{node: push}}
budgets: {{actions: 4}}
root:
  selector:
    children:
      - budget:
          actions: {actions}
          child:
            sequence:
              children:
                - grasp: {{id: grasp}}
                - push: {{id: push}}
                - finalize: {{reason: pushed}}
      - wait_clarify: {{reason: refused}}
"""


def test_a_property_is_judged_on_runs_the_counters_allow() -> None:
    """The quick check runs on a graph whose paths answer every budget comparison both ways; a
    violation only such a path shows (a push the spent `budget` refuses) is not reported:
    HOLDS with one action, VIOLATED with two, and that witness replays to a push."""
    held = verify_tree(tree(_BUDGET_CUT.format(actions=1)))
    assert held.proven and verdicts(held) == {"never_push": True}
    broken = verify_tree(tree(_BUDGET_CUT.format(actions=2)))
    assert verdicts(broken) == {"never_push": False}
    assert "push" in [s["node"] for s in broken.properties[0].witness]
