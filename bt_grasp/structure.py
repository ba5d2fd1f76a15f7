"""A plain-dict view of a tree's structure: stored in trace headers so `bt-grasp dot` needs only
the trace, and shared by the DOT renderer for tree files."""

from __future__ import annotations

from typing import Any

from bt_grasp.json_encoding import jsonable


def structure(node: Any) -> dict[str, Any]:
    """NodeSpec -> {id, type, params, children, cases, default}."""
    out: dict[str, Any] = {"id": node.id, "type": node.type, "params": jsonable(node.params)}
    if node.children:
        out["children"] = [structure(c) for c in node.children]
    if getattr(node, "cases", None):
        out["cases"] = {str(k): structure(v) for k, v in node.cases.items()}
    if getattr(node, "default", None) is not None:
        out["default"] = structure(node.default)
    return out


def iter_structure(node: dict[str, Any]):
    """Pre-order (parent, edge label, node) over a structure dict."""
    stack: list[tuple[dict | None, str, dict]] = [(None, "", node)]
    while stack:
        parent, label, cur = stack.pop()
        yield parent, label, cur
        kids: list[tuple[str, dict]] = [("", c) for c in cur.get("children", [])]
        kids += [(str(k), v) for k, v in cur.get("cases", {}).items()]
        if "default" in cur:
            kids.append(("default", cur["default"]))
        for lab, child in reversed(kids):
            stack.append((cur, lab, child))
