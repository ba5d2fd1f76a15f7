"""YAML -> plain dicts/lists that remember where every key and value was written.

PyYAML's `safe_load` throws positions away, so a later "mistyped port" could not name its line.
We read the parser's events instead and build `PosDict` / `PosList`: ordinary dict/list
subclasses (so the rest of the code treats them as data) carrying the position of the container,
of each key and of each value. Scalar values are constructed by PyYAML's SafeConstructor, so
`true`, `1e3`, `0x10` mean what they mean in YAML; mapping keys are kept as the strings written.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.reader import ReaderError

from bt_grasp.errors import UserError, excerpt
from bt_grasp.spec.model import Pos

_MERGE_TAG = "tag:yaml.org,2002:merge"


class PosDict(dict[Any, Any]):
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


class PosList(list[Any]):
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


# Limits on one YAML document (docs/tree-format.md, "Limits"): generous for any real tree, and
# they keep a hostile file from taking minutes or gigabytes.
MAX_BYTES = 1024 * 1024  # one file's size
MAX_DEPTH = 200  # mappings and lists nested in one another
MAX_VALUES = 200_000  # keys, values and items, counting every alias expansion

_PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~10x faster


def load_positioned(text: str, file: str) -> Any:
    """Parse one YAML document; None for an empty one. Raises UserError on bad YAML.

    Built from the parser's event stream in one loop (no recursion), so depth, size and alias
    expansion are checked as the document is read, before anything is expanded.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise UserError(f"file is {size / 1e6:.1f} MB; tree files are limited to "
                        f"{MAX_BYTES // 1024} kB (split it with include:)", file, 1, 1)
    try:
        return _Builder(file).run(yaml.parse(text, Loader=_PARSER))
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
    except ReaderError as exc:  # a character YAML does not allow (NUL, ESC, ...)
        line, col = _line_col(text, exc.position)
        what = f"#x{exc.character:04x}" if isinstance(exc.character, int) else repr(exc.character)
        raise UserError(f"YAML syntax error: character {what} is not allowed in YAML text "
                        "(remove it or write it escaped inside a quoted string)", file, line, col) from None
    except yaml.YAMLError as exc:
        raise UserError(f"YAML syntax error: {exc}", file, 1, 1) from None


def _line_col(text: str, position: int) -> tuple[int, int]:
    before = text[:position]
    return before.count("\n") + 1, position - (before.rfind("\n") + 1) + 1


def _err(message: str, pos: Pos) -> UserError:
    return UserError(message, pos.file, pos.line, pos.col)


class _Frame:
    """An open mapping or list while its events are read."""

    __slots__ = ("value", "anchor", "key", "key_pos", "count")

    def __init__(self, value: PosDict | PosList, anchor: str | None) -> None:
        self.value = value
        self.anchor = anchor
        self.key: str | None = None
        self.key_pos: Pos | None = None
        self.count = 1


