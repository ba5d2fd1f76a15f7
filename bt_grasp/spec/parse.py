"""Positioned YAML -> NodeSpec, one node at a time: node syntax, ports, child structure.

Node syntax (docs/tree-format.md): a single-key mapping `{type: {fields}}`, or a bare string
for a leaf without required ports. The structure keys a node may carry follow from its arity:
`children:` (composites), `child:` (decorators), `cases:`/`default:` (switch). Includes are
handed to the loader through `ParseContext.include`, which returns a placeholder node that
the loader later splices out.
"""

from __future__ import annotations

from typing import Any, Protocol

from bt_grasp.errors import MAX_ERRORS, UserError, UserErrors, did_you_mean, each_error
from bt_grasp.registry import NodeType, Registry
from bt_grasp.spec.hints import node_as_port_hint, node_type_hint
from bt_grasp.spec.model import NodeSpec, Pos
from bt_grasp.spec.ports import check_port
from bt_grasp.spec.yaml_pos import PosDict, PosList, kind_name

INCLUDE_TYPES = ("include", "subtree")
STRUCTURE_KEYS = {"many": ("children",), "one": ("child",), "cases": ("cases", "default"),
                  "none": ()}
_ALL_STRUCTURE = ("children", "child", "cases", "default")


MAX_TREE_DEPTH = 64  # nodes nested in one another, includes counted (docs/tree-format.md)
MAX_TREE_NODES = 10_000  # nodes in the whole tree, includes expanded


class ParseContext(Protocol):
    """What node parsing needs from the file loader: the registry, includes, the count of nodes
    and nesting so far (shared across included files, so limits hold for the whole tree) and the
    errors found so far (a bad node is recorded and its siblings still parsed)."""

    depth: int
    nodes: int

    @property
    def errors(self) -> list[UserError]: ...

    @property
    def registry(self) -> Registry: ...

    def include(self, type_name: str, fields: PosDict, pos: Pos) -> NodeSpec: ...


def fail(msg: str, pos: Pos) -> UserError:
    return UserError(msg, pos.file, pos.line, pos.col)


def record(ctx: ParseContext, exc: UserError) -> None:
    """Keep `exc` with the file's other errors and go on, or stop once MAX_ERRORS are known."""
    for err in each_error(exc):
        if not any(err is known for known in ctx.errors):
            ctx.errors.append(err)
    if len(ctx.errors) >= MAX_ERRORS or getattr(exc, "final", False):
        raise UserErrors(ctx.errors, final=True)


def parse_nodes(items: list[tuple[Any, Pos]], ctx: ParseContext) -> list[NodeSpec]:
    """Sibling nodes: each bad one is recorded (and left out), so every sibling gets checked."""
    parsed = []
    for raw, pos in items:
        try:
            parsed.append(parse_node(raw, pos, ctx))
        except UserError as exc:
            record(ctx, exc)
    return parsed


def parse_node(raw: Any, pos: Pos, ctx: ParseContext) -> NodeSpec:
    """Validate one node (and, recursively, its sub-nodes) written at `pos`."""
    if ctx.depth >= MAX_TREE_DEPTH:  # a limit stops the check: every deeper node would repeat it
        raise UserErrors([fail(f"tree nested deeper than {MAX_TREE_DEPTH} nodes (includes count; flatten "
                               "repeated decorators into one)", pos)], final=True)
    ctx.nodes += 1
    if ctx.nodes > MAX_TREE_NODES:
        raise UserErrors([fail(f"tree has more than {MAX_TREE_NODES} nodes (includes expanded); split "
                               "the task into smaller trees", pos)], final=True)
    ctx.depth += 1
    try:
        return _parse_node(raw, pos, ctx)
    finally:
        ctx.depth -= 1


def _parse_node(raw: Any, pos: Pos, ctx: ParseContext) -> NodeSpec:
    if isinstance(raw, str):
        type_name, type_pos = raw, pos
        fields = PosDict(pos)
    elif isinstance(raw, PosDict):
        if len(raw) != 1:
            raise fail(_shape_message(raw), raw.pos if raw else pos)
        (type_name,) = raw.keys()
        type_pos = raw.key_pos[type_name]
        fields = raw[type_name]
        if fields is None:
            fields = PosDict(type_pos)
        elif not isinstance(fields, PosDict):
            example = "{children: [...]}" if isinstance(fields, PosList) else "{id: ...}"
            raise fail(f"the fields of '{type_name}' must be a mapping (e.g. {type_name}: "
                       f"{example}), got {kind_name(fields)}", raw.val_pos[type_name])
    else:
        raise fail("expected a node: a type name or a mapping {type: {fields}}, "
                   f"got {kind_name(raw)}", pos)
    if not isinstance(type_name, str):
        raise fail(f"node type must be a name, got {kind_name(type_name)}", type_pos)
    if type_name in INCLUDE_TYPES:
        return ctx.include(type_name, fields, type_pos)
    nt = ctx.registry.get(type_name)
    if nt is None:
        raise fail(f"unknown node type '{type_name}'{node_type_hint(type_name, ctx.registry, INCLUDE_TYPES)}",
                   type_pos)
    return _parse_fields(nt, fields, type_pos, ctx)


