"""What BT.CPP's schema has no room for: bt_grasp metadata and the derived blackboard ports.

BT.CPP v4's XSD (`writeTreeXSD`) allows only `ID` on <BehaviorTree>, and on a node only `name`,
the pre/post-condition scripts and the declared ports: no `_bt_grasp_*` attribute validates.
The metadata therefore travels in one processing instruction before <root>,

    <?bt_grasp {"tree": {...budgets, goal, description...}, "nodes": {"<name>": {...}}}?>

which XML schemas, tinyxml2 (BT.CPP's parser) and the BT.CPP loader all ignore. On import it
is turned back into the `_bt_grasp_*` attributes the importer reads (documents written before
this change, which carry the attributes themselves, still import).

Derived ports (registry.KeyUse: `result_best="{objects.best}"`, `reason="{grasp.reason}"`) are
written by the exporter so that BT.CPP sees every entry a leaf touches; bt_grasp computes those
entries itself, so the importer checks that each one names the entry bt_grasp would use and
drops it.
"""

from __future__ import annotations

import json
import re
import xml.parsers.expat
from typing import Any, Protocol

from bt_grasp.blackboard import ref_key
from bt_grasp.errors import UserError
from bt_grasp.interop.common import (
    BARE_ATTR,
    BUDGET_ATTRS,
    EXPORTED_ATTR,
    GOAL_ATTR,
    NODES_ATTR,
    OUTCOMES_ATTR,
    REFILL_ATTR,
    SCOPE_ATTR,
    SECONDS_ATTR,
)
from bt_grasp.registry import NodeType, Registry

PI_TARGET = "bt_grasp"
# Per-node metadata field -> the attribute the importer reads; values are kept as strings.
NODE_FIELDS = {"refill": REFILL_ATTR, "scope": SCOPE_ATTR, "seconds": SECONDS_ATTR,
               "bare": BARE_ATTR, "outcomes": OUTCOMES_ATTR}
_TEMPLATE = re.compile(r"\{(\w+)\}")


class _Element(Protocol):
    tag: str
    attrib: dict[str, str]
    line: int
    col: int
    children: list[Any]


def key_of(value: Any) -> str:
    """The blackboard entry a port value names ("{objects}" and "objects" -> "objects")."""
    return ref_key(value) or str(value)


def derived_key(template: str, node_id: str, port_value: Any) -> str:
    """Fill a KeyUse template: `{id}` is the node id, `{port}` the entry that port names."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        return node_id if name == "id" else key_of(port_value(name))

    return _TEMPLATE.sub(sub, template)


# -- the processing instruction ----------------------------------------------------------------

def metadata_pi(meta: dict[str, Any]) -> str:
    """`<?bt_grasp JSON?>`; "?>" cannot occur outside JSON strings, so escaping it there is enough."""
    text = json.dumps(meta, sort_keys=True, ensure_ascii=False).replace("?>", "?\\u003e")
    return f"<?{PI_TARGET} {text}?>"


def read_metadata(text: str, file: str) -> dict[str, Any] | None:
    """The JSON of the first `<?bt_grasp ...?>` in the document, or None."""
    found: list[tuple[str, int, int]] = []
    parser = xml.parsers.expat.ParserCreate()

    def pi(target: str, data: str) -> None:
        if target == PI_TARGET and not found:
            found.append((data, parser.CurrentLineNumber, parser.CurrentColumnNumber + 1))

    parser.ProcessingInstructionHandler = pi
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError:
        return None  # the importer's own parse reports the error with its position
    if not found:
        return None
    data, line, col = found[0]
    try:
        meta = json.loads(data)
    except ValueError as exc:
        raise UserError(f"bad JSON in <?{PI_TARGET} ...?>: {exc} (re-export the tree)", file, line,
                        col) from None
    if not isinstance(meta, dict):
        raise UserError(f"<?{PI_TARGET} ...?> must hold a JSON object (re-export the tree)", file, line, col)
    return meta


def apply_metadata(root: _Element, text: str, file: str) -> None:
    """Put the PI's metadata back as the `_bt_grasp_*` attributes the importer reads."""
    meta = read_metadata(text, file)
    if meta is None:
        return
    tree = meta.get("tree") or {}
    for bt in (c for c in root.children if c.tag == "BehaviorTree"):
        if bt.attrib.get("ID") != root.attrib.get("main_tree_to_execute", bt.attrib.get("ID")):
            continue
        bt.attrib.setdefault(EXPORTED_ATTR, "true" if tree.get("exported") else "false")
        if tree.get("description"):
            bt.attrib.setdefault("_description", str(tree["description"]))
        for key, attr in BUDGET_ATTRS.items():
            if key in (tree.get("budgets") or {}):
                bt.attrib.setdefault(attr, str(tree["budgets"][key]))
        if tree.get("goal"):
            bt.attrib.setdefault(GOAL_ATTR, json.dumps(tree["goal"], sort_keys=True))
        if tree.get("nodes"):
            bt.attrib.setdefault(NODES_ATTR, json.dumps(list(tree["nodes"])))
    per_node = meta.get("nodes") or {}
    if not per_node:
        return
    stack = list(root.children)
    while stack:
        el = stack.pop()
        stack.extend(el.children)
        fields = per_node.get(el.attrib.get("name", ""))
        if fields:
            for field, attr in NODE_FIELDS.items():
                if field in fields:
                    value = fields[field]
                    el.attrib.setdefault(attr, ";".join(map(str, value)) if isinstance(value, list)
                                         else str(value).lower() if isinstance(value, bool) else str(value))


# -- derived ports -------------------------------------------------------------------------------

def leaf_port_value(nt: NodeType, attrib: dict[str, str]):
    """port name -> its value on an element, falling back to the registry default."""
    return lambda name: attrib.get(name, nt.ports[name].default if name in nt.ports else None)


def strip_key_ports(root: _Element, registry: Registry, file: str) -> None:
    """Check and drop the derived ports of bt_grasp leaves (they are recomputed on import)."""
    stack = list(root.children)
    while stack:
        el = stack.pop()
        stack.extend(el.children)
        nt = registry.get(el.tag)
        if nt is None or not nt.keys:
            continue
        node_id = el.attrib.get("name", el.tag)
        for use in nt.keys:
            if use.port not in el.attrib or use.port in nt.ports:
                continue
            raw = el.attrib[use.port]
            want = derived_key(use.key, node_id, leaf_port_value(nt, el.attrib))
            if key_of(raw) != want:
                raise UserError(f"port {use.port}=\"{raw}\" of <{el.tag}> must be \"{{{want}}}\": bt_grasp "
                                f"always uses {use.key} (remap the port it derives from instead)",
                                file, el.line, el.col)
            del el.attrib[use.port]
