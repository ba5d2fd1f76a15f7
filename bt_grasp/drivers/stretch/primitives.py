"""The Stretch's manipulation primitives: grasp, lift, place, push, open_gripper.

Each moves lift, arm and base x (the wrist yaw stays 0) and records the gripper telemetry the
Watchdog classifies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.base import Execution, GraspPose
from bt_grasp.drivers.stretch.options import PLACE_HALF_M
from bt_grasp.drivers.stretch.sampling import _Timeout
from bt_grasp.watchdog.telemetry import Phase, Sample, Telemetry


class ArmPrimitives:
    """Mixin of StretchDriver: the primitives that move the arm and the gripper."""

    def grasp(self, pose: GraspPose, width: float, force: float, timeout: float | None = None) -> Execution:
        """Approach from above, close at close_pct, settle, micro-lift, hold; then back off.

        `force` is not used: the Stretch gripper is position-controlled, its squeeze is set by the
        profile's close_pct (effort grows with how far the command is past the object).
        """
        target = np.asarray(pose.position, dtype=float).copy()
        active = self._begin("grasp", target)
        if self.dry_run:
            return self._dry("grasp", Phase.CLOSE)
        for f in active:
            if f.kind == "grasp_offset":
                target[0] += float(f.params.get("offset_m", 0.05))
        # the fingertip pads reach ~2.5 cm below the grasp centre: keep them off the table
        target[2] = max(target[2], self.opts.table_height_m + self.opts.min_grasp_height_m)
        ok, why = self.feasible([target])
        t0 = self.clock.now()
        if not ok:
            return self._finish("grasp", Telemetry.empty(), t0, why)
        deadline = self._deadline(timeout)
        samples: list[Sample] = []
        dx, arm, lift = self.kin.joints_for(target)
        info: dict[str, Any] = {"target": target.tolist(), "joints": {"base_dx": dx, "arm": arm, "lift": lift}}
        try:
            open_pct = min(self._gripper().pct_max_open, self._aperture_to_pct(max(width, 0.0) + 0.03))
            self.robot.end_of_arm.move_to("wrist_yaw", 0.0)
            self._gripper_to(open_pct, samples, t0, Phase.APPROACH, deadline)
            up = lift + self.opts.approach_clearance_m
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, lift=max(up, self.robot.lift.status["pos"]))
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, arm=arm, base_dx=dx)
            reached = self._move_steppers(samples, t0, Phase.APPROACH, deadline, lift=lift)
            info["approach_reached"] = reached
            self._gripper_to(self.opts.close_pct, samples, t0, Phase.CLOSE, deadline)
            self._record(samples, t0, Phase.SETTLE, lambda: False, self.opts.settle_s, deadline)
            info["lift_before"] = float(self.robot.lift.status["pos"])
            self.robot.lift.move_by(self.opts.micro_lift_m)
            self.robot.push_command()
            self._record(samples, t0, Phase.MICRO_LIFT, lambda: not self.robot.lift.motor.status["is_mg_moving"],
                         3.0, deadline, min_s=0.1)
            self._record(samples, t0, Phase.HOLD, lambda: False, self.opts.hold_s, deadline)
            info["lift_after"] = float(self.robot.lift.status["pos"])
            info["pos_pct"] = float(self._gripper().status["pos_pct"])
            info["effort_pct"] = float(self._gripper().status["effort"])
            self._back_off()
            fault = None
        except _Timeout as exc:
            self.stop()
            fault, info["timeout_phase"] = "timeout", str(exc)
        tel = Telemetry.from_samples(samples)
        return self._finish("grasp", tel, t0, fault, info)

    def lift(self, dz: float, timeout: float | None = None) -> Execution:
        """Raise (or lower) the lift by dz metres, recording the gripper while it moves."""
        self._begin("lift", None)
        if self.dry_run:
            return self._dry("lift", Phase.HOLD)
        t0, deadline = self.clock.now(), self._deadline(timeout)
        samples: list[Sample] = []
        fault: str | None = None
        try:
            goal = self.robot.lift.status["pos"] + dz
            if not self._move_steppers(samples, t0, Phase.MICRO_LIFT, deadline, lift=goal):
                fault = "blocked: lift did not reach its goal"
            self._record(samples, t0, Phase.HOLD, lambda: False, 0.2, deadline)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("lift", Telemetry.from_samples(samples), t0, fault)

    def open_gripper(self, timeout: float | None = None) -> Execution:
        self._begin("open_gripper", None)
        if self.dry_run:
            return self._dry("open_gripper", Phase.HOLD)
        t0, deadline = self.clock.now(), self._deadline(timeout)
        samples: list[Sample] = []
        fault: str | None = None
        try:
            self._gripper_to(self._gripper().pct_max_open, samples, t0, Phase.HOLD, deadline)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("open_gripper", Telemetry.from_samples(samples), t0, fault)

    def place(self, target: str, timeout: float | None = None) -> Execution:
        """Carry to a named place (driver_options.places, base-frame point of the drop), release."""
        self._begin("place", None)
        if self.dry_run:
            return self._dry("place", Phase.HOLD)
        t0 = self.clock.now()
        places = self.opts.places or {}
        if target not in places:
            return self._finish("place", Telemetry.empty(), t0,
                                f"infeasible: unknown place {target!r} (known: {', '.join(places) or 'none'})")
        p = np.asarray(places[target], dtype=float)
        drop = p + np.array([0.0, 0.0, 0.12])
        ok, why = self.feasible([drop])
        if not ok:
            return self._finish("place", Telemetry.empty(), t0, why)
        deadline = self._deadline(timeout)
        samples: list[Sample] = []
        fault: str | None = None
        dx, arm, lift = self.kin.joints_for(drop)
        try:
            self._move_steppers(samples, t0, Phase.HOLD, deadline, lift=max(lift, self.robot.lift.status["pos"]))
            self._move_steppers(samples, t0, Phase.HOLD, deadline, arm=arm, base_dx=dx)
            self._move_steppers(samples, t0, Phase.HOLD, deadline, lift=lift)
            self._gripper_to(self._gripper().pct_max_open, samples, t0, Phase.HOLD, deadline)
            self._record(samples, t0, Phase.HOLD, lambda: False, 0.5, deadline)
            self._move_steppers(samples, t0, Phase.HOLD, deadline, arm=0.0)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("place", Telemetry.from_samples(samples), t0, fault, {"place": target})

    def place_region(self, target: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Box around a named place (driver_options.places): PLACE_HALF_M either side in x and y,
        from 5 cm below the drop point to 15 cm above it (Receptacles)."""
        places = self.opts.places or {}
        if target not in places:
            return None
        p = np.asarray(places[target], dtype=float)
        half = np.array([PLACE_HALF_M, PLACE_HALF_M, 0.0])
        return p - half - np.array([0.0, 0.0, 0.05]), p + half + np.array([0.0, 0.0, 0.15])

    def push(self, start: np.ndarray, end: np.ndarray, height: float, timeout: float | None = None) -> Execution:
        """Push with the closed fingertips from start to end (base-frame xy) with the grasp centre at
        base-frame z = `height` (kept min_grasp_height_m above the table), in 10 straight segments
        of base x + arm moves."""
        s_xy, e_xy = np.asarray(start, dtype=float)[:2], np.asarray(end, dtype=float)[:2]
        z = max(float(height), self.opts.table_height_m + self.opts.min_grasp_height_m)
        a, b = np.array([s_xy[0], s_xy[1], z]), np.array([e_xy[0], e_xy[1], z])
        self._begin("push", a)
        if self.dry_run:
            return self._dry("push", Phase.APPROACH)
        t0 = self.clock.now()
        ok, why = self.feasible([a, b, a + [0, 0, self.opts.approach_clearance_m]])
        if not ok:
            return self._finish("push", Telemetry.empty(), t0, why)
        deadline = self._deadline(timeout)
        samples: list[Sample] = []
        fault: str | None = None
        try:
            self._gripper_to(0.0, samples, t0, Phase.APPROACH, deadline)
            dx, arm, lift = self.kin.joints_for(a)
            self._move_steppers(samples, t0, Phase.APPROACH, deadline,
                                lift=max(lift + self.opts.approach_clearance_m, self.robot.lift.status["pos"]))
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, arm=arm, base_dx=dx)
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, lift=lift)
            for k in range(1, 11):
                dx, arm, _ = self.kin.joints_for(a + (b - a) * k / 10)
                self._move_steppers(samples, t0, Phase.APPROACH, deadline, arm=arm, base_dx=dx)
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, lift=lift + self.opts.approach_clearance_m)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("push", Telemetry.from_samples(samples), t0, fault)
