"""dump_tree is the inverse of load_tree_text: good trees and random valid trees round-trip."""

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
