"""A run's tree as Groot2 reads it: BT.CPP v4 XML with a `_uid` on every node and a
TreeNodesModel, built from the trace header's `structure` (the nodes exactly as the run ticked
them), so a `.btlog` or the live monitor can be made from a trace alone.

Groot2 matches every status it is sent to a drawn node by `_uid`, so the UIDs are the contract:
1..N in BT.CPP's creation order, which is depth-first, parent before children. The XML is the one
BT.CPP's `WriteTreeToXML(tree, add_metadata=true, ...)` writes for its own trees (`_fullpath` on
the BehaviorTree, `name` = our node id); the element names are those of `bt-grasp export`
(interop.common), so a tree looks alike in Groot2's editor and in its monitor. Only node types
BT.CPP does not register itself get a model, the way Groot2 expects a plugin's nodes declared.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.errors import UserError, did_you_mean
from bt_grasp.interop.common import BUDGET_DECORATOR, NAV2_CONTROLS, SEQ_SEL, SIMPLE_DECORATORS

# BT.CPP's own node types (registered by its factory): never put in the TreeNodesModel.
BUILTIN = frozenset({
    "Sequence", "ReactiveSequence", "SequenceWithMemory", "Fallback", "ReactiveFallback", "Parallel",
    "ParallelAll", "IfThenElse", "WhileDoElse", "RetryUntilSuccessful", "Repeat", "Timeout",
    "Inverter", "ForceSuccess", "ForceFailure", "KeepRunningUntilFailure", "Delay", "RunOnce",
    "AlwaysSuccess", "AlwaysFailure", "Sleep", "Script", "ScriptCondition", "SetBlackboard",
    "SubTree", "Precondition", "LoopInt", "LoopDouble", "LoopString", "LoopBool",
    *(f"Switch{n}" for n in range(2, 7))})
_KIND = {"composite": "Control", "decorator": "Decorator", "condition": "Condition"}


@dataclass
class Groot2Tree:
    """The XML Groot2 is given, and how our node ids map to its UIDs."""

    xml: str
    uids: dict[str, int]                     # node id -> _uid
    count: int                               # N: UIDs are 1..N (a switch's stand-in default included)
    parent: dict[str, str | None] = field(default_factory=dict)   # node id -> its parent's id
    single_child: set[str] = field(default_factory=set)  # decorators: they reset a finished child


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


class _Builder:
    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = kinds  # bt_grasp type -> registry kind
        self.models: dict[str, tuple[str, set[str]]] = {}  # tag -> (model kind, port names)
        self.uids: dict[str, int] = {}
        self.parent: dict[str, str | None] = {}
        self.single: set[str] = set()
        self.next_uid = 1

    def uid(self) -> str:
        self.next_uid += 1
        return str(self.next_uid - 1)

    def node(self, node: dict[str, Any], parent: str | None) -> ET.Element:
        """One node and, depth-first, its children; the UID is taken before the children's."""
        t, p, nid = node["type"], node.get("params", {}), node["id"]
        attrs: dict[str, str] = {"name": nid, "_uid": self.uid()}
        self.uids.setdefault(nid, int(attrs["_uid"]))
        self.parent[nid] = parent
        kids = list(node.get("children", []))
        tag, ports = self.tag_and_ports(t, p, node)
        attrs.update(ports)
        if t == "switch":
            kids = list(node.get("cases", {}).values())
        el = ET.Element(tag, attrs)
        if tag not in BUILTIN:
            kind = self.kinds.get(t)
            model = _KIND.get(kind or "", "Action") if kind else (
                "Control" if len(kids) > 1 else "Decorator" if kids else "Action")
            known = self.models.setdefault(tag, (model, set()))[1]
            known.update(k for k in ports if k not in ("name",))
        if len(kids) == 1 and t != "switch":
            self.single.add(nid)
        for kid in kids:
            el.append(self.node(kid, nid))
        if t == "switch":
            if "default" in node:
                el.append(self.node(node["default"], nid))
            else:  # BT.CPP's SwitchN always has a default child: a stand-in the run never ticks
                el.append(ET.Element("AlwaysFailure", {"name": f"{nid}.default", "_uid": self.uid()}))
        return el

    def tag_and_ports(self, t: str, p: dict[str, Any], node: dict[str, Any]) -> tuple[str, dict[str, str]]:
        """The element name and attributes `bt-grasp export` uses for this node type."""
        if (t, bool(p.get("memory", True))) in SEQ_SEL:
            return SEQ_SEL[(t, bool(p.get("memory", True)))], {}
        if t == "parallel":
            one = p.get("policy") == "success_on_one"
            return "Parallel", {"success_count": "1" if one else "-1", "failure_count": "1"}
        if t == "btcpp_parallel":
            return "Parallel", {"success_count": _text(p.get("success_count", -1)),
                                "failure_count": _text(p.get("failure_count", 1))}
        if t == "switch":
            cases = list(node.get("cases", {}))
            attrs = {"variable": _text(p.get("on"))}
            attrs.update({f"case_{i}": str(label) for i, label in enumerate(cases, 1)})
            return f"Switch{len(cases)}", attrs
        if t in ("retry", "btcpp_retry"):
            return "RetryUntilSuccessful", {"num_attempts": _text(p.get("attempts", p.get("num_attempts")))}
        if t == "repeat":
            return "Repeat", {"num_cycles": "-1" if p.get("times") is None else _text(p["times"])}
        if t == "timeout":
            return "Timeout", {"msec": str(round(float(p.get("seconds", 0)) * 1000))}
        if t in SIMPLE_DECORATORS:
            return SIMPLE_DECORATORS[t], {}
        if t == "budget":
            return BUDGET_DECORATOR, {k: _text(p[k]) for k in ("actions", "scope") if p.get(k) is not None}
        if t in NAV2_CONTROLS:
            return NAV2_CONTROLS[t], ({"number_of_retries": _text(p.get("number_of_retries", 1))}
                                      if t == "recovery_node" else {})
        if t.startswith("opaque_") and p.get("btcpp_id"):
            return str(p["btcpp_id"]), {str(k): _text(v) for k, v in (p.get("ports") or {}).items()}
        return t, {str(k): _text(v) for k, v in p.items() if v is not None}

    def model_element(self) -> ET.Element:
        model = ET.Element("TreeNodesModel")
        for tag in sorted(self.models):
            kind, ports = self.models[tag]
            el = ET.SubElement(model, kind, {"ID": tag})
            for name in sorted(ports):
                ET.SubElement(el, "input_port", {"name": name})
        return model


