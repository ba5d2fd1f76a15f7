"""dump_tree is the inverse of load_tree_text: good trees and random valid trees round-trip, and
a tree's `properties:` are written back (load -> dump -> load keeps every property)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from bt_strategies import BUILTIN_REG, BUILTIN_TREES, number_ids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_grasp.spec.dump import dump_tree
from bt_grasp.spec.loader import load_tree, load_tree_text
from bt_grasp.spec.model import TreeSpec

GOOD = Path(__file__).parent / "data" / "trees" / "good"
SHIPPED = Path(__file__).resolve().parent.parent / "trees"


def roundtrip(spec: TreeSpec) -> TreeSpec:
    return load_tree_text(dump_tree(spec), file="dumped.yaml", registry=spec.registry)


@pytest.mark.parametrize("path", sorted(GOOD.glob("*.yaml")) + sorted(SHIPPED.rglob("*.yaml")),
                         ids=lambda p: p.name)
def test_good_trees_round_trip_to_an_equal_structure(path: Path):
    spec = load_tree(path)
    again = roundtrip(spec)
    assert again == spec
    assert [n.id for n in again.root.walk()] == [n.id for n in spec.root.walk()]
    assert dump_tree(again) == dump_tree(spec)


EVERY_PATTERN = """
tree: patterns
root:
  selector:
    children:
      - sequence:
          children:
            - locate_object: {id: look, target: "{goal.object}"}
            - retry: {attempts: 2, child: {sequence: {children: [grasp: {id: g}, evaluate_grasp: {id: judge}]}}}
            - place: {id: put, target: basket}
            - finalize: {id: done, reason: target in basket}
      - wait_clarify: {reason: no grasp held}
properties:
  - never: {node: place}
    unless_after: {node: judge, outcome: [SUCCESS, SLIP]}
    reset_by: [{node: grasp}, {node: look, outcome: occluded}]
  - name: delivered_after_placing
    only_after:
      event: {decision: FINALIZE, reason: target in basket}
      after: {node: put, outcome: done}
  - name: few_grasps_after_a_look
    at_most: {count: 2, event: {node: grasp}, after: {node: look, outcome: found}}
  - name: judged
    after: {node: g, outcome: done}
    eventually: [{node: judge}, {decision: WAIT_CLARIFY}]
  - name: done_is_finalize
    never: {node: done}
    unless_after: {node: put}
"""


@pytest.mark.parametrize("source", ["every pattern", "clutter.yaml"])
def test_properties_survive_load_dump_load(source: str):
    """Each property (every pattern, event lists, outcome lists, leaf types and ids, decisions,
    an unnamed one; clutter.yaml's, naming leaves inside its includes) loads back equal from
    the dumped text, with its name, and dumps the same."""
    spec = (load_tree_text(EVERY_PATTERN, file="t.yaml") if source == "every pattern"
            else load_tree(SHIPPED / source))
    assert spec.properties
    dumped = dump_tree(spec)
    assert "properties:" in dumped
    again = load_tree_text(dumped, file="dumped.yaml", registry=spec.registry)
    assert again.properties == spec.properties
    assert [p.name for p in again.properties] == [p.name for p in spec.properties]
    assert [p.text() for p in again.properties] == [p.text() for p in spec.properties]
    assert dump_tree(again) == dumped


def test_a_tree_without_properties_dumps_none():
    assert "properties" not in dump_tree(load_tree(GOOD / "clutter.yaml"))


def test_dump_is_compact():
    text = dump_tree(load_tree(GOOD / "clutter.yaml"))
    assert "- survey_scene\n" in text           # default leaf: a bare string
    assert "grasp: {id: grasp}" in text         # leaf fields in flow style
    assert "memory" not in text                 # ports at their default are omitted
    assert "sequence_1" not in text             # generated ids are omitted
    assert "'{goal.object}'" in text            # references stay quoted


def test_dump_of_an_include_expands_it_with_prefixed_ids():
    text = dump_tree(load_tree(GOOD / "include_twice.yaml"))
    assert "include:" not in text and "subtree:" not in text
    assert "id: first/grasp" in text


# -- random valid trees -----------------------------------------------------------------------------


def _types(node: Any) -> list[str]:
    """Node types in the loader's walk order (children, cases, default)."""
    if isinstance(node, str):
        return [node]
    ((t, fields),) = node.items()
    out = [t]
    for child in fields.get("children", []) + ([fields["child"]] if "child" in fields else []):
        out += _types(child)
    for case in fields.get("cases", {}).values():
        out += _types(case)
    if "default" in fields:
        out += _types(fields["default"])
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(root=BUILTIN_TREES, actions=st.integers(0, 30), streak=st.integers(0, 9))
def test_random_valid_trees_load_and_round_trip(root: Any, actions: int, streak: int):
    number_ids(root, [0])
    text = yaml.safe_dump({"tree": "generated", "budgets": {"actions": actions,
                                                            "perception_streak": streak},
                           "root": root}, sort_keys=False)
    spec = load_tree_text(text, file="generated.yaml", registry=BUILTIN_REG)
    assert [n.type for n in spec.root.walk()] == _types(root)
    ids = [n.id for n in spec.root.walk()]
    assert len(ids) == len(set(ids))
    assert spec.budgets.actions == actions and spec.budgets.perception_streak == streak
    again = roundtrip(spec)
    assert again == spec
    assert dump_tree(again) == dump_tree(spec)
