"""Reading trace files back (bt_grasp/trace_writer.py writes them): every record is checked, so
a damaged or foreign file is one error naming its line, and a torn last line (a run killed while
writing) is ignored."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from bt_grasp.errors import UserError


def clock_of(record: dict[str, Any], default: float = 0.0) -> float:
    """A record's clock in seconds; `default` where it has none or it is not a finite number
    (null in a trace, NaN/Infinity in one written before they became null)."""
    value = record.get("clock")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return default


class Trace:
    """A trace read back: header, ticks, final (None when the run was killed)."""

    def __init__(self, header: dict[str, Any], ticks: list[dict[str, Any]], final: dict[str, Any] | None):
        self.header = header
        self.ticks = ticks
        self.final = final

    @property
    def complete(self) -> bool:
        return self.final is not None


MAX_STRUCTURE_DEPTH = 200  # nodes nested in a trace's `structure` (trees are limited to 64)


class _Bad(Exception):
    """A malformed record; the message says what is wrong."""


def _need(ok: bool, message: str) -> None:
    if not ok:
        raise _Bad(message)


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_structure(root: Any) -> None:
    """`structure` as written by bt_grasp.structure: nodes {id, type, params?, children?,
    cases?, default?}, checked without recursion so a hostile depth cannot crash the reader."""
    todo = [(root, "structure", 1)]
    while todo:
        node, where, depth = todo.pop()
        _need(depth <= MAX_STRUCTURE_DEPTH, f"{where} is nested deeper than {MAX_STRUCTURE_DEPTH} nodes")
        _need(isinstance(node, dict), f"{where} must be a node object {{id, type, ...}}")
        _need(isinstance(node.get("id"), str) and isinstance(node.get("type"), str),
              f"{where} needs string 'id' and 'type'")
        _need(isinstance(node.get("params", {}), dict), f"{where}.params must be an object")
        children = node.get("children", [])
        _need(isinstance(children, list), f"{where}.children must be a list")
        todo += [(c, f"{where}.children[{i}]", depth + 1) for i, c in enumerate(children)]
        cases = node.get("cases", {})
        _need(isinstance(cases, dict), f"{where}.cases must be an object")
        todo += [(c, f"{where}.cases.{k}", depth + 1) for k, c in cases.items()]
        if "default" in node:
            todo.append((node["default"], f"{where}.default", depth + 1))


def _check_record(kind: str, rec: dict[str, Any]) -> None:
    if kind == "header":
        _need(isinstance(rec.get("tree", ""), str), "header 'tree' must be a string")
        if "structure" in rec:
            _check_structure(rec["structure"])
    elif kind == "tick":
        _need(isinstance(rec.get("tick"), int) and not isinstance(rec.get("tick"), bool),
              "tick record needs an integer 'tick'")
        _need(_is_num(rec.get("clock")) or rec.get("clock") is None,
              "tick record needs a number 'clock' (null where it was not finite)")
        visited = rec.get("visited")
        _need(isinstance(visited, list) and all(
            isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v) for v in visited),
            "tick 'visited' must be a list of [node id, status] string pairs")
        events = rec.get("events", [])
        _need(isinstance(events, list) and all(isinstance(e, dict) for e in events),
              "tick 'events' must be a list of objects")
        _need(isinstance(rec.get("blackboard", {}), dict), "tick 'blackboard' must be an object")
        _need(isinstance(rec.get("ledger", {}), dict), "tick 'ledger' must be an object")
    else:
        for key in ("decision", "reason"):
            _need(isinstance(rec.get(key, ""), (str, type(None))), f"final '{key}' must be a string")


class TornLine(UserError):
    """A line that is not (yet) whole JSON: an error, unless it is the last line of a file that a
    run is still writing or was killed while writing."""


def parse_record(raw: bytes, display: str, lineno: int) -> dict[str, Any]:
    """One trace line -> its checked record; UserError (TornLine if not JSON) naming the line."""
    try:
        rec = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TornLine(f"not a bt_grasp trace line (not UTF-8 text, byte 0x{raw[exc.start]:02x})",
                       display, lineno, exc.start + 1) from None
    except json.JSONDecodeError as exc:
        raise TornLine("not a bt_grasp trace line (invalid JSON)", display, lineno, exc.colno) from None
    except RecursionError:
        raise UserError("not a bt_grasp trace line (JSON nested too deeply)", display, lineno, 1) from None
    kind = rec.get("type") if isinstance(rec, dict) else None
    if kind not in ("header", "tick", "final"):
        raise UserError("not a bt_grasp trace line (expected an object with type header|tick|final)",
                        display, lineno, 1)
    try:
        _check_record(kind, rec)
    except _Bad as exc:
        raise UserError(f"bad trace record: {exc}", display, lineno, 1) from None
    return rec


def no_header_error(display: str) -> UserError:
    return UserError("not a bt_grasp trace (no header line; write one with `bt-grasp run --trace`)",
                     display, 1, 1)


def read_trace(path: str | Path) -> Trace:
    """Read a trace; a torn last line (the run was killed mid-write) is ignored.

    Every record is checked, so a damaged or foreign file is one error naming its line. Header
    lines before the first tick refine one another (a run writes what it knows before set-up,
    then the rest), later fields winning.
    """
    path = Path(path)
    display = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError("trace file not found", file=display) from None
    except IsADirectoryError:
        raise UserError("is a directory, not a trace file", file=display) from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", file=display) from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UserError("UTF-16 text; a trace is UTF-8 JSON lines (written by `bt-grasp run --trace`)",
                        display, 1, 1)
    header: dict[str, Any] | None = None
    header_line = 1
    ticks: list[dict[str, Any]] = []
    final = None
    lines = data.split(b"\n")
    while lines and not lines[-1].strip():
        lines.pop()
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            rec = parse_record(raw, display, lineno)
        except TornLine:
            if lineno == len(lines):
                break  # torn final write of a killed run
            raise
        kind = rec["type"]
        if kind == "header":
            header = rec if header is None or ticks else {**header, **rec}
            header_line = lineno
        elif kind == "tick":
            ticks.append(rec)
        else:
            final = rec
    if header is None:
        raise no_header_error(display)
    if "structure" not in header:
        raise UserError("bad trace record: the header has no 'structure' (the tree's nodes); "
                        "record the run again with `bt-grasp run --trace`", display, header_line, 1)
    return Trace(header, ticks, final)
