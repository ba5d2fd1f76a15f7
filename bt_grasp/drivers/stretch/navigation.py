"""The Stretch's base and head primitives: nav_to (turn, drive, turn) and gaze_at."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.stretch.sampling import _Timeout
from bt_grasp.watchdog.telemetry import Phase, Sample, Telemetry


class BasePrimitives:
    """Mixin of StretchDriver: the primitives that move the base and the head."""

    def nav_to(self, place: Any, timeout: float | None = None) -> Execution:
        """Drive to (x, y[, theta]) in the reset-time odometry frame: turn, drive, turn.

        A place name is looked up in driver_options.nav_places (standoff poses measured once on
        the robot's map), so trees can say nav_to(receptacle) on hardware too."""
        self._begin("nav_to", None)
        if self.dry_run:
            return self._dry("nav_to", Phase.HOLD)
        t0, deadline = self.clock.now(), self._deadline(timeout)
        if isinstance(place, str):
            named = self.opts.nav_places or {}
            if place not in named:
                return self._finish("nav_to", Telemetry.empty(), t0,
                                    f"infeasible: unknown place {place!r} "
                                    f"(driver_options.nav_places knows: {', '.join(named) or 'none'})")
            place = named[place]
        try:
            x, y = float(place[0]), float(place[1])
            theta = float(place[2]) if len(place) > 2 else None
        except (TypeError, ValueError, IndexError):
            return self._finish("nav_to", Telemetry.empty(), t0, f"infeasible: nav_to needs (x, y[, theta]), got {place!r}")
        st = self.robot.base.status
        cx, cy, cth = float(st["x"]), float(st["y"]), float(st["theta"])
        heading = math.atan2(y - cy, x - cx)
        steps = [("rotate", _wrap(heading - cth)), ("translate", math.hypot(x - cx, y - cy))]
        if theta is not None:
            steps.append(("rotate", _wrap(theta - heading)))
        samples: list[Sample] = []
        fault: str | None = None
        try:
            for kind, amount in steps:
                if abs(amount) < 1e-4:
                    continue
                if kind == "rotate":
                    self.robot.base.rotate_by(amount)
                else:
                    self.robot.base.translate_by(amount)
                self.robot.push_command()
                self._record(samples, t0, Phase.HOLD, lambda: not any(
                    w.status.get("is_mg_moving", False) for w in (self.robot.base.left_wheel,
                                                                  self.robot.base.right_wheel)),
                    60.0, deadline, min_s=0.1)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("nav_to", Telemetry.from_samples(samples), t0, fault)

    def gaze_at(self, point: np.ndarray, timeout: float | None = None) -> Execution:
        """Point the head camera at a base-frame point (pan about z, tilt down to it)."""
        self._begin("gaze_at", None)
        if self.dry_run:
            return self._dry("gaze_at", Phase.HOLD)
        from bt_grasp.drivers.stretch.camera import gaze_angles, odometry_pose

        t0 = self.clock.now()
        st = self.robot.base.status
        T_odom = odometry_pose(float(st["x"]), float(st["y"]), float(st["theta"]))
        p_base = np.linalg.inv(T_odom) @ np.append(np.asarray(point, dtype=float)[:3], 1.0)
        pan, tilt = gaze_angles(p_base[:3])
        self.robot.head.move_to("head_pan", pan)
        self.robot.head.move_to("head_tilt", tilt)
        arrived = self.robot.head.wait_until_at_setpoint(timeout if timeout is not None else 5.0)
        return self._finish("gaze_at", Telemetry.empty(), t0, None if arrived else "timeout",
                            {"pan": pan, "tilt": tilt})



def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi
