"""YAML -> plain dicts/lists that remember where every key and value was written.

PyYAML's `safe_load` throws positions away, so a later "mistyped port" could not name its line.
We compose the node graph instead and rebuild it as `PosDict` / `PosList`: ordinary dict/list
subclasses (so the rest of the code treats them as data) carrying the position of the container,
of each key and of each value. Scalar values are constructed by PyYAML's SafeConstructor, so
`true`, `1e3`, `0x10` mean what they mean in YAML; mapping keys are kept as the strings written.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bt_grasp.errors import UserError
from bt_grasp.spec.model import Pos

_MERGE_TAG = "tag:yaml.org,2002:merge"
_PLAIN_TAGS = ("tag:yaml.org,2002:seq", "tag:yaml.org,2002:map")


class PosDict(dict):
    """A mapping with `pos` (the mapping), `key_pos[k]` and `val_pos[k]`."""

    def __init__(self, pos: Pos) -> None:
        super().__init__()
        self.pos = pos
        self.key_pos: dict[Any, Pos] = {}
        self.val_pos: dict[Any, Pos] = {}

    def put(self, key: Any, value: Any, key_pos: Pos, val_pos: Pos) -> None:
        self[key] = value
        self.key_pos[key] = key_pos
        self.val_pos[key] = val_pos


class PosList(list):
    """A sequence with `pos` (the sequence) and `item_pos[i]`."""

    def __init__(self, pos: Pos) -> None:
        super().__init__()
        self.pos = pos
        self.item_pos: list[Pos] = []

    def put(self, value: Any, pos: Pos) -> None:
        self.append(value)
        self.item_pos.append(pos)


def mark_pos(file: str, mark: Any) -> Pos:
    """A PyYAML mark (0-based) as a 1-based Pos."""
    if mark is None:
        return Pos(file, 1, 1)
    return Pos(file, mark.line + 1, mark.column + 1)


def load_positioned(text: str, file: str) -> Any:
    """Parse one YAML document; None for an empty one. Raises UserError on bad YAML."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "invalid YAML"
        context = ""
        if exc.context and exc.problem:
            context = f" ({exc.context}"
            cm = exc.context_mark
            if cm is not None and mark is not None and (cm.line, cm.column) != (mark.line, mark.column):
                context += f" started at line {cm.line + 1}, column {cm.column + 1}"
            context += ")"
        raise _err(f"YAML syntax error: {problem}{context}", mark_pos(file, mark)) from None
    except yaml.YAMLError as exc:  # unmarked reader errors, e.g. control characters
        raise UserError(f"YAML syntax error: {exc}", file, 1, 1) from None
    if node is None:
        return None
    return _Builder(file).build(node)


def _err(message: str, pos: Pos) -> UserError:
    return UserError(message, pos.file, pos.line, pos.col)


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.constructor = SafeConstructor()
        self.active: set[int] = set()  # nodes on the current path, to reject recursive aliases

    def pos(self, node: Node) -> Pos:
        return mark_pos(self.file, node.start_mark)

    def build(self, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            try:
                return self.constructor.construct_object(node, deep=True)
            except yaml.MarkedYAMLError as exc:
                raise _err(f"YAML error: {exc.problem}", self.pos(node)) from None
        if node.tag not in _PLAIN_TAGS:
            raise _err(f"YAML tag '{node.tag}' is not supported in tree files", self.pos(node))
        if id(node) in self.active:
            raise _err("recursive YAML alias", self.pos(node))
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                out = PosList(self.pos(node))
                for item in node.value:
                    out.put(self.build(item), self.pos(item))
                return out
            if isinstance(node, MappingNode):
                return self._mapping(node)
            raise _err(f"unsupported YAML node {node.tag}", self.pos(node))  # pragma: no cover
        finally:
            self.active.discard(id(node))

    def _mapping(self, node: MappingNode) -> PosDict:
        out = PosDict(self.pos(node))
        for key_node, value_node in node.value:
            kpos = self.pos(key_node)
            if key_node.tag == _MERGE_TAG:
                raise _err("YAML merge keys (<<) are not supported in tree files", kpos)
            if not isinstance(key_node, ScalarNode):
                raise _err("mapping keys must be plain scalars", kpos)
            # Keys are names (node types, ports, labels), so they stay strings: under YAML 1.1
            # `on:` (the switch port) would otherwise become the boolean true.
            key = key_node.value
            if key in out:
                first = out.key_pos[key]
                raise _err(f"duplicate key '{key}' (first at line {first.line})", kpos)
            out.put(key, self.build(value_node), kpos, self.pos(value_node))
        return out


def plain(value: Any) -> Any:
    """Strip positions: PosDict/PosList -> dict/list, recursively."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def positioned(value: Any, pos: Pos) -> Any:
    """Give plain data (e.g. params passed from Python) positions, all at `pos`."""
    if isinstance(value, (PosDict, PosList)):
        return value
    if isinstance(value, dict):
        out = PosDict(pos)
        for k, v in value.items():
            out.put(k, positioned(v, pos), pos, pos)
        return out
    if isinstance(value, list):
        lst = PosList(pos)
        for v in value:
            lst.put(positioned(v, pos), pos)
        return lst
    return value


def kind_name(value: Any) -> str:
    """How to name a YAML value's kind in an error message."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ('{value}')"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
