"""Fault staging for the Stretch driver: which faults a primitive gets, and the data-path ones.

Physical faults (an object removed, a blocked lift...) need the simulator, which overrides the
hooks; software faults (an exception, NaN or late telemetry, an offset grasp) are staged here on
any backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.base import FAULT_KINDS, Execution, Fault
from bt_grasp.errors import BackendUnavailable, UserError
from bt_grasp.watchdog.telemetry import Telemetry

# Faults a real robot cannot stage: they need the simulator (SimStretchDriver implements them).
PHYSICAL_FAULTS = frozenset({"remove_target_on_close", "friction", "mass", "block_fingers", "block_lift",
                             "never_finish"})
# Faults the driver itself stages on any backend (software faults on the data path).
SOFTWARE_FAULTS = frozenset({"grasp_offset", "driver_exception", "nan_telemetry", "latency"})


class FaultStaging:
    """Mixin of StretchDriver: faults injected, picked per primitive, applied to its telemetry."""

    faults: list[Fault]
    _active: list[Fault]
    clock: Any
    connect: Any  # StretchDriver.connect
    _forget_scene: Any  # StretchGuardMixin._forget_scene

    def inject(self, fault: Fault) -> None:
        """Stage a fault for the next matching primitive. Physical kinds need the simulator."""
        if fault.kind not in FAULT_KINDS:
            raise UserError(f"unknown fault kind {fault.kind!r} (known: {', '.join(FAULT_KINDS)})")
        if fault.kind in PHYSICAL_FAULTS and not self._simulated():
            raise BackendUnavailable(f"fault {fault.kind!r} needs the simulated Stretch (a real robot cannot stage it)")
        self.faults.append(fault)

    def clear_faults(self) -> None:
        self.faults.clear()
        self._active = []

    def _simulated(self) -> bool:
        return False

    def _apply_physical_faults(self, faults: list[Fault], target: np.ndarray | None) -> None:
        """Hook for the simulator; the real robot never gets here (inject refuses)."""

    def _end_physical_faults(self) -> None:
        """Hook for the simulator: obstructions of the finished primitive go away."""

    def _begin(self, primitive: str, target: np.ndarray | None = None) -> list[Fault]:
        """Connect, pick the faults for this primitive, stage them, raise the injected exception."""
        self.connect()
        if primitive == "nav_to":
            self._forget_scene()  # the odometry frame the last image was seen in is left behind
        active = [f for f in self.faults if f.primitive in (None, primitive)]
        for f in active:
            if f.once:
                self.faults.remove(f)
        self._active = active
        if any(f.kind == "driver_exception" for f in active):
            raise RuntimeError(f"injected driver exception in {primitive}")
        phys = [f for f in active if f.kind in PHYSICAL_FAULTS]
        if phys:
            self._apply_physical_faults(phys, target)
        return active

    def _finish(self, primitive: str, tel: Telemetry, t0: float, fault: str | None,
                info: dict[str, Any] | None = None) -> Execution:
        """Apply the data-path faults to the telemetry and package the Execution."""
        self._end_physical_faults()
        for f in self._active:
            if f.kind == "nan_telemetry" and len(tel):
                start = int(len(tel) * float(f.params.get("from_frac", 0.5)))
                for col in ("aperture_m", "aperture_norm", "effort", "velocity", "ee_height"):
                    getattr(tel, col)[start:] = np.nan
            elif f.kind == "latency" and len(tel):
                tel = _delay(tel, float(f.params.get("seconds", 0.1)))
        self._active = []
        return Execution(telemetry=tel, duration=self.clock.now() - t0, fault=fault,
                         info={"primitive": primitive, **(info or {})})


def _delay(tel: Telemetry, seconds: float) -> Telemetry:
    """Telemetry as a sensor `seconds` late would report it (values shifted, timestamps kept)."""
    t = tel.t
    idx = np.searchsorted(t, t - seconds, side="right") - 1
    idx = np.clip(idx, 0, len(t) - 1)
    cols = tel.to_dict()
    for c in ("aperture_m", "aperture_norm", "effort", "velocity", "ee_height", "stalled", "overload"):
        cols[c] = cols[c][idx]
    return Telemetry(**cols)
