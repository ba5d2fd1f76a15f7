"""BT.CPP XML read with positions, safely: elements keep their line and column, DTDs and deep
nesting are refused, and a position in the YAML an import produces maps back to the XML."""

from __future__ import annotations

import xml.parsers.expat
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.errors import UserError
from bt_grasp.spec.model import NodeSpec, Pos


@dataclass
class El:
    """An XML element with the position of its start tag (1-based line and column)."""

    tag: str
    attrib: dict[str, str]
    line: int
    col: int
    children: list[El] = field(default_factory=list)


MAX_XML_BYTES = 1024 * 1024  # like tree files (docs/tree-format.md, "Limits")
MAX_XML_DEPTH = 100  # elements nested in one another


def parse_xml(text: str | bytes, file: str) -> El:
    """Parse XML into El nodes; malformed XML -> UserError at the parser's position.

    Bytes are decoded by expat itself (UTF-8, or what the XML declaration names), so a bad
    byte is reported at its line. A DTD is refused outright: BT.CPP never needs one, and entity
    declarations are how XML documents read local files or expand to gigabytes.
    """
    if len(text) > MAX_XML_BYTES:
        raise UserError(f"file is {len(text) / 1e6:.1f} MB; BT.CPP documents are limited to "
                        f"{MAX_XML_BYTES // 1024} kB", file, 1, 1)
    parser = xml.parsers.expat.ParserCreate()
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[El] = []
    holder: list[El] = []

    def here(what: str) -> UserError:
        return UserError(what, file, parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)

    def doctype(*_: Any) -> None:
        raise here("a DTD (<!DOCTYPE ...>) is not accepted in BT.CPP documents; remove it")

    def start(tag: str, attrs: dict[str, str]) -> None:
        if len(stack) >= MAX_XML_DEPTH:
            raise here(f"elements nested deeper than {MAX_XML_DEPTH} levels")
        el = El(tag, dict(attrs), parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)
        if stack:
            stack[-1].children.append(el)
        else:
            holder.append(el)
        stack.append(el)

    def end(tag: str) -> None:
        stack.pop()

    parser.StartDoctypeDeclHandler = doctype
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as exc:
        message = xml.parsers.expat.ErrorString(exc.code)
        raise UserError(f"malformed XML: {message}", file, exc.lineno, exc.offset + 1) from None
    return holder[0]


def xml_pos(text: str, root: NodeSpec, line: int | None) -> Pos | None:
    """The XML position of the node written at or before `line` of the dumped YAML `text`.

    The dump lists nodes in the spec's order, so walking both together pairs each YAML node
    with the NodeSpec (and its XML element position) it was written from.
    """
    from bt_grasp.spec.yaml_pos import PosDict, load_positioned

    if line is None:
        return None
    data = load_positioned(text, "<imported>")
    pairs: list[tuple[int, NodeSpec]] = []
    todo = [(data["root"], data.val_pos["root"], root)]
    while todo:
        raw, pos, node = todo.pop()
        pairs.append((pos.line, node))
        fields = raw[next(iter(raw))] if isinstance(raw, PosDict) and len(raw) == 1 else None
        if not isinstance(fields, PosDict):
            continue
        kids = []
        if isinstance(fields.get("children"), list):
            kids = list(zip(fields["children"], fields["children"].item_pos, strict=False))
        elif "child" in fields:
            kids = [(fields["child"], fields.val_pos["child"])]
        todo += [(r, p, n) for (r, p), n in zip(kids, node.children, strict=False)]
        cases = fields.get("cases")
        if isinstance(cases, PosDict):
            todo += [(cases[k], cases.val_pos[k], node.cases[k]) for k in cases if k in node.cases]
        if "default" in fields and node.default is not None:
            todo.append((fields["default"], fields.val_pos["default"], node.default))
    before = [(ln, n) for ln, n in pairs if ln <= line and n.pos is not None]
    if not before:
        return None
    return max(before, key=lambda p: p[0])[1].pos