class _Builder:
    """Events -> PosDict / PosList / scalars, iteratively, with the limits above."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.constructor = SafeConstructor()
        self.resolver = yaml.resolver.Resolver()
        self.anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, number of values)
        self.open_anchors: set[str] = set()
        self.stack: list[_Frame] = []
        self.total = 0
        self.root: Any = None
        self.seen_doc = False

    def pos(self, mark: Any) -> Pos:
        return mark_pos(self.file, mark)

    def run(self, events: Any) -> Any:
        for ev in events:
            if isinstance(ev, yaml.DocumentStartEvent):
                if self.seen_doc:
                    raise _err("a tree file holds one YAML document; remove the second '---'",
                               self.pos(ev.start_mark))
                self.seen_doc = True
            elif isinstance(ev, yaml.MappingStartEvent):
                self._open(PosDict(self.pos(ev.start_mark)), ev, "tag:yaml.org,2002:map")
            elif isinstance(ev, yaml.SequenceStartEvent):
                self._open(PosList(self.pos(ev.start_mark)), ev, "tag:yaml.org,2002:seq")
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                frame = self.stack.pop()
                if frame.anchor is not None:
                    self.open_anchors.discard(frame.anchor)
                    self.anchors[frame.anchor] = (frame.value, frame.count)
                self._add(frame.value, frame.value.pos, frame.count, ev)
            elif isinstance(ev, yaml.ScalarEvent):
                self._scalar(ev)
            elif isinstance(ev, yaml.AliasEvent):
                self._alias(ev)
        return self.root

    def _count(self, n: int, mark: Any, alias: bool) -> None:
        self.total += n
        if self.total > MAX_VALUES:
            why = "its aliases expand" if alias else "it holds"
            raise _err(f"document too large: {why} more than {MAX_VALUES} values (write the tree "
                       "out without nested aliases, or split it with include:)", self.pos(mark))

    def _open(self, value: PosDict | PosList, ev: Any, plain_tag: str) -> None:
        if ev.tag not in (None, "!", plain_tag):
            raise _err(f"YAML tag '{ev.tag}' is not supported in tree files", self.pos(ev.start_mark))
        if self.stack and isinstance(self.stack[-1].value, PosDict) and self.stack[-1].key is None:
            raise _err("mapping keys must be plain scalars", self.pos(ev.start_mark))
        if len(self.stack) >= MAX_DEPTH:
            raise _err(f"nested deeper than {MAX_DEPTH} levels (flatten the tree, or split it "
                       "with include:)", self.pos(ev.start_mark))
        self._count(1, ev.start_mark, False)
        if ev.anchor is not None:
            self.open_anchors.add(ev.anchor)
        self.stack.append(_Frame(value, ev.anchor))

    def _scalar(self, ev: Any) -> None:
        pos = self.pos(ev.start_mark)
        self._count(1, ev.start_mark, False)
        if self.stack and isinstance(self.stack[-1].value, PosDict) and self.stack[-1].key is None:
            # Keys are names (node types, ports, labels), so they stay strings: under YAML 1.1
            # `on:` (the switch port) would otherwise become the boolean true.
            frame = self.stack[-1]
            mapping = frame.value
            assert isinstance(mapping, PosDict)  # the condition above
            # types-PyYAML leaves BaseResolver.resolve unannotated
            implicit_tag = self.resolver.resolve(ScalarNode, ev.value, ev.implicit)  # type: ignore[no-untyped-call]
            if ev.tag is None and implicit_tag == _MERGE_TAG:
                raise _err("YAML merge keys (<<) are not supported in tree files", pos)
            if ev.value in mapping:
                first = mapping.key_pos[ev.value]
                raise _err(f"duplicate key '{ev.value}' (first at line {first.line})", pos)
            frame.key, frame.key_pos = ev.value, pos
            return
        tag = (ev.tag if ev.tag not in (None, "!")
               else self.resolver.resolve(ScalarNode, ev.value, ev.implicit))  # type: ignore[no-untyped-call]
        if ev.tag == "!":
            tag = "tag:yaml.org,2002:str"
        node = ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, ev.style)
        try:
            value = self.constructor.construct_object(node, deep=True)
        except yaml.MarkedYAMLError as exc:
            raise _err(f"YAML error: {exc.problem}", pos) from None
        if ev.anchor is not None:
            self.anchors[ev.anchor] = (value, 1)
        self._add(value, pos, 0, ev)

    def _alias(self, ev: Any) -> None:
        pos = self.pos(ev.start_mark)
        if ev.anchor in self.open_anchors:
            raise _err("recursive YAML alias", pos)
        if ev.anchor not in self.anchors:
            raise _err(f"undefined YAML alias '*{excerpt(ev.anchor)}' (define '&{excerpt(ev.anchor)}' "
                       "before using it)", pos)
        value, n = self.anchors[ev.anchor]
        self._count(n, ev.start_mark, True)
        if self.stack and isinstance(self.stack[-1].value, PosDict) and self.stack[-1].key is None:
            raise _err("mapping keys must be plain scalars, not aliases", pos)
        self._add(value, pos, n, ev)

    def _add(self, value: Any, pos: Pos, n: int, ev: Any) -> None:
        """Put a finished value into the open container (or make it the document)."""
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        frame.count += n + 1
        if isinstance(frame.value, PosList):
            frame.value.put(value, pos)
        else:
            assert frame.key_pos is not None  # a mapping's value follows its key
            frame.value.put(frame.key, value, frame.key_pos, pos)
            frame.key = None


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
        return f"a string ('{excerpt(value)}')"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


# -- reading a user's file as text (tree files, robot profiles, vocabularies) ---------------------

def decode_text(data: bytes, display: str, pos: Pos | None = None) -> str:
    """UTF-8 text (a leading BOM is dropped); anything else is one error naming line and column."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise at_include("UTF-16 text; save the file as UTF-8", display, pos, Pos(display, 1, 1))
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        before = data[:exc.start]
        line = before.count(b"\n") + 1
        col = len(before[before.rfind(b"\n") + 1:].decode("utf-8", "replace")) + 1
        raise at_include(f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8", display, pos,
                  Pos(display, line, col)) from None


def at_include(msg: str, display: str, pos: Pos | None, inner: Pos | None = None) -> UserError:
    """An error about file `display`: at `inner` in it, or at `pos` (the include naming it)."""
    if pos is None:
        return UserError(msg, display, inner.line if inner else None, inner.col if inner else None)
    return UserError(f"{display}: {msg}", pos.file, pos.line, pos.col)
