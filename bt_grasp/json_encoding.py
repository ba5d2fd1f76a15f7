"""The JSON encoding of run values: `jsonable`, a compact display view of a blackboard value
(long lists cut, big arrays as their shape: for traces and summaries, not for telling values
apart), and `encode_record`, one line of strict JSON (non-finite numbers as null).

A leaf module (numpy and the standard library only), so the trace writer, the runner, the tree
structure and the verifier can share it without importing one another.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, is_dataclass
from enum import Enum
from typing import Any

import numpy as np

_PLAIN = frozenset((str, int, bool, type(None)))  # exact types JSON takes as they are


def jsonable_changes(changes: dict[str, Any]) -> dict[str, Any]:
    """`jsonable` of a flat dict of blackboard changes, skipping the walk for plain values (the
    common case: labels, flags, counts), so tracing a tick costs little more than the tick."""
    if all(type(v) in _PLAIN for v in changes.values()) and all(type(k) is str for k in changes):
        return changes
    return {str(k): v if type(v) in _PLAIN else jsonable(v, 1) for k, v in changes.items()}


def jsonable(value: Any, depth: int = 0) -> Any:
    """A compact JSON-safe view of a blackboard value (arrays and frames become summaries)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
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
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value), depth + 1)
    return f"<{cls}>"


def finite(value: Any) -> Any:
    """`value` with every float that is not finite replaced by None (JSON has no NaN/Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


# One encoder for every line: the stdlib's C encoder, without the per-call set-up of json.dumps.
# Output is byte for byte what json.dumps(record, separators=(",", ":")) gives; allow_nan=False
# makes a non-finite number an error, caught to write the record again through `finite`.
_ENCODE = json.JSONEncoder(separators=(",", ":"), check_circular=False, allow_nan=False).encode


def encode_record(record: Any) -> str:
    """`record` as one line of strict JSON (non-finite numbers as null)."""
    try:
        return _ENCODE(record)
    except ValueError:  # NaN or Infinity somewhere: rare, so only then walk the record
        return _ENCODE(finite(record))
