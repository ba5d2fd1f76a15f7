"""bt_grasp tree file -> BehaviorTree.CPP v4 XML (BTCPP_format="4"), for BT.CPP and Groot2 users.

The document holds one <BehaviorTree> (includes are already expanded by the spec loader) and a
<TreeNodesModel> declaring every non-built-in node with its ports, because Groot2 can only
display nodes it has a model for. What BT.CPP has no word for is carried in `_bt_grasp_*`
attributes, which BT.CPP keeps as "other attributes" and never reads as ports:

- `retry` -> RetryUntilSuccessful with `_bt_grasp_refill="false"`: the C++ node would refill
  its count on halt; ours never does, and the attribute lets the importer restore that.
- episode budgets and the default goal -> attributes on <BehaviorTree>.
- `budget` -> a custom decorator BtGraspActionBudget declared in the model.
See docs/btcpp.md for the full mapping.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from bt_grasp.interop.common import (
    BARE_ATTR,
    BUDGET_ATTRS,
    BUDGET_DECORATOR,
    EXPORTED_ATTR,
    GOAL_ATTR,
    NAV2_CONTROLS,
    NODES_ATTR,
    OUTCOMES_ATTR,
    REFILL_ATTR,
    SCOPE_ATTR,
    SECONDS_ATTR,
    SEQ_SEL,
    SIMPLE_DECORATORS,
    fmt_value,
    interop_registry,
)
from bt_grasp.interop.nodes import DEFAULT_OUTCOMES
from bt_grasp.registry import NodeType, Registry

# Switch2..Switch6 are registered by BT.CPP itself; wider switches must be declared.
BUILTIN_SWITCH_MAX = 6


class _Model:
    """Collects the <TreeNodesModel> entries while the tree is written."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, dict[str, tuple[str, str | None, str]]]] = {}

    def declare(self, kind: str, node_id: str, ports: dict[str, tuple[str, str | None, str]]) -> None:
        """kind: Action | Condition | Control | Decorator; ports: name -> (direction, default, doc)."""
        if node_id in self.entries:
            self.entries[node_id][1].update({k: v for k, v in ports.items()
                                             if k not in self.entries[node_id][1]})
        else:
            self.entries[node_id] = (kind, dict(ports))

    def element(self) -> ET.Element:
        model = ET.Element("TreeNodesModel")
        for node_id in sorted(self.entries):
            kind, ports = self.entries[node_id]
            el = ET.SubElement(model, kind, {"ID": node_id})
            for name in sorted(ports):
                direction, default, doc = ports[name]
                attrs = {"name": name}
                if default is not None:
                    attrs["default"] = default
                port = ET.SubElement(el, f"{direction}_port", attrs)
                if doc:
                    port.text = doc
        return model


def _registry_ports(nt: NodeType) -> dict[str, tuple[str, str | None, str]]:
    out: dict[str, tuple[str, str | None, str]] = {}
    for name, port in nt.ports.items():
        direction = "output" if port.type == "key" else "input"
        default = None
        if port.default is not None:
            default = _key_value(port.default) if port.type == "key" else fmt_value(port.default)
        out[name] = (direction, default, port.doc)
    return out


def _key_value(value: Any) -> str:
    """Output ports are blackboard entries in BT.CPP: always braced."""
    text = str(value)
    return text if text.startswith("{") else "{" + text + "}"


