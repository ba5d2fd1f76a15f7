"""Checks on the values drivers and perceivers hand back, where they enter a run.

Why one module: a driver's `elapsed` of '1.5 s', a NaN duration, a camera pose of infinities or a
perceiver's list of None would otherwise surface far from the call that produced them (a clock
that jumps, a trace that cannot be written, a crash in a planner). Each check returns the value
it accepted or raises SeamFault with one line naming what was wrong; the leaf that made the call
turns it into that call's `fault` outcome (nodes/base.py: Leaf.update and Leaf._poll), so the
tree routes it like any other outcome.

What is not checked here: the telemetry's samples. NaN in a telemetry column is a sensor
dropout the Watchdog's bad-telemetry check judges (watchdog/classify.py); only a telemetry of
the wrong type is a fault. Depth images may hold 0 (unknown) and are left to the perceiver.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Execution, Observation
from bt_grasp.errors import one_line
from bt_grasp.perception.types import Located, SceneGraph
from bt_grasp.watchdog.telemetry import Telemetry


class SeamFault(ValueError):
    """A driver or perceiver handed back a value of the wrong type or not finite."""


def _show(value: Any) -> str:
    """A short quote of the value and its type, for the one-line reason."""
    return f"{one_line(repr(value), 40)} ({type(value).__name__})"


def number(value: Any, what: str) -> float:
    """A finite real number (bool and numeric strings are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SeamFault(f"{what} is {_show(value)}, not a number")
    out = float(value)
    if not math.isfinite(out):
        raise SeamFault(f"{what} is {out}, not a finite number")
    return out


def seconds(value: Any, what: str) -> float:
    """A duration or elapsed time: a finite number of seconds, not negative."""
    out = number(value, what)
    if out < 0:
        raise SeamFault(f"{what} is {out}, a negative number of seconds")
    return out


def finite_array(value: Any, what: str, shape: tuple[int | None, ...]) -> np.ndarray:
    """A numeric array of `shape` (None: any length on that axis) with only finite entries."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise SeamFault(f"{what} is {_show(value)}, not an array of numbers") from None
    if arr.ndim != len(shape) or any(want is not None and got != want for got, want in zip(arr.shape, shape, strict=True)):
        want_text = "x".join("N" if s is None else str(s) for s in shape)
        raise SeamFault(f"{what} has shape {arr.shape}, not {want_text}")
    if not np.isfinite(arr).all():
        raise SeamFault(f"{what} holds NaN or infinite values")
    return arr


def _needs(value: Any, what: str, kind: str, attrs: tuple[str, ...], verb: str = "returned") -> None:
    """Duck typing, as the protocols allow: the attributes a consumer reads must be there."""
    missing = [a for a in attrs if not hasattr(value, a)]
    if missing:
        raise SeamFault(f"{what} {verb} {_show(value)}, not {kind} (no {', '.join(missing)})")


def execution(value: Any, what: str) -> Execution:
    """What a motion ended with: an Execution, its duration finite seconds, its fault text."""
    _needs(value, what, "an Execution", ("telemetry", "duration", "fault"))
    seconds(value.duration, f"{what} duration")
    if value.fault is not None and not isinstance(value.fault, str):
        raise SeamFault(f"{what} fault is {_show(value.fault)}, not text or None")
    if not isinstance(value.telemetry, Telemetry):
        raise SeamFault(f"{what} telemetry is {_show(value.telemetry)}, not a Telemetry")
    return value  # type: ignore[no-any-return]


def observation(value: Any, what: str = "driver.observe()") -> Observation:
    """A frame: intrinsics and camera pose finite 3x3 and 4x4, its clock a number."""
    _needs(value, what, "an Observation", ("K", "T_cam_base"))  # the images are the perceiver's to judge
    finite_array(value.K, f"{what} K", (3, 3))
    finite_array(value.T_cam_base, f"{what} camera pose T_cam_base", (4, 4))
    number(getattr(value, "clock", 0.0), f"{what} clock")
    return value  # type: ignore[no-any-return]


def scene(value: Any, what: str = "perceiver.survey()") -> SceneGraph:
    """A scene graph whose objects have an integer id and a name."""
    _needs(value, what, "a SceneGraph", ("objects", "relations"))
    if not isinstance(value.objects, list):
        raise SeamFault(f"{what} objects is {_show(value.objects)}, not a list")
    for i, obj in enumerate(value.objects):
        _needs(obj, f"{what} object {i}", "a SceneObject", ("id", "name"), verb="is")
        if isinstance(obj.id, bool) or not isinstance(obj.id, (int, np.integer)) or not isinstance(obj.name, str):
            raise SeamFault(f"{what} object {i} has id {_show(obj.id)} and name {_show(obj.name)}, "
                            "not an integer id and a name")
        if getattr(obj, "point2d", None) is not None:
            finite_array(obj.point2d, f"{what} object {i} point2d", (2,))
    for rel in value.relations:
        if not (isinstance(rel, (tuple, list)) and len(rel) == 3):
            raise SeamFault(f"{what} relation {_show(rel)} is not (id, relation, id)")
    return value  # type: ignore[no-any-return]


def located(value: Any, what: str = "perceiver.locate()") -> Located | None:
    """None (not found) or a located object whose box, points and score are finite."""
    if value is None:
        return None
    _needs(value, what, "a Located or None", ("object_id", "name", "bbox", "points_base"))
    if not isinstance(value.name, str):
        raise SeamFault(f"{what} name is {_show(value.name)}, not text")
    if isinstance(value.object_id, bool) or not isinstance(value.object_id, (int, np.integer)):
        raise SeamFault(f"{what} object_id is {_show(value.object_id)}, not an integer")
    finite_array(value.bbox, f"{what} bbox", (4,))
    finite_array(value.points_base, f"{what} points_base", (None, 3))
    number(getattr(value, "score", 1.0), f"{what} score")
    return value  # type: ignore[no-any-return]
