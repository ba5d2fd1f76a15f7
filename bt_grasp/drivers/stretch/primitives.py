"""The Stretch's manipulation primitives: grasp, lift, place, push, open_gripper.

Each moves lift, arm and base x (the wrist yaw stays 0) and records the gripper telemetry the
Watchdog classifies. Each is a generator of control periods (`_steps_<name>`, see motions.py);
the blocking method of the same name runs it to its end.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.base import Execution, GraspPose
from bt_grasp.drivers.stretch.motions import Run, Steps
from bt_grasp.drivers.stretch.options import PLACE_HALF_M
from bt_grasp.watchdog.telemetry import Phase


class ArmPrimitives:
    """Mixin of StretchDriver: the primitives that move the arm and the gripper."""

    opts: Any
    kin: Any
    robot: Any
    dry_run: bool
    _blocking: Any
    _begin: Any
    _dry_steps: Any
    _deadline: Any
    _move: Any
    _gripper_to: Any
    _wait: Any
    _gripper: Any
    _aperture_to_pct: Any
    _back_off: Any
    _grasp_path_free: Any  # StretchGuardMixin
    _lift_path_free: Any
    _place_path_free: Any
    feasible: Any

    # ------------------------------------------------------------------ blocking forms
    def grasp(self, pose: GraspPose, width: float, force: float, timeout: float | None = None) -> Execution:
        """Approach from above, close at close_pct, settle, micro-lift, hold; then back off.

        `force` is not used: the Stretch gripper is position-controlled, its squeeze is set by the
        profile's close_pct (effort grows with how far the command is past the object).
        """
        return self._blocking("grasp", pose=pose, width=width, force=force, timeout=timeout)

    def lift(self, dz: float, timeout: float | None = None) -> Execution:
        """Raise (or lower) the lift by dz metres, recording the gripper while it moves."""
        return self._blocking("lift", dz=dz, timeout=timeout)

    def open_gripper(self, timeout: float | None = None) -> Execution:
        return self._blocking("open_gripper", timeout=timeout)

    def place(self, target: str, timeout: float | None = None) -> Execution:
        """Carry to a named place (driver_options.places, base-frame point of the drop), release."""
        return self._blocking("place", target=target, timeout=timeout)

    def push(self, start: np.ndarray, end: np.ndarray, height: float, timeout: float | None = None) -> Execution:
        """Push with the closed fingertips from start to end (base-frame xy) with the grasp centre at
        base-frame z = `height` (kept min_grasp_height_m above the table), in 10 straight segments
        of base x + arm moves."""
        return self._blocking("push", start=start, end=end, height=height, timeout=timeout)

    def place_region(self, target: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Box around a named place (driver_options.places): PLACE_HALF_M either side in x and y,
        from 5 cm below the drop point to 15 cm above it (Receptacles)."""
        places = self.opts.places or {}
        if target not in places:
            return None
        p = np.asarray(places[target], dtype=float)
        half = np.array([PLACE_HALF_M, PLACE_HALF_M, 0.0])
        return p - half - np.array([0.0, 0.0, 0.05]), p + half + np.array([0.0, 0.0, 0.15])

    # ------------------------------------------------------------------ steps
    def _steps_grasp(self, run: Run, pose: GraspPose, width: float, force: float,
                     timeout: float | None = None) -> Steps[Any]:
        target = np.asarray(pose.position, dtype=float).copy()
        active = self._begin("grasp", target)
        if self.dry_run:
            return (yield from self._dry_steps(run, Phase.CLOSE))
        for f in active:
            if f.kind == "grasp_offset":
                target[0] += float(f.params.get("offset_m", 0.05))
        # the fingertip pads reach ~2.5 cm below the grasp centre: keep them off the table
        target[2] = max(target[2], self.opts.table_height_m + self.opts.min_grasp_height_m)
        ok, why = self._grasp_path_free(target)
        if not ok:
            return why
        run.deadline = self._deadline(timeout)
        dx, arm, lift = self.kin.joints_for(target)
        run.info.update(target=target.tolist(), joints={"base_dx": dx, "arm": arm, "lift": lift})
        open_pct = min(self._gripper().pct_max_open, self._aperture_to_pct(max(width, 0.0) + 0.03))
        self.robot.end_of_arm.move_to("wrist_yaw", 0.0)
        yield from self._gripper_to(run, open_pct, Phase.APPROACH)
        up = lift + self.opts.approach_clearance_m
        yield from self._move(run, Phase.APPROACH, lift=max(up, self.robot.lift.status["pos"]))
        yield from self._move(run, Phase.APPROACH, arm=arm, base_dx=dx)
        run.info["approach_reached"] = yield from self._move(run, Phase.APPROACH, lift=lift)
        yield from self._gripper_to(run, self.opts.close_pct, Phase.CLOSE)
        yield from self._wait(run, Phase.SETTLE, lambda: False, self.opts.settle_s)
        run.info["lift_before"] = float(self.robot.lift.status["pos"])
        self.robot.lift.move_by(self.opts.micro_lift_m)
        self.robot.push_command()
        yield from self._wait(run, Phase.MICRO_LIFT, lambda: not self.robot.lift.motor.status["is_mg_moving"],
                              3.0, min_s=0.1)
        yield from self._wait(run, Phase.HOLD, lambda: False, self.opts.hold_s)
        run.info["lift_after"] = float(self.robot.lift.status["pos"])
        run.info["pos_pct"] = float(self._gripper().status["pos_pct"])
        run.info["effort_pct"] = float(self._gripper().status["effort"])
        self._back_off()
        return None

    def _steps_lift(self, run: Run, dz: float, timeout: float | None = None) -> Steps[Any]:
        self._begin("lift", None)
        if self.dry_run:
            return (yield from self._dry_steps(run, Phase.HOLD))
        ok, why = self._lift_path_free(dz)
        if not ok:
            return why
        run.deadline = self._deadline(timeout)
        fault = None
        goal = self.robot.lift.status["pos"] + dz
        if not (yield from self._move(run, Phase.MICRO_LIFT, lift=goal)):
            fault = "blocked: lift did not reach its goal"
        yield from self._wait(run, Phase.HOLD, lambda: False, 0.2)
        return fault

    def _steps_open_gripper(self, run: Run, timeout: float | None = None) -> Steps[Any]:
        self._begin("open_gripper", None)
        if self.dry_run:
            return (yield from self._dry_steps(run, Phase.HOLD))
        run.deadline = self._deadline(timeout)
        yield from self._gripper_to(run, self._gripper().pct_max_open, Phase.HOLD)
        return None

    def _steps_place(self, run: Run, target: str, timeout: float | None = None) -> Steps[Any]:
        self._begin("place", None)
        if self.dry_run:
            return (yield from self._dry_steps(run, Phase.HOLD))
        places = self.opts.places or {}
        if target not in places:
            return f"infeasible: unknown place {target!r} (known: {', '.join(places) or 'none'})"
        drop = np.asarray(places[target], dtype=float) + np.array([0.0, 0.0, 0.12])
        ok, why = self._place_path_free(drop)
        if not ok:
            return why
        run.deadline = self._deadline(timeout)
        run.info["place"] = target
        dx, arm, lift = self.kin.joints_for(drop)
        yield from self._move(run, Phase.HOLD, lift=max(lift, self.robot.lift.status["pos"]))
        yield from self._move(run, Phase.HOLD, arm=arm, base_dx=dx)
        yield from self._move(run, Phase.HOLD, lift=lift)
        yield from self._gripper_to(run, self._gripper().pct_max_open, Phase.HOLD)
        yield from self._wait(run, Phase.HOLD, lambda: False, 0.5)
        yield from self._move(run, Phase.HOLD, arm=0.0)
        return None

    def _steps_push(self, run: Run, start: np.ndarray, end: np.ndarray, height: float,
                    timeout: float | None = None) -> Steps[Any]:
        s_xy, e_xy = np.asarray(start, dtype=float)[:2], np.asarray(end, dtype=float)[:2]
        z = max(float(height), self.opts.table_height_m + self.opts.min_grasp_height_m)
        a, b = np.array([s_xy[0], s_xy[1], z]), np.array([e_xy[0], e_xy[1], z])
        self._begin("push", a)
        if self.dry_run:
            return (yield from self._dry_steps(run, Phase.APPROACH))
        up = np.array([0.0, 0.0, self.opts.approach_clearance_m])
        ok, why = self.feasible([a + up, a, b, b + up], targets=list(np.linspace(a, b, 11)))
        if not ok:
            return why
        run.deadline = self._deadline(timeout)
        yield from self._gripper_to(run, 0.0, Phase.APPROACH)
        dx, arm, lift = self.kin.joints_for(a)
        yield from self._move(run, Phase.APPROACH,
                              lift=max(lift + self.opts.approach_clearance_m, self.robot.lift.status["pos"]))
        yield from self._move(run, Phase.APPROACH, arm=arm, base_dx=dx)
        yield from self._move(run, Phase.APPROACH, lift=lift)
        for k in range(1, 11):
            dx, arm, _ = self.kin.joints_for(a + (b - a) * k / 10)
            yield from self._move(run, Phase.APPROACH, arm=arm, base_dx=dx)
        yield from self._move(run, Phase.APPROACH, lift=lift + self.opts.approach_clearance_m)
        return None