def find_node(root: dict[str, Any], node_id: str) -> dict[str, Any]:
    """The structure node `node_id` (UserError listing a close id when there is none)."""
    todo, ids = [root], []
    while todo:
        node = todo.pop()
        if node.get("id") == node_id:
            return node
        ids.append(str(node.get("id")))
        todo += node.get("children", []) + list(node.get("cases", {}).values())
        if "default" in node:
            todo.append(node["default"])
    raise UserError(f"no node '{node_id}' in this tree{did_you_mean(node_id, ids)}")


def groot2_tree(structure: dict[str, Any], name: str = "tree", subtree: str | None = None) -> Groot2Tree:
    """The Groot2 XML of a trace header's `structure`; with `subtree`, only the part rooted at
    that node id (Groot2's free edition draws at most 20 nodes)."""
    from bt_grasp.default_registry import default_registry

    root = find_node(structure, subtree) if subtree else structure
    kinds = {nt.name: nt.kind for nt in default_registry()}
    b = _Builder(kinds)
    doc = ET.Element("root", {"BTCPP_format": "4", "main_tree_to_execute": name})
    tree = ET.SubElement(doc, "BehaviorTree", {"ID": name, "_fullpath": ""})
    tree.append(b.node(root, None))
    doc.append(b.model_element())
    ET.indent(doc, space="  ")
    xml = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(doc, encoding="unicode") + "\n"
    return Groot2Tree(xml=xml, uids=b.uids, count=b.next_uid - 1, parent=b.parent, single_child=b.single)
