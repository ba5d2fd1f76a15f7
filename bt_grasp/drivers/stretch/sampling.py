"""Stretch status into telemetry: gripper units and one Sample per poll.

The gripper servo status (stretch_body units: `pos_pct`, `effort` in pct load, `stalled`,
`stall_overload`, `gripper_conversion.aperture_m`) and the lift position become the Watchdog's
normalised Sample. Reading status never moves the robot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.stretch.options import GRIPPER, Clock, StretchKinematics, StretchOptions
from bt_grasp.watchdog.telemetry import Phase, Sample


class TelemetrySampling:
    """Mixin of StretchDriver: gripper unit conversions and the status -> Sample reading."""

    robot: Any
    opts: StretchOptions
    kin: StretchKinematics
    clock: Clock
    max_aperture: float
    min_aperture: float
    _cmd_pct: float

    def _gripper(self) -> Any:
        return self.robot.end_of_arm.get_joint(GRIPPER)

    def _pct_to_aperture(self, pct: float) -> float:
        gc = self._gripper().params.get("gripper_conversion", {})
        slope = (gc.get("open_aperture_m", 0.09) - gc.get("closed_aperture_m", 0.0)) / (
            gc.get("open_robotis", 70.0) - gc.get("closed_robotis", 0.0))
        return slope * (pct - gc.get("closed_robotis", 0.0)) + gc.get("closed_aperture_m", 0.0)

    def _aperture_to_pct(self, aperture: float) -> float:
        a1 = self._pct_to_aperture(1.0) - self._pct_to_aperture(0.0)
        return (aperture - self._pct_to_aperture(0.0)) / a1

    def _norm(self, aperture: float) -> float:
        span = max(1e-6, self.max_aperture - self.min_aperture)
        return float(np.clip((aperture - self.min_aperture) / span, 0.0, 1.0))

    def _sample(self, t0: float, phase: Phase, prev: Sample | None) -> Sample:
        st = self._gripper().status
        aperture = float(st["gripper_conversion"]["aperture_m"])
        t = self.clock.now() - t0
        vel = 0.0 if prev is None or t <= prev.t else (aperture - prev.aperture_m) / (t - prev.t)
        ee = float(self.robot.lift.status["pos"]) + self.kin.grasp_z0 - self.opts.table_height_m
        return Sample(t=t, aperture_m=aperture, aperture_norm=self._norm(aperture),
                      commanded_aperture=self._norm(self._pct_to_aperture(self._cmd_pct)),
                      effort=abs(float(st["effort"])) / 100.0, velocity=vel, ee_height=ee, phase=int(phase),
                      stalled=bool(st["stalled"]), overload=bool(st["stall_overload"]))
