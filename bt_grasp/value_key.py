"""An exact, hashable key of a blackboard value, for merging search states that hold the same
values (bt_grasp.verifier). Unlike json_encoding.jsonable, a display view that cuts long lists
and shows big arrays as their shape, two values get the same key only if they are equal: every
list item counts, arrays by dtype, shape and bytes, floats by their exact repr (so NaN equals
NaN and 1 and 1.0 inside a structure stay apart, as JSON kept them).

A leaf module (numpy and the standard library only).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any

import numpy as np

_PLAIN = (str, int, float, bool, type(None))


def value_key(value: Any) -> Hashable:
    """The value itself when it is a plain scalar (the common case, no cost), else its exact
    canonical form (`canonical`)."""
    if isinstance(value, _PLAIN):
        return value
    return canonical(value)


def canonical(value: Any) -> Hashable:
    """Nested tuples, tagged by kind, equal exactly when the values are: dict keys in a fixed
    order, sets sorted, dataclasses and pydantic models by their fields. Any other object is
    itself when hashable (its own equality decides), else its type and attributes."""
    if value is None or isinstance(value, (bool, int, str)):
        return (type(value).__name__, value)
    if isinstance(value, float):
        return ("float", float.__repr__(value))  # np.float64 too, as its Python value
    if isinstance(value, Enum):
        return ("enum", type(value).__qualname__, canonical(value.value))
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            return ("array", "object", value.shape, tuple(canonical(v) for v in value.ravel()))
        return ("array", value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
    if isinstance(value, np.generic):  # a numpy scalar is the Python value it holds, as in a trace
        return canonical(value.item())
    if isinstance(value, dict):
        items = sorted(((repr(canonical(k)), canonical(v)) for k, v in value.items()), key=lambda kv: kv[0])
        return ("dict", tuple(items))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(canonical(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(canonical(v)) for v in value)))
    if is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__, tuple((f.name, canonical(getattr(value, f.name))) for f in fields(value)))
    if hasattr(value, "model_dump"):
        return (type(value).__qualname__, canonical(value.model_dump()))
    try:
        hash(value)
    except TypeError:
        return (type(value).__qualname__, canonical(vars(value)) if hasattr(value, "__dict__") else id(value))
    return ("object", value)
