"""The Stretch's base and head primitives: nav_to (turn, drive, turn), gaze_at and look.

Both are generators of control periods (see motions.py): the base's `rotate_by` / `translate_by`
and the head's `move_to` are sent once, then each poll reads the wheels' or the head's status.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.stretch.motions import Run, Steps
from bt_grasp.watchdog.telemetry import Phase

HEAD_STILL_RAD_S = 0.02  # both head servos slower than this: the head has arrived (or hit its limit)
HEAD_TIMEOUT_S = 5.0  # a head move of up to pi rad takes ~2-3 s


class BasePrimitives:
    """Mixin of StretchDriver: the primitives that move the base and the head."""

    opts: Any
    robot: Any
    clock: Any
    dry_run: bool
    _blocking: Any
    _begin: Any
    _dry_steps: Any
    _deadline: Any
    _wait: Any
    _base_moving: Any

    def nav_to(self, place: Any, timeout: float | None = None) -> Execution:
        """Drive to (x, y[, theta]) in the reset-time odometry frame: turn, drive, turn.

        A place name is looked up in driver_options.nav_places (standoff poses measured once on
        the robot's map), so trees can say nav_to(receptacle) on hardware too."""
        return self._blocking("nav_to", place=place, timeout=timeout)

    def gaze_at(self, point: np.ndarray, timeout: float | None = None) -> Execution:
        """Point the head camera at a base-frame point (pan about z, tilt down to it)."""
        return self._blocking("gaze_at", point=point, timeout=timeout)

    def _steps_nav_to(self, run: Run, place: Any, timeout: float | None = None) -> Steps[Any]:
        self._begin("nav_to", None)
        if self.dry_run:
            return (yield from self._dry_steps(run, Phase.HOLD))
        run.deadline = self._deadline(timeout)
        if isinstance(place, str):
            named = self.opts.nav_places or {}
            if place not in named:
                return (f"infeasible: unknown place {place!r} "
                        f"(driver_options.nav_places knows: {', '.join(named) or 'none'})")
            place = named[place]
        try:
            x, y = float(place[0]), float(place[1])
            theta = float(place[2]) if len(place) > 2 else None
        except (TypeError, ValueError, IndexError):
            return f"infeasible: nav_to needs (x, y[, theta]), got {place!r}"
        yield from self._drive_to(run, x, y, theta)
        return None

    def _drive_to(self, run: Run, x: float, y: float, theta: float | None) -> Steps[None]:
        """Turn toward (x, y), drive there, turn to theta (odometry frame); one base move at a time."""
        st = self.robot.base.status
        cx, cy, cth = float(st["x"]), float(st["y"]), float(st["theta"])
        heading = math.atan2(y - cy, x - cx)
        steps = [("rotate", _wrap(heading - cth)), ("translate", math.hypot(x - cx, y - cy))]
        if theta is not None:
            steps.append(("rotate", _wrap(theta - heading)))
        for kind, amount in steps:
            if abs(amount) < 1e-4:
                continue
            if kind == "rotate":
                self.robot.base.rotate_by(amount)
            else:
                self.robot.base.translate_by(amount)
            self.robot.push_command()
            yield from self._wait(run, Phase.HOLD, lambda: not self._base_moving(), 60.0, min_s=0.1)

    def _steps_gaze_at(self, run: Run, point: np.ndarray, timeout: float | None = None) -> Steps[Any]:
        self._begin("gaze_at", None)
        if self.dry_run:
            return (yield from self._dry_steps(run, Phase.HOLD))
        from bt_grasp.drivers.stretch.camera import gaze_angles, odometry_pose

        st = self.robot.base.status
        T_odom = odometry_pose(float(st["x"]), float(st["y"]), float(st["theta"]))
        p_base = np.linalg.inv(T_odom) @ np.append(np.asarray(point, dtype=float)[:3], 1.0)
        pan, tilt = gaze_angles(p_base[:3])
        run.info.update(pan=pan, tilt=tilt)
        return (yield from self._head_to(run, pan, tilt, timeout))

    def _steps_look(self, run: Run, pan: float, tilt: float | None = None,
                    timeout: float | None = None) -> Steps[Any]:
        """Turn the head camera to `pan` (and `tilt`) radians (the Head protocol's look)."""
        self._begin("look", None)
        if self.dry_run:
            return (yield from self._dry_steps(run, Phase.HOLD))
        run.info.update(pan=float(pan), tilt=None if tilt is None else float(tilt))
        return (yield from self._head_to(run, float(pan), tilt, timeout))

    def _head_to(self, run: Run, pan: float, tilt: float | None, timeout: float | None) -> Steps[None]:
        """Command the head, record until both servos are still (arrived, or held at a limit)."""
        run.deadline = self.clock.now() + (timeout if timeout is not None else HEAD_TIMEOUT_S)
        self.robot.head.move_to("head_pan", pan)
        if tilt is not None:
            self.robot.head.move_to("head_tilt", float(tilt))
        head = self.robot.head.status
        yield from self._wait(run, Phase.HOLD, lambda: all(
            abs(float(head[j]["vel"])) < HEAD_STILL_RAD_S for j in ("head_pan", "head_tilt")),
            math.inf, min_s=0.1)
        return None


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi
