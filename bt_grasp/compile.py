"""Spec -> py_trees tree, through the node registry.

Compilation is cheap and side-effect free, so the runner compiles once per episode and the
verifier once per explored run.
"""

from __future__ import annotations

from typing import Any

from py_trees.behaviour import Behaviour

from bt_grasp.composites import Switch
from bt_grasp.context import RunContext


def _factory(node_type: Any) -> Any:
    """What builds the node: a leaf's class, a composite's build function (from its declaration)."""
    if node_type.factory is None:
        raise ValueError(f"node type {node_type.name!r} has no implementation registered")
    return node_type.factory


def compile_node(spec: Any, ctx: RunContext) -> Behaviour:
    """Build the behaviour for one NodeSpec (and its subtree)."""
    from bt_grasp.blackboard import ref_key

    node_type = ctx.registry.require(spec.type)
    node: Any  # a py_trees behaviour that also gets `bt_type`
    if spec.type == "switch":
        cases = {str(label): compile_node(child, ctx) for label, child in spec.cases.items()}
        default = compile_node(spec.default, ctx) if spec.default is not None else None
        key = ref_key(spec.params["on"]) or str(spec.params["on"])
        node = Switch(spec.id, key, cases, default, ctx)
    elif node_type.kind in ("composite", "decorator"):
        children = [compile_node(child, ctx) for child in spec.children]
        node = _factory(node_type)(spec.id, dict(spec.params), children, ctx)
    else:
        node = _factory(node_type)(spec.id, dict(spec.params), ctx)
    node.bt_type = spec.type  # for traces and DOT
    return node


def compile_tree(tree_spec: Any, ctx: RunContext) -> Behaviour:
    return compile_node(tree_spec.root, ctx)
