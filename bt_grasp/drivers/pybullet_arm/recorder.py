"""Telemetry recording during a primitive, and the telemetry-level faults (NaN, latency)."""

from __future__ import annotations

import numpy as np

from bt_grasp.watchdog.telemetry import Telemetry

STALL_VELOCITY = 0.002      # m/s: fingers count as not moving below this
STALL_COMMAND_GAP = 0.05    # normalised: the command is this far from the aperture
STALL_EFFORT = 0.08         # ... and the fingers are not pressing on anything


# Telemetry's columns and their dtypes (watchdog/telemetry.py); load is NaN when not measured.
_COLUMNS: dict[str, type] = {
    "t": np.float64, "aperture_m": np.float64, "aperture_norm": np.float64,
    "commanded_aperture": np.float64, "effort": np.float64, "velocity": np.float64,
    "ee_height": np.float64, "phase": np.int8, "stalled": np.bool_, "overload": np.bool_,
    "load": np.float64,
}


class Recorder:
    """Collects samples at a fixed rate; times are seconds since the primitive started.

    Samples go straight into growing column arrays, so `telemetry()` (asked for on every poll of a
    running motion) is a view of the rows so far rather than a rebuild of every sample.
    """

    def __init__(self, t0: float, period: float, stroke: float) -> None:
        self.t0 = t0
        self.period = period
        self.stroke = stroke
        self._n = 0
        self._cols: dict[str, np.ndarray] = {k: np.empty(256, dtype=d) for k, d in _COLUMNS.items()}
        self._next = t0
        self._last: tuple[float, float] | None = None  # (t, aperture)

    def due(self, clock: float) -> bool:
        return clock + 1e-9 >= self._next

    def add(self, clock: float, aperture_m: float, commanded_norm: float, effort: float,
            ee_height: float, phase: int, load: float | None = None) -> None:
        self._next += self.period
        while self._next <= clock:
            self._next += self.period
        t = clock - self.t0
        vel = 0.0
        if self._last is not None and t > self._last[0]:
            vel = (aperture_m - self._last[1]) / (t - self._last[0])
        self._last = (t, aperture_m)
        norm = min(max(aperture_m / self.stroke, 0.0), 1.0)  # np.clip's value, without its overhead
        stalled = (abs(vel) < STALL_VELOCITY and abs(commanded_norm - norm) > STALL_COMMAND_GAP
                   and effort < STALL_EFFORT)
        if self._n == len(self._cols["t"]):
            self._cols = {k: np.concatenate([c, np.empty_like(c)]) for k, c in self._cols.items()}
        row = {"t": t, "aperture_m": aperture_m, "aperture_norm": norm, "commanded_aperture": commanded_norm,
               "effort": effort, "velocity": vel, "ee_height": ee_height, "phase": int(phase),
               "stalled": bool(stalled), "overload": bool(effort > 1.05),
               "load": np.nan if load is None else load}
        for k, v in row.items():
            self._cols[k][self._n] = v
        self._n += 1

    def __len__(self) -> int:
        return self._n

    def telemetry(self) -> Telemetry:
        """The rows so far (views: later samples are written past them, never into them)."""
        return Telemetry(**{k: c[:self._n] for k, c in self._cols.items()})


_SIGNALS = ("aperture_m", "aperture_norm", "commanded_aperture", "effort", "velocity", "ee_height")


def with_nan(tel: Telemetry, from_frac: float) -> Telemetry:
    """Sensor values become NaN from `from_frac` of the stream on (a dropped sensor)."""
    d = tel.to_dict()
    start = int(np.floor(len(tel) * float(np.clip(from_frac, 0.0, 1.0))))
    for k in ("aperture_m", "aperture_norm", "effort", "velocity", "ee_height", "load"):
        col = d[k].copy()
        col[start:] = np.nan
        d[k] = col
    return Telemetry(**d)


def with_latency(tel: Telemetry, seconds: float) -> Telemetry:
    """Each sample reports the state `seconds` earlier (the first ones repeat the first reading)."""
    if len(tel) == 0 or seconds <= 0:
        return tel
    d = tel.to_dict()
    src = np.searchsorted(d["t"], d["t"] - seconds, side="right") - 1
    src = np.clip(src, 0, len(tel) - 1)
    for k in (*_SIGNALS, "load", "phase", "stalled", "overload"):
        if k == "commanded_aperture" or k == "phase":
            continue  # commands and phase labels are the controller's own, not delayed sensing
        d[k] = d[k][src]
    return Telemetry(**d)
