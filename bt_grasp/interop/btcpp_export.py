"""bt_grasp tree file -> BehaviorTree.CPP v4 XML (BTCPP_format="4"), for BT.CPP and Groot2 users.

The document holds one <BehaviorTree> (includes are already expanded by the spec loader) and a
<TreeNodesModel> declaring every non-built-in node with its ports, because Groot2 can only
display nodes it has a model for. It validates against the XSD BT.CPP generates for those
models (interop.btcpp_xsd): every blackboard entry a leaf reads or writes is a declared port
remapped on the instance (registry.KeyUse), and what BT.CPP has no word for — the retry that is
never refilled, exact timeout seconds, budgets, goal — is carried in one `<?bt_grasp ...?>`
processing instruction (interop.btcpp_meta). See docs/btcpp.md for the full mapping.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from bt_grasp.errors import UserError, excerpt
from bt_grasp.interop.btcpp_meta import derived_key, metadata_pi
from bt_grasp.interop.common import (
    BUDGET_ATTRS,
    BUDGET_DECORATOR,
    NAV2_CONTROLS,
    SEQ_SEL,
    SIMPLE_DECORATORS,
    fmt_value,
    interop_registry,
)
from bt_grasp.interop.outcomes import DEFAULT_OUTCOMES
from bt_grasp.registry import NodeType, Port, Registry
from bt_grasp.spec.model import looks_like_ref

# Switch2..Switch6 are registered by BT.CPP itself; wider switches must be declared.
BUILTIN_SWITCH_MAX = 6
# C++ type names written in `type=` of model ports (BT.CPP's demangled names); the XSD maps them.
CPP_TYPES = {"int": "int", "float": "double", "bool": "bool", "str": "std::string",
             "label": "std::string"}

# name -> (direction, default or None, doc, C++ type or None)
PortModel = tuple[str, "str | None", str, "str | None"]


class _Model:
    """Collects the <TreeNodesModel> entries while the tree is written."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, dict[str, PortModel], str]] = {}
        self.uses: dict[str, list[set[str]]] = {}  # opaque IDs: the ports each instance wrote

    def declare(self, kind: str, node_id: str, ports: dict[str, PortModel], doc: str = "") -> None:
        """kind: Action | Condition | Control | Decorator."""
        if node_id in self.entries:
            self.entries[node_id][1].update({k: v for k, v in ports.items()
                                             if k not in self.entries[node_id][1]})
        else:
            self.entries[node_id] = (kind, dict(ports), doc)

    def element(self) -> ET.Element:
        model = ET.Element("TreeNodesModel")
        for node_id in sorted(self.entries):
            kind, ports, doc = self.entries[node_id]
            el = ET.SubElement(model, kind, {"ID": node_id})
            uses = self.uses.get(node_id)
            for name in sorted(ports):
                direction, default, pdoc, cpp = ports[name]
                if default is None and uses and any(name not in u for u in uses):
                    default = ""  # an instance leaves it out: optional, as BT.CPP spells it
                attrs = {"name": name}
                if cpp:
                    attrs["type"] = cpp
                if default is not None and direction == "input":
                    attrs["default"] = default  # BT.CPP's XSD allows no default on outputs
                port = ET.SubElement(el, f"{direction}_port", attrs)
                if pdoc:
                    port.text = pdoc
            if doc:
                ET.SubElement(el, "description").text = doc
        return model


def _port_model(port: Port) -> PortModel:
    if port.type == "key":
        default = _key_value(port.default) if port.default is not None else None
        doc = port.doc + (f" (bt_grasp default: {default})" if default else "")
        return ("output", None, doc, None)
    # An optional port without a default still needs one in BT.CPP, or its XSD requires it.
    default = fmt_value(port.default) if port.default is not None else (None if port.required else "")
    return ("input", default, port.doc, CPP_TYPES.get(port.type))


def registry_ports(nt: NodeType) -> dict[str, PortModel]:
    out = {name: _port_model(port) for name, port in nt.ports.items()}
    for use in nt.keys:
        out[use.port] = (use.direction, None, f"entry {use.key}: {use.doc}", None)
    return out


def _literal(spec: Any, name: str, value: Any) -> str:
    """A literal port value as BT.CPP text. BT.CPP reads any value that is braced once its
    spaces are stripped as a blackboard entry and has no escape for it, so a bt_grasp literal
    such as " {grasp.label}" (a string here, the spaces being part of it) cannot be exported
    without changing its meaning: refused at the value's place in the tree file."""
    text = fmt_value(value)
    stripped = text.strip()
    if (isinstance(value, str) and not looks_like_ref(value)
            and stripped.startswith("{") and stripped.endswith("}")):
        pos = spec.param_pos.get(name, spec.pos)
        raise UserError(f"{name}: {excerpt(repr(value))} is text here, but BT.CPP would read it as "
                        "a blackboard entry and has no way to write it as text (drop the braces, "
                        "or drop the spaces to make it a blackboard entry)", pos.file, pos.line, pos.col)
    return text


def _key_value(value: Any) -> str:
    """Output ports are blackboard entries in BT.CPP: always braced."""
    text = str(value)
    return text if text.startswith("{") else "{" + text + "}"