class _Writer:
    def __init__(self, registry: Registry) -> None:
        self.reg = registry
        self.model = _Model()

    def node(self, spec: Any) -> ET.Element:
        t, p = spec.type, spec.params
        attrs: dict[str, str] = {"name": spec.id}
        kids = list(spec.children)
        if (t, bool(p.get("memory", True))) in SEQ_SEL:
            tag = SEQ_SEL[(t, bool(p.get("memory", True)))]
        elif t == "parallel":
            tag = "Parallel"
            one = p.get("policy") == "success_on_one"
            attrs.update(success_count="1" if one else "-1", failure_count="1")
        elif t == "btcpp_parallel":
            tag = "Parallel"
            attrs.update(success_count=fmt_value(p.get("success_count", -1)),
                         failure_count=fmt_value(p.get("failure_count", 1)))
        elif t == "switch":
            n = len(spec.cases)
            tag = f"Switch{n}"
            attrs["variable"] = str(p["on"])
            for i, label in enumerate(spec.cases, start=1):
                attrs[f"case_{i}"] = str(label)
            kids = list(spec.cases.values())
            if n > BUILTIN_SWITCH_MAX or n < 2:
                ports = {"variable": ("input", None, "the blackboard entry to route on")}
                ports.update({f"case_{i}": ("input", None, "") for i in range(1, n + 1)})
                self.model.declare("Control", tag, ports)
        elif t == "retry":
            tag = "RetryUntilSuccessful"
            attrs["num_attempts"] = fmt_value(p["attempts"])
            attrs[REFILL_ATTR] = "false"
            if p.get("scope"):
                attrs[SCOPE_ATTR] = str(p["scope"])
        elif t == "btcpp_retry":
            tag = "RetryUntilSuccessful"
            attrs["num_attempts"] = fmt_value(p["num_attempts"])
        elif t == "repeat":
            tag = "Repeat"
            attrs["num_cycles"] = "-1" if p.get("times") is None else fmt_value(p["times"])
        elif t == "timeout":
            tag = "Timeout"
            seconds = float(p["seconds"])
            msec = round(seconds * 1000)
            attrs["msec"] = str(msec)
            if msec / 1000 != seconds:
                attrs[SECONDS_ATTR] = repr(seconds)
        elif t in SIMPLE_DECORATORS:
            tag = SIMPLE_DECORATORS[t]
        elif t == "budget":
            tag = BUDGET_DECORATOR
            attrs["actions"] = fmt_value(p["actions"])
            if p.get("scope"):
                attrs["scope"] = str(p["scope"])
            self.model.declare("Decorator", tag, {
                "actions": ("input", None, "bt_grasp: grasp/push actions allowed inside, per episode, "
                                           "never refilled"),
                "scope": ("input", None, "bt_grasp: budgets with one scope share one pool")})
        elif t in NAV2_CONTROLS:
            tag = NAV2_CONTROLS[t]
            ports: dict[str, tuple[str, str | None, str]] = {}
            if t == "recovery_node":
                attrs["number_of_retries"] = fmt_value(p.get("number_of_retries", 1))
                ports["number_of_retries"] = ("input", "1", "Nav2: recoveries before FAILURE")
            self.model.declare("Control", tag, ports)
        elif t in ("opaque_action", "opaque_condition", "opaque_decorator"):
            tag = str(p["btcpp_id"])
            raw = dict(p.get("ports") or {})
            attrs.update({k: fmt_value(v) for k, v in raw.items()})
            outcomes = p.get("outcomes")
            if t != "opaque_decorator" and outcomes and tuple(outcomes) != DEFAULT_OUTCOMES:
                attrs[OUTCOMES_ATTR] = ";".join(map(str, outcomes))
            kind = {"opaque_action": "Action", "opaque_condition": "Condition",
                    "opaque_decorator": "Decorator"}[t]
            declared = self.model.entries.get(tag)
            if declared is not None and declared[0] != kind:
                # One ID used as two kinds: the model holds the first; spell this one out.
                attrs = {"ID": tag, **attrs}
                tag = kind
            elif tag not in ("AlwaysSuccess", "AlwaysFailure"):
                self.model.declare(kind, tag, {k: ("input", None, "") for k in raw})
        else:
            nt = self.reg.require(t)
            if nt.kind in ("composite", "decorator"):
                raise ValueError(f"no BT.CPP mapping for composite/decorator type '{t}'")
            tag = t
            bare = []
            for name, value in p.items():
                if value is None:
                    continue
                port = nt.ports.get(name)
                if port is not None and port.type == "key":
                    attrs[name] = _key_value(value)
                    if not str(value).startswith("{"):
                        bare.append(name)
                else:
                    attrs[name] = fmt_value(value)
            if bare:
                attrs[BARE_ATTR] = ";".join(bare)
            self.model.declare("Condition" if nt.kind == "condition" else "Action", t,
                               _registry_ports(nt))
        el = ET.Element(tag, attrs)
        for kid in kids:
            el.append(self.node(kid))
        if t == "switch":
            el.append(self.node(spec.default) if spec.default is not None
                      else ET.Element("AlwaysFailure"))
        return el


def export_spec(spec: Any, registry: Registry | None = None) -> str:
    """A loaded TreeSpec -> BT.CPP v4 XML text."""
    # The spec's own registry first: it holds the user node classes the tree was validated with.
    reg = interop_registry(getattr(spec, "registry", None) or registry)
    writer = _Writer(reg)
    root = ET.Element("root", {"BTCPP_format": "4", "main_tree_to_execute": spec.name})
    bt_attrs = {"ID": spec.name, EXPORTED_ATTR: "true"}
    if spec.description:
        bt_attrs["_description"] = str(spec.description)
    for key, attr in BUDGET_ATTRS.items():
        bt_attrs[attr] = str(getattr(spec.budgets, key))
    if spec.goal:
        bt_attrs[GOAL_ATTR] = json.dumps(spec.goal, sort_keys=True)
    if getattr(spec, "user_nodes", None):
        bt_attrs[NODES_ATTR] = json.dumps(list(spec.user_nodes))
    tree = ET.SubElement(root, "BehaviorTree", bt_attrs)
    tree.append(writer.node(spec.root))
    root.append(writer.model.element())
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def export_btcpp(tree_yaml_path: str | Path, registry: Registry | None = None) -> str:
    """Load a bt_grasp tree file (includes expanded, validated) and return BT.CPP v4 XML text."""
    from bt_grasp.spec import load_tree

    reg = interop_registry(registry)
    return export_spec(load_tree(tree_yaml_path, reg), reg)
