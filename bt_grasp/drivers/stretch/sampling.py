"""Stretch status into telemetry: gripper units, one Sample per poll, and the polling loops.

The gripper servo status (stretch_body units: `pos_pct`, `effort` in pct load, `stalled`,
`stall_overload`, `gripper_conversion.aperture_m`) and the lift position become the Watchdog's
normalised Sample; the loops command joints and record until they stop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.stretch.options import GRIPPER, Clock, StretchKinematics, StretchOptions
from bt_grasp.watchdog.telemetry import Phase, Sample, Telemetry


class _Timeout(Exception):
    """A primitive ran past its deadline (the driver stops the robot and reports 'timeout')."""



class TelemetrySampling:
    """Mixin of StretchDriver: status reading, sampling and the blocking polling loops."""

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

    def _record(self, samples: list[Sample], t0: float, phase: Phase, done: Callable[[], bool],
                max_s: float, deadline: float, min_s: float = 0.0) -> bool:
        """Poll status at poll_hz into samples until done() (after min_s) or max_s; False if max_s ran
        out. Raises _Timeout past the primitive's deadline."""
        dt = 1.0 / self.opts.poll_hz
        start = self.clock.now()
        while True:
            samples.append(self._sample(t0, phase, samples[-1] if samples else None))
            now = self.clock.now()
            if now - start >= min_s and done():
                return True
            if now >= deadline:
                raise _Timeout(phase.name)
            if now - start >= max_s:
                return False
            self.clock.sleep(min(dt, max(1e-3, deadline - now)))

    def _deadline(self, timeout: float | None) -> float:
        return self.clock.now() + (timeout if timeout is not None else self.opts.primitive_timeout_s)

    # ------------------------------------------------------------------ motion helpers
    def _move_steppers(self, samples: list[Sample], t0: float, phase: Phase, deadline: float,
                       lift: float | None = None, arm: float | None = None, base_dx: float | None = None,
                       max_s: float = 15.0) -> bool:
        """Queue lift/arm/base moves, push them together, record until they stop; True if arrived."""
        r = self.robot
        if lift is not None:
            r.lift.move_to(float(np.clip(lift, *self.kin.lift_range)))
        if arm is not None:
            r.arm.move_to(float(np.clip(arm, *self.kin.arm_range)))
        if base_dx is not None and abs(base_dx - float(r.base.status["x"])) > 1e-4:
            r.base.translate_by(base_dx - float(r.base.status["x"]))
        r.push_command()

        def stopped() -> bool:
            lm, am = r.lift.motor.status, r.arm.motor.status
            base_busy = any(w.status.get("is_mg_moving", False) for w in (r.base.left_wheel, r.base.right_wheel))
            return not (lm["is_mg_moving"] or am["is_mg_moving"] or base_busy)

        self._record(samples, t0, phase, stopped, max_s, deadline, min_s=0.1)
        ok = True
        if lift is not None:
            ok = ok and abs(r.lift.status["pos"] - np.clip(lift, *self.kin.lift_range)) < 0.01
        if arm is not None:
            ok = ok and abs(r.arm.status["pos"] - np.clip(arm, *self.kin.arm_range)) < 0.01
        return ok

    def _gripper_to(self, pct: float, samples: list[Sample], t0: float, phase: Phase, deadline: float,
                    max_s: float = 4.0) -> None:
        """Command the gripper and record until it reaches the command or stalls (0.3 s still)."""
        g = self._gripper()
        self._cmd_pct = float(np.clip(pct, -100.0, getattr(g, "pct_max_open", 50.0)))
        self.robot.end_of_arm.move_to(GRIPPER, self._cmd_pct)
        still_since: list[float | None] = [None]

        def settled() -> bool:
            st = g.status
            if abs(st["pos_pct"] - self._cmd_pct) < 1.5:
                return True
            if st["stalled"]:
                now = self.clock.now()
                still_since[0] = now if still_since[0] is None else still_since[0]
                return now - still_since[0] >= 0.3
            still_since[0] = None
            return False

        self._record(samples, t0, phase, settled, max_s, deadline, min_s=0.2)

    def _back_off(self) -> None:
        """Lower the squeeze after a grasp so the Dynamixel does not sit at stall current and overheat
        (stretch_body's sentry does a blunter version of this at stall_overload)."""
        g = self._gripper()
        st = g.status
        if st["stalled"] and abs(st["effort"]) > 0 and self._cmd_pct < st["pos_pct"]:
            self._cmd_pct = float(st["pos_pct"] - self.opts.hold_squeeze_pct)
            self.robot.end_of_arm.move_to(GRIPPER, self._cmd_pct)

    def _dry(self, primitive: str, phase: Phase) -> Execution:
        """Dry run: read telemetry for a short window, command nothing."""
        t0 = self.clock.now()
        samples: list[Sample] = []
        self._record(samples, t0, phase, lambda: False, self.opts.dry_run_window_s, t0 + 60.0)
        return Execution(Telemetry.from_samples(samples), self.clock.now() - t0, "dry_run: no motion commanded",
                         {"primitive": primitive})