class _Writer:
    def __init__(self, registry: Registry) -> None:
        self.reg = registry
        self.model = _Model()
        self.meta: dict[str, dict[str, Any]] = {}  # node name -> bt_grasp metadata

    def node(self, spec: Any) -> ET.Element:
        t, p = spec.type, spec.params
        attrs: dict[str, str] = {"name": spec.id}
        meta: dict[str, Any] = {}
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
                ports: dict[str, PortModel] = {
                    "variable": ("input", None, "the blackboard entry to route on", "std::string")}
                ports.update({f"case_{i}": ("input", None, "", "std::string") for i in range(1, n + 1)})
                self.model.declare("Control", tag, ports, f"BT.CPP SwitchNode<{n}>")
        elif t == "retry":
            tag = "RetryUntilSuccessful"
            attrs["num_attempts"] = fmt_value(p["attempts"])
            meta["refill"] = False
            if p.get("scope"):
                meta["scope"] = str(p["scope"])
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
                meta["seconds"] = repr(seconds)
        elif t in SIMPLE_DECORATORS:
            tag = SIMPLE_DECORATORS[t]
        elif t == "budget":
            tag = BUDGET_DECORATOR
            attrs["actions"] = fmt_value(p["actions"])
            if p.get("scope"):
                attrs["scope"] = str(p["scope"])
            self.model.declare("Decorator", tag, {
                "actions": ("input", None, "grasp/push actions allowed inside, per episode, never "
                                           "refilled", "int"),
                "scope": ("input", "", "budgets with one scope share one pool", "std::string")},
                "bt_grasp budget: fails its child's manipulation actions once the budget is spent")
        elif t in NAV2_CONTROLS:
            tag = NAV2_CONTROLS[t]
            nav_ports: dict[str, PortModel] = {}
            if t == "recovery_node":
                attrs["number_of_retries"] = fmt_value(p.get("number_of_retries", 1))
                nav_ports["number_of_retries"] = ("input", "1", "Nav2: recoveries before FAILURE", "int")
            self.model.declare("Control", tag, nav_ports, f"Nav2 {tag}")
        elif t in ("opaque_action", "opaque_condition", "opaque_decorator"):
            tag = str(p["btcpp_id"])
            raw = dict(p.get("ports") or {})
            attrs.update({k: fmt_value(v) for k, v in raw.items()})
            outcomes = p.get("outcomes")
            if t != "opaque_decorator" and outcomes and tuple(outcomes) != DEFAULT_OUTCOMES:
                meta["outcomes"] = [str(o) for o in outcomes]
            kind = {"opaque_action": "Action", "opaque_condition": "Condition",
                    "opaque_decorator": "Decorator"}[t]
            declared = self.model.entries.get(tag)
            if declared is not None and declared[0] != kind:
                # One ID used as two kinds: the model holds the first; spell this one out
                # (BT.CPP loads it; its XSD knows only the compact form, so it does not validate).
                attrs = {"ID": tag, **attrs}
                tag = kind
            elif tag not in ("AlwaysSuccess", "AlwaysFailure"):
                self.model.declare(kind, tag, {k: ("input", None, "", None) for k in raw})
                self.model.uses.setdefault(tag, []).append(set(raw))
        else:
            tag = t
            attrs.update(self.leaf_ports(spec, meta))
        if meta:
            self.meta[spec.id] = meta
        el = ET.Element(tag, attrs)
        for kid in kids:
            el.append(self.node(kid))
        if t == "switch":
            el.append(self.node(spec.default) if spec.default is not None
                      else ET.Element("AlwaysFailure"))
        return el

    def leaf_ports(self, spec: Any, meta: dict[str, Any]) -> dict[str, str]:
        """A bt_grasp leaf's attributes: its ports, every output braced, and its derived entries."""
        nt = self.reg.require(spec.type)
        if nt.kind in ("composite", "decorator"):
            raise ValueError(f"no BT.CPP mapping for composite/decorator type '{spec.type}'")
        attrs: dict[str, str] = {}
        bare = []
        for name, port in nt.ports.items():
            value = spec.params.get(name, port.default)
            if port.type == "key":
                value = port.default if value is None else value
                if value is None:
                    continue
                attrs[name] = _key_value(value)
                if not str(value).startswith("{"):
                    bare.append(name)
            elif value is not None:
                attrs[name] = _literal(spec, name, value)
        if bare:
            meta["bare"] = bare
        value_of = lambda name: spec.params.get(name, nt.ports[name].default)  # noqa: E731
        for use in nt.keys:
            attrs[use.port] = "{" + derived_key(use.key, spec.id, value_of) + "}"
        self.model.declare("Condition" if nt.kind == "condition" else "Action", spec.type,
                           registry_ports(nt), nt.doc)
        return attrs


def export_spec(spec: Any, registry: Registry | None = None) -> str:
    """A loaded TreeSpec -> BT.CPP v4 XML text."""
    # The spec's own registry first: it holds the user node classes the tree was validated with.
    reg = interop_registry(getattr(spec, "registry", None) or registry)
    writer = _Writer(reg)
    root = ET.Element("root", {"BTCPP_format": "4", "main_tree_to_execute": spec.name})
    tree_meta: dict[str, Any] = {
        "exported": True,
        "budgets": {key: getattr(spec.budgets, key) for key in BUDGET_ATTRS
                    if getattr(spec.budgets, key) is not None}}
    if spec.description:
        tree_meta["description"] = str(spec.description)
    if spec.goal:
        tree_meta["goal"] = spec.goal
    if getattr(spec, "user_nodes", None):
        tree_meta["nodes"] = list(spec.user_nodes)
    tree = ET.SubElement(root, "BehaviorTree", {"ID": spec.name})
    tree.append(writer.node(spec.root))
    root.append(writer.model.element())
    ET.indent(root, space="  ")
    pi = metadata_pi({"tree": tree_meta, "nodes": writer.meta})
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + pi + "\n"
            + ET.tostring(root, encoding="unicode") + "\n")


def export_btcpp(tree_yaml_path: str | Path, registry: Registry | None = None) -> str:
    """Load a bt_grasp tree file (includes expanded, validated) and return BT.CPP v4 XML text."""
    from bt_grasp.spec.loader import load_tree

    reg = interop_registry(registry)
    return export_spec(load_tree(tree_yaml_path, reg), reg)
