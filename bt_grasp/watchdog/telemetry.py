"""Telemetry of one grasp attempt, stored column-wise so the classifier can vectorise over it.

Drivers produce it (PyBullet from joint states, the Stretch from stretch_body status); the
Watchdog reads it. Units: seconds, metres, efforts normalised to the gripper's maximum, and the
optional wrist `load` in newtons (NaN in a column / None in a Sample when the driver has no such
sensor: the classifier then decides from finger telemetry alone).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np


class Phase(enum.IntEnum):
    """Phases of a grasp attempt, in the order a driver executes them."""

    APPROACH = 0
    CLOSE = 1
    SETTLE = 2
    MICRO_LIFT = 3
    HOLD = 4


@dataclass(frozen=True)
class Sample:
    """One telemetry reading (the streaming API's unit)."""

    t: float
    aperture_m: float
    aperture_norm: float
    commanded_aperture: float
    effort: float
    velocity: float
    ee_height: float
    phase: int
    stalled: bool = False
    overload: bool = False
    load: float | None = None


_FLOAT_COLUMNS = ("t", "aperture_m", "aperture_norm", "commanded_aperture", "effort", "velocity",
                  "ee_height")


@dataclass
class Telemetry:
    """Columns of equal length, one row per sample; `phase` holds Phase codes.

    `aperture_norm` is 0 at the closed stop and 1 fully open; `commanded_aperture` is normalised
    the same way; `effort` is |finger force| / the gripper's maximum force (0..1, may exceed 1 on
    overload); `velocity` is d(aperture_m)/dt in m/s; `ee_height` is the end-effector height above
    the table in metres. `load` is the vertical force the arm carries at the wrist (newtons,
    downward positive: the gripper's weight plus whatever it lifts), NaN when not measured; it is
    optional, so it is not part of the bad-telemetry checks.
    """

    t: np.ndarray
    aperture_m: np.ndarray
    aperture_norm: np.ndarray
    commanded_aperture: np.ndarray
    effort: np.ndarray
    velocity: np.ndarray
    ee_height: np.ndarray
    phase: np.ndarray
    # None (the default) = not measured: __post_init__ turns it into an array before any use.
    stalled: np.ndarray = field(default=None)  # type: ignore[arg-type]
    overload: np.ndarray = field(default=None)  # type: ignore[arg-type]
    load: np.ndarray = field(default=None)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        for name in _FLOAT_COLUMNS:
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.float64))
        n = len(self.t)
        self.phase = np.asarray(self.phase, dtype=np.int8)
        self.stalled = (np.zeros(n, bool) if self.stalled is None
                        else np.asarray(self.stalled, dtype=bool))
        self.overload = (np.zeros(n, bool) if self.overload is None
                         else np.asarray(self.overload, dtype=bool))
        if self.load is None:
            self.load = np.full(n, np.nan)
        elif isinstance(self.load, (list, tuple)):  # from samples: None = not measured
            self.load = np.array([np.nan if x is None else x for x in self.load], dtype=np.float64)
        else:
            self.load = np.asarray(self.load, dtype=np.float64)
        lengths = {f.name: len(getattr(self, f.name)) for f in fields(self)}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"telemetry columns differ in length: {lengths}")

    def __len__(self) -> int:
        return len(self.t)

    @classmethod
    def empty(cls) -> Telemetry:
        return cls.from_samples([])

    @classmethod
    def from_samples(cls, samples: list[Sample]) -> Telemetry:
        cols: dict[str, Any] = {f.name: [getattr(s, f.name) for s in samples] for f in fields(Sample)}
        return cls(**cols)

    def samples(self) -> list[Sample]:
        names = [f.name for f in fields(Sample)]
        cols = [getattr(self, n) for n in names]
        out = []
        for i in range(len(self)):
            row = {n: c[i].item() for n, c in zip(names, cols, strict=True)}
            if not np.isfinite(row["load"]):
                row["load"] = None
            out.append(Sample(**row))
        return out

    @property
    def has_load(self) -> bool:
        """True when the driver measured the wrist load on at least one sample."""
        return bool(np.isfinite(self.load).any())

    def concat(self, other: Telemetry) -> Telemetry:
        return Telemetry(**{f.name: np.concatenate([getattr(self, f.name), getattr(other, f.name)])
                            for f in fields(self)})

    def to_dict(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
