"""Every registered node type has what the rest of bt_grasp dispatches on (CONTRIBUTING.md,
"Adding a node type"): a verifier model, a compositional summary rule, a BT.CPP export mapping
and an entry in docs/nodes.md. Each type is put in a small tree built from its own ports, so a
new type is checked without being listed here."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bt_grasp.compile import compile_tree
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.interop.btcpp_export import export_spec
from bt_grasp.interop.nodes import register_interop_types
from bt_grasp.registry import NodeType, Registry
from bt_grasp.spec.loader import load_tree_text
from bt_grasp.spec.ports import READ_REF_PORTS
from bt_grasp.verifier.summary.rules import Rules
from bt_grasp.verifier.symbolic.model import build_model

ROOT = Path(__file__).resolve().parent.parent
VERIFIER = ROOT / "bt_grasp" / "verifier"
# The modules of the compositional summary that dispatch on control type names.
SUMMARY_MODULES = ("summary/rules.py", "summary/node_sum.py", "summary/loops.py", "summary/btcpp.py")
CONTROL = ("composite", "decorator")
SAMPLE = {"int": 2, "float": 1.0, "bool": True, "label": "done", "key": "{sample}", "list": [], "any": 1}


def _registry() -> Registry:
    registry = default_registry()
    register_interop_types(registry)
    return registry


REGISTRY = _registry()
CONTROLS = sorted(nt.name for nt in REGISTRY if nt.kind in CONTROL)
LEAVES = sorted(nt.name for nt in REGISTRY if nt.kind not in CONTROL)


def _params(nt: NodeType) -> dict[str, Any]:
    """A value for every required port, of the port's type (its first choice, when it has them)."""
    out: dict[str, Any] = {}
    for port in nt.ports.values():
        if (nt.name, port.name) in READ_REF_PORTS:  # a port that reads the blackboard
            out[port.name] = "{sample}"
        elif port.required:
            out[port.name] = port.choices[0] if port.choices else SAMPLE.get(port.type, "sample")
    return out


def _node(nt: NodeType) -> dict[str, Any]:
    """`nt` with the children its arity asks for: a grasp, then a survey."""
    body: dict[str, Any] = {"id": "under_test", **_params(nt)}
    kids = [{"grasp": {}}, {"survey_scene": {}}]
    if nt.arity == "one":
        body["child"] = kids[0]
    elif nt.arity == "many":
        body["children"] = kids
    elif nt.arity == "cases":
        body["cases"] = {"done": kids[0], "failure": kids[1]}
    return {nt.name: body}


def _spec(name: str) -> Any:
    nt = REGISTRY.get(name)
    assert nt is not None
    root = {"selector": {"children": [_node(nt), {"wait_clarify": {"reason": "end"}}]}}
    text = yaml.safe_dump({"tree": "complete", "budgets": {"max_ticks": 100}, "root": root}, sort_keys=False)
    return load_tree_text(text, registry=REGISTRY)


def _string_constants(files: tuple[str, ...]) -> set[str]:
    return {node.value for f in files for node in ast.walk(ast.parse((VERIFIER / f).read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def _documented() -> set[str]:
    return set(re.findall(r"^### `([^`]+)`", (ROOT / "docs" / "nodes.md").read_text(), re.M))


@pytest.mark.parametrize("name", CONTROLS + LEAVES)
def test_every_node_type_is_modelled_exported_and_documented(name: str) -> None:
    """The verifier's explicit model takes the compiled node (verifier/symbolic/model.py: _CONTROLS for a
    control, the Leaf lifecycle for a leaf), the BT.CPP exporter writes it, docs/nodes.md has it."""
    spec = _spec(name)
    ctx = RunContext(registry=REGISTRY, limits=EpisodeLimits(max_ticks=100))
    build_model(compile_tree(spec, ctx))  # raises NotModelled naming the node
    xml = export_spec(spec, REGISTRY)
    assert 'name="under_test"' in xml
    assert name in _documented(), f"docs/nodes.md has no entry for {name} (bt-grasp nodes > docs/nodes.md)"


@pytest.mark.parametrize("name", CONTROLS)
def test_every_control_type_has_a_summary_rule_and_a_btcpp_element(name: str) -> None:
    """The compositional summary names the type (an unnamed one-child decorator would otherwise
    pass its child's summary through unchanged, unsound for one that repeats it), gives it a
    rule, and the exporter maps it to a BT.CPP element rather than writing its own name."""
    spec = _spec(name)
    assert name in _string_constants(SUMMARY_MODULES), f"no summary rule names {name} (verifier/summary/rules.py)"
    rules = Rules(spec, REGISTRY)
    rules.summarise(spec.root)
    assert not any("no summary rule" in why for why in rules.unbounded_reasons.values())
    xml = export_spec(spec, REGISTRY)
    assert f"<{name} " not in xml and f"<{name}>" not in xml, f"{name} is exported under its own name"


@pytest.mark.parametrize("name", LEAVES)
def test_every_leaf_type_declares_its_outcomes_and_tick_bound(name: str) -> None:
    """A leaf has a class, an outcome alphabet (a terminal decides instead, a condition answers
    SUCCESS or FAILURE) and a tick bound the verifier and the Runner both use."""
    nt = REGISTRY.get(name)
    assert nt is not None and nt.factory is not None
    assert nt.kind in ("terminal", "condition") or nt.alphabet(_params(nt)), f"{name} declares no outcomes"
    assert nt.max_ticks >= 1


def test_a_control_type_without_a_summary_rule_is_bounded_only_by_the_tick_cap() -> None:
    """A user's one-child decorator the summary does not know (here one that may tick its child
    again and again) is not read as its child: the summary says it has no rule for it, so only
    the tick cap bounds the tree, instead of the child's single-activation bounds."""
    registry = _registry()
    registry.add(NodeType("again_and_again", "decorator", arity="one",
                          factory=lambda node_id, params, children, ctx: children[0]))
    root = {"selector": {"children": [{"again_and_again": {"child": {"grasp": {}}}},
                                      {"wait_clarify": {"reason": "end"}}]}}
    text = yaml.safe_dump({"tree": "user_decorator", "budgets": {"max_ticks": 100}, "root": root},
                          sort_keys=False)
    spec = load_tree_text(text, registry=registry)
    rules = Rules(spec, registry)
    rules.summarise(spec.root)
    assert any("no summary rule for node type again_and_again" in why
               for why in rules.unbounded_reasons.values())
