"""Trace files: JSONL with a header, one line per tick, and a final line; flushed per tick so a
killed run leaves a readable trace up to its last tick."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, is_dataclass
from enum import Enum
from pathlib import Path
from typing import IO, Any

import numpy as np

from bt_grasp.errors import UserError


def jsonable(value: Any, depth: int = 0) -> Any:
    """A compact JSON-safe view of a blackboard value (arrays and frames become summaries)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, np.generic):
        return jsonable(value.item(), depth)
    if isinstance(value, np.ndarray):
        if value.size <= 16:
            return jsonable(value.tolist(), depth)
        return f"<array {'x'.join(map(str, value.shape))} {value.dtype}>"
    if depth > 4:
        return f"<{type(value).__name__}>"
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [jsonable(v, depth + 1) for v in value[:50]]
        return items + ([f"... {len(value) - 50} more"] if len(value) > 50 else [])
    if hasattr(value, "summary"):
        return jsonable(value.summary(), depth + 1)
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump(), depth + 1)
    cls = type(value).__name__
    if cls == "Execution":
        return {"fault": value.fault, "duration": round(float(value.duration), 4),
                "samples": len(value.telemetry)}
    if cls == "Located":
        return {"name": value.name, "object_id": value.object_id, "bbox": list(value.bbox),
                "points": len(value.points_base), "occluded_by": list(value.occluded_by)}
    if is_dataclass(value):
        return jsonable(asdict(value), depth + 1)
    return f"<{cls}>"


class TraceWriter:
    """Writes one JSON object per line and flushes (and fsyncs) after each tick."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = self.path.open("w", encoding="utf-8")

    def write(self, record: dict[str, Any], sync: bool = True) -> None:
        self._fh.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._fh.flush()
        if sync:
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


class Trace:
    """A trace read back: header, ticks, final (None when the run was killed)."""

    def __init__(self, header: dict[str, Any], ticks: list[dict[str, Any]], final: dict[str, Any] | None):
        self.header = header
        self.ticks = ticks
        self.final = final

    @property
    def complete(self) -> bool:
        return self.final is not None


def read_trace(path: str | Path) -> Trace:
    """Read a trace; a torn last line (the run was killed mid-write) is ignored."""
    path = Path(path)
    if not path.exists():
        raise UserError("trace file not found", file=str(path))
    header: dict[str, Any] | None = None
    ticks: list[dict[str, Any]] = []
    final = None
    lines = path.read_text(encoding="utf-8").splitlines()
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            if lineno == len(lines):
                break  # torn final write of a killed run
            raise UserError("not a bt_grasp trace line (invalid JSON)", str(path), lineno, 1) from None
        kind = rec.get("type") if isinstance(rec, dict) else None
        if kind == "header":
            header = rec
        elif kind == "tick":
            ticks.append(rec)
        elif kind == "final":
            final = rec
        else:
            raise UserError("not a bt_grasp trace line (expected type header|tick|final)",
                            str(path), lineno, 1)
    if header is None:
        raise UserError("not a bt_grasp trace (no header line; write one with `bt-grasp run --trace`)",
                        str(path), 1, 1)
    return Trace(header, ticks, final)
