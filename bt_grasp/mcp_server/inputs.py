"""Tool arguments a planner sends: the ranges the session accepts and the checks that refuse the rest.

A refused argument raises InvalidInput, which the session turns into an `invalid_input` result.
"""

from __future__ import annotations

import math
from typing import Any

MAX_TEXT = 200  # referring expressions and place names longer than this are refused
PUSH_DIRECTIONS = ("auto", "left", "right", "up", "down")
PUSH_DISTANCE = (0.03, 0.20)  # metres; the push leaf's port range
LIFT_HEIGHT = (0.0, 0.40)  # metres


class InvalidInput(ValueError):
    """A tool argument the session refuses; becomes an `invalid_input` result."""


def force_limit(session: Any) -> float:
    """The largest grip force `grasp` accepts: the gripper's max_force_n (at least the default)."""
    default_force = float(session.registry.require("grasp").ports["force"].default)
    max_force = float(getattr(getattr(session.world.profile, "gripper", None), "max_force_n", 0) or 0)
    return max(default_force, max_force) if max_force else 1000.0


def text_arg(value: Any, what: str, required: bool = True) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InvalidInput(f"{what} is required (a referring text such as 'red mug')")
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text, not {type(value).__name__}")
    text = " ".join(value.split())
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"{what} is longer than {MAX_TEXT} characters")
    return text


def number_arg(value: Any, what: str, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(f"{what} must be a number")
    if not lo <= float(value) <= hi:
        raise InvalidInput(f"{what} must be within [{lo}, {hi}], got {value}")
    return float(value)


def vector_arg(value: Any, what: str, sizes: tuple[int, ...]) -> list[float]:
    if not isinstance(value, (list, tuple)) or len(value) not in sizes:
        raise InvalidInput(f"{what} must be a list of {' or '.join(map(str, sizes))} numbers")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InvalidInput(f"{what} must hold finite numbers")
        out.append(float(v))
    return out
