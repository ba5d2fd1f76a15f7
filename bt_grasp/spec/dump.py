"""TreeSpec -> YAML in the compact authoring syntax (the inverse of load_tree_text).

Used by the BT.CPP importer and for include-expanded views; the tree's `properties:` are
written back as the file wrote them. Compactness rules: a leaf whose
ports are all at their defaults and whose id was generated is a bare string; ports equal to
their default and generated ids are omitted (reloading regenerates the same ids); leaves are
written in flow style `grasp: {id: grasp}`, composites in block style.
"""

from __future__ import annotations

from typing import Any

import yaml

from bt_grasp.default_registry import default_registry
from bt_grasp.registry import Registry
from bt_grasp.spec.model import Budgets, NodeSpec, TreeSpec


class _Flow(dict[str, Any]):
    """A mapping to emit in flow style."""


class _Dumper(yaml.SafeDumper):
    """SafeDumper that indents list items under their key, as the docs write trees."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _flow(dumper: yaml.SafeDumper, data: _Flow) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


def _block(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=False)


_Dumper.add_representer(_Flow, _flow)
_Dumper.add_representer(dict, _block)


def _node(node: NodeSpec, registry: Registry) -> Any:
    nt = registry.get(node.type)
    fields: dict[str, Any] = {}
    if node.id_given:
        fields["id"] = node.id
    for name, value in node.params.items():
        port = nt.ports.get(name) if nt else None
        if port is not None and value == port.default and type(value) is type(port.default):
            continue
        fields[name] = value
    if nt is not None and nt.arity == "one":
        if node.children:
            fields["child"] = _node(node.children[0], registry)
    elif node.children:
        fields["children"] = [_node(c, registry) for c in node.children]
    if node.cases:
        fields["cases"] = {label: _node(sub, registry) for label, sub in node.cases.items()}
    if node.default is not None:
        fields["default"] = _node(node.default, registry)
    structural = bool(node.children or node.cases or node.default is not None)
    if not fields and not structural:
        return node.type
    return {node.type: fields if structural else _Flow(fields)}


def tree_to_data(spec: TreeSpec) -> dict[str, Any]:
    """The plain-data form of a tree file (what dump_tree serialises)."""
    registry = spec.registry or default_registry()
    out: dict[str, Any] = {"tree": spec.name}
    if spec.description:
        out["description"] = spec.description
    if spec.goal:
        out["goal"] = _Flow(spec.goal) if all(not isinstance(v, (dict, list))
                                               for v in spec.goal.values()) else spec.goal
    base = Budgets()
    budgets = {k: getattr(spec.budgets, k) for k in ("actions", "perception_streak", "max_ticks")
               if getattr(spec.budgets, k) != getattr(base, k)}
    if budgets:
        out["budgets"] = _Flow(budgets)
    if spec.user_nodes:
        out["nodes"] = list(spec.user_nodes)
    out["root"] = _node(spec.root, registry)
    if spec.properties:
        out["properties"] = [_property(p.written) for p in spec.properties]
    return out


def _property(written: Any) -> Any:
    """A property as written, each event (a mapping of plain values) in flow style."""
    if isinstance(written, list):
        return [_property(v) for v in written]
    if not isinstance(written, dict):
        return written
    if all(not isinstance(v, dict) and not (isinstance(v, list) and
           any(isinstance(x, (dict, list)) for x in v)) for v in written.values()):
        return _Flow(written)
    return {k: _property(v) for k, v in written.items()}


def dump_tree(spec: TreeSpec) -> str:
    """YAML text that loads back (load_tree_text) to an equal TreeSpec, includes expanded."""
    return yaml.dump(tree_to_data(spec), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100)