def _shape_message(raw: PosDict) -> str:
    if not raw:
        return "empty node: write a type name or {type: {fields}}"
    keys = [str(k) for k in raw]
    first = keys[0]
    return (f"a node is a mapping with exactly one key, its type; got {len(keys)} keys "
            f"({', '.join(keys)}); indent the fields under '{first}:'")


def _parse_fields(nt: NodeType, fields: PosDict, pos: Pos, ctx: ParseContext) -> NodeSpec:
    node = NodeSpec(type=nt.name, id="", pos=pos, id_given=False)
    errors_before = len(ctx.errors)
    given: dict[str, Any] = {}
    for key in fields:
        try:
            _parse_field(nt, node, given, fields, key, ctx)
        except UserError as exc:
            record(ctx, exc)
    for name, port in nt.ports.items():
        if name in given:
            node.params[name] = given[name]
        elif port.required and len(ctx.errors) == errors_before:  # else reported once the fields are right
            raise fail(f"{nt.name} is missing required port '{name}'"
                       + (f" ({port.doc})" if port.doc else ""), pos)
        else:
            node.params[name] = port.default
    if len(ctx.errors) == errors_before:  # a child left out for its own error is no missing child
        _check_arity(nt, node, fields, pos)
    return node


def _parse_field(nt: NodeType, node: NodeSpec, given: dict[str, Any], fields: PosDict, key: Any,
                 ctx: ParseContext) -> None:
    """One field of a node: its id, a structure key (its sub-nodes parsed) or a port value."""
    allowed_structure = STRUCTURE_KEYS[nt.arity]
    value, kpos, vpos = fields[key], fields.key_pos[key], fields.val_pos[key]
    if key == "id":
        if not isinstance(value, str) or not value.strip():
            raise fail(f"id must be a non-empty string, got {kind_name(value)}", vpos)
        node.id, node.id_given, node.id_pos = value, True, vpos
    elif key in allowed_structure:
        _parse_structure(nt, node, key, value, kpos, vpos, ctx)
    elif key in _ALL_STRUCTURE:
        raise fail(_wrong_structure(nt, key), kpos)
    elif key in nt.ports:
        given[key] = check_port(nt, nt.ports[key], value, vpos)
        node.param_pos[key] = vpos
    elif (misplaced := node_as_port_hint(nt, str(key), ctx.registry)) is not None:
        raise fail(misplaced, kpos)
    else:
        candidates = list(nt.ports) + list(allowed_structure) + ["id"]
        known = ", ".join(nt.ports) or "none"
        raise fail(f"unknown port '{key}' for {nt.name}{did_you_mean(str(key), candidates)}"
                   f"; its ports: {known}", kpos)


def _wrong_structure(nt: NodeType, key: str) -> str:
    if nt.arity == "none":
        return f"{nt.name} is a leaf and takes no '{key}:'"
    if nt.arity == "one":
        return (f"{nt.name} is a decorator: it takes exactly one 'child:', not '{key}:' "
                "(wrap several nodes in a sequence)")
    if nt.arity == "many":
        return f"{nt.name} takes a 'children:' list, not '{key}:'"
    return f"{nt.name} routes with 'cases:' and 'default:', not '{key}:'"


def _parse_structure(nt: NodeType, node: NodeSpec, key: str, value: Any, kpos: Pos,
                     vpos: Pos, ctx: ParseContext) -> None:
    if key == "children":
        if not isinstance(value, PosList):
            raise fail(f"children of {nt.name} must be a list of nodes, got {kind_name(value)}",
                       vpos)
        node.children = parse_nodes(list(zip(value, value.item_pos, strict=True)), ctx)
    elif key == "child":
        if isinstance(value, PosList):
            raise fail(f"{nt.name} takes exactly one child, got a list of {len(value)} "
                       "(wrap them in a sequence)", vpos)
        if value is None:
            raise fail(f"{nt.name} has an empty 'child:'; it needs exactly one child node", kpos)
        node.children = [parse_node(value, vpos, ctx)]
    elif key == "cases":
        if value is None:
            value = PosDict(vpos)
        if not isinstance(value, PosDict):
            raise fail(f"cases of {nt.name} must be a mapping label: node, got {kind_name(value)}",
                       vpos)
        for label, sub in value.items():
            lpos = value.key_pos[label]
            if not isinstance(label, str):
                raise fail(f"case label must be a name, got {kind_name(label)}", lpos)
            node.case_pos[label] = lpos
            node.cases[label] = parse_node(sub, value.val_pos[label], ctx)
    elif key == "default":
        node.default = parse_node(value, vpos, ctx)


def _check_arity(nt: NodeType, node: NodeSpec, fields: PosDict, pos: Pos) -> None:
    if nt.arity == "many" and not node.children:
        where = fields.val_pos.get("children", pos)
        raise fail(f"empty {nt.name}: a composite needs at least one child under 'children:'",
                   where)
    if nt.arity == "one" and not node.children:
        raise fail(f"{nt.name} needs exactly one child under 'child:'", pos)
    if nt.arity == "cases" and not node.cases and node.default is None:
        where = fields.val_pos.get("cases", pos)
        raise fail(f"empty {nt.name}: give at least one case under 'cases:' (or a 'default:')",
                   where)
