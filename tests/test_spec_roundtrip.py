"""dump_tree is the inverse of load_tree_text: good trees and random valid trees round-trip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_grasp import builtin_types
from bt_grasp.outcomes import LABELS
from bt_grasp.registry import Registry
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


def _builtin_registry() -> Registry:
    """The built-ins only, whatever plug-ins other tests register into the default registry."""
    reg = Registry()
    for node_type in builtin_types.COMPOSITES + builtin_types.LEAVES:
        reg.add(node_type)
    return reg


REG = _builtin_registry()
_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_ ", min_size=1, max_size=12).filter(
    lambda s: s.strip() == s)
_REFS = st.sampled_from(["{goal.object}", "{target}", "{scene.objects}", "{bb.x.y}"])


def _port_value(node_type: str, name: str) -> st.SearchStrategy[Any] | None:
    """A valid value for a port, or None to leave it out (outcome keys stay at their default,
    so every switch and label_is below routes on labels some writer can produce)."""
    port = REG.get(node_type).ports[name]
    if node_type == "label_is":
        return st.just("{grasp.label}") if name == "key" else st.sampled_from(LABELS)
    if port.type == "key":
        return None if name == REG.get(node_type).outcome_port else st.sampled_from(["r.a", "{r.b}"])
    if port.choices:
        return st.sampled_from(port.choices)
    if port.type == "int":
        low = int(port.minimum or 0)
        return st.integers(low, int(port.maximum) if port.maximum is not None else low + 9)
    if port.type == "float":
        low = port.minimum or 0.0
        high = port.maximum if port.maximum is not None else low + 50
        return st.integers(0, 100).map(lambda k: round(low + (high - low) * k / 100, 4))
    if port.type == "bool":
        return st.booleans()
    if REG.get(node_type).kind in ("composite", "decorator"):
        return _NAMES  # composite and decorator settings are literals
    return st.one_of(_NAMES, _REFS)


def _fields(node_type: str) -> st.SearchStrategy[dict[str, Any]]:
    """Required ports always, optional ports sometimes, and an id marker sometimes."""
    required, optional = {}, {}
    for name, port in REG.get(node_type).ports.items():
        strat = _port_value(node_type, name)
        if strat is not None:
            (required if port.required else optional)[name] = strat
    return st.fixed_dictionaries(required, optional=optional).flatmap(
        lambda d: st.booleans().map(lambda with_id: {**({"id": True} if with_id else {}), **d}))


_LEAF_TYPES = [t.name for t in REG if t.arity == "none"]
_LEAVES = st.sampled_from(_LEAF_TYPES).flatmap(
    lambda t: _fields(t).map(lambda f, t=t: {t: f} if f or REG.get(t).ports and any(
        p.required for p in REG.get(t).ports.values()) else t))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    composites = st.sampled_from(["sequence", "selector", "parallel"]).flatmap(
        lambda t: st.tuples(_fields(t), st.lists(children, min_size=1, max_size=3)).map(
            lambda fc, t=t: {t: {**fc[0], "children": fc[1]}}))
    decorators = st.sampled_from([t.name for t in REG if t.arity == "one"]).flatmap(
        lambda t: st.tuples(_fields(t), children).map(lambda fc, t=t: {t: {**fc[0], "child": fc[1]}}))
    switches = st.tuples(
        st.dictionaries(st.sampled_from(LABELS), children, min_size=1, max_size=3),
        st.one_of(st.none(), children), st.booleans(),
    ).map(lambda c: {"switch": {**({"id": True} if c[2] else {}), "on": "{grasp.label}",
                                "cases": c[0], **({"default": c[1]} if c[1] is not None else {})}})
    return st.one_of(composites, decorators, switches)


TREES = st.recursive(_LEAVES, _extend, max_leaves=12)


def _number_ids(node: Any, counter: list[int]) -> None:
    """Replace the `id: True` markers by unique ids n0, n1, ... in pre-order."""
    if not isinstance(node, dict):
        return
    (fields,) = node.values()
    if fields.get("id") is True:
        fields["id"] = f"n{counter[0]}"
        counter[0] += 1
    for child in fields.get("children", []):
        _number_ids(child, counter)
    if "child" in fields:
        _number_ids(fields["child"], counter)
    for case in fields.get("cases", {}).values():
        _number_ids(case, counter)
    if "default" in fields:
        _number_ids(fields["default"], counter)


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
@given(root=TREES, actions=st.integers(0, 30), streak=st.integers(0, 9))
def test_random_valid_trees_load_and_round_trip(root: Any, actions: int, streak: int):
    _number_ids(root, [0])
    text = yaml.safe_dump({"tree": "generated", "budgets": {"actions": actions,
                                                            "perception_streak": streak},
                           "root": root}, sort_keys=False)
    spec = load_tree_text(text, file="generated.yaml", registry=REG)
    assert [n.type for n in spec.root.walk()] == _types(root)
    ids = [n.id for n in spec.root.walk()]
    assert len(ids) == len(set(ids))
    assert spec.budgets.actions == actions and spec.budgets.perception_streak == streak
    again = roundtrip(spec)
    assert again == spec
    assert dump_tree(again) == dump_tree(spec)
