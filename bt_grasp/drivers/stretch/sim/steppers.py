"""The simulated stretch_body stepper devices: lift and arm (PrismaticJoint) and the base, whose
moves are queued until robot.push_command(), as on the real steppers."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bt_grasp.drivers.stretch.sim.device import _SimPart
from bt_grasp.drivers.stretch.sim.params import (
    ARM_ACC,
    ARM_RANGE,
    ARM_VEL,
    BASE_VEL,
    LIFT_ACC,
    LIFT_RANGE,
    LIFT_VEL,
)
from bt_grasp.drivers.stretch.sim.stretch_world import StretchWorld

GUARD_TIME_S = 0.3  # a stepper stopped short of its goal this long latches a guarded event
NEAR_SETPOINT_M = 0.004


class SimStepper:
    """The status a stepper board reports (a subset of stretch_body.stepper.Stepper.status)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.hw_valid = False
        self.status: dict[str, Any] = {
            "mode": 0, "effort_pct": 0.0, "current": 0.0, "pos": 0.0, "vel": 0.0, "pos_calibrated": False,
            "runstop_on": False, "near_pos_setpoint": True, "is_moving": False, "is_moving_filtered": False,
            "is_mg_moving": False, "in_guarded_event": False, "in_safety_event": False,
            "in_sync_mode": False, "timestamp": 0.0}

    def startup(self, threaded: bool = False) -> bool:
        self.hw_valid = True
        return True

    def stop(self) -> None:
        self.hw_valid = False


class SimPrismaticJoint(_SimPart):
    """stretch_body.prismatic_joint.PrismaticJoint (Lift, Arm) over a simulated joint."""

    def __init__(self, name: str, world: StretchWorld, refresh: Callable[[], None]) -> None:
        super().__init__(name, world, refresh)
        self.motor = SimStepper(f"hello-motor-{name}")
        rng = LIFT_RANGE if name == "lift" else ARM_RANGE
        vel = LIFT_VEL if name == "lift" else ARM_VEL
        acc = LIFT_ACC if name == "lift" else ARM_ACC
        self.params = {"range_m": list(rng), "motion": {"default": {"vel_m": vel, "accel_m": acc}}}
        self.status: dict[str, Any] = {"timestamp_pc": 0.0, "pos": 0.0, "vel": 0.0, "force": 0.0,
                                       "motor": self.motor.status}
        self._pending: float | None = None
        self._goal: float | None = None
        self._mg_end = 0.0
        self._still_since: float | None = None

    def startup(self, threaded: bool = True) -> bool:
        ok = self.motor.startup(threaded=False)
        self.hw_valid = ok
        self.pull_status()
        return ok

    def stop(self) -> None:
        self.motor.stop()
        self.hw_valid = False

    # joint-space accessors over the world
    def _pos(self) -> float:
        return self._world.lift_pos() if self.name == "lift" else self._world.arm_pos()

    def _vel(self) -> float:
        return self._world.qd("joint_lift") if self.name == "lift" else self._world.arm_vel()

    def _set_target(self, x: float) -> None:
        if self.name == "lift":
            self._world.lift_target = x
        else:
            self._world.arm_target = x
        self._world._apply_motors()

    def move_to(self, x_m: float, v_m: float | None = None, a_m: float | None = None,
                stiffness: float | None = None, contact_thresh_pos_N: float | None = None,
                contact_thresh_neg_N: float | None = None, req_calibration: bool = True,
                contact_thresh_pos: float | None = None, contact_thresh_neg: float | None = None) -> None:
        """Queue an absolute move (metres); it starts on robot.push_command()."""
        if req_calibration and not self.motor.status["pos_calibrated"]:
            return  # stretch_body logs "not homed" and ignores the command
        lo, hi = self.params["range_m"]
        self._pending = min(max(float(x_m), lo), hi)

    def move_by(self, x_m: float, v_m: float | None = None, a_m: float | None = None,
                stiffness: float | None = None, contact_thresh_pos_N: float | None = None,
                contact_thresh_neg_N: float | None = None, req_calibration: bool = True,
                contact_thresh_pos: float | None = None, contact_thresh_neg: float | None = None) -> None:
        """Queue a relative move from the current position (clipped to the joint range)."""
        self.move_to(self.status["pos"] + float(x_m), v_m, a_m, stiffness, None, None, req_calibration)

    def push_command(self) -> None:
        if self._pending is None:
            return
        goal, self._pending = self._pending, None
        vel = self.params["motion"]["default"]["vel_m"]
        acc = self.params["motion"]["default"]["accel_m"]
        self._goal = goal
        self._mg_end = self._world.t + abs(goal - self._pos()) / vel + vel / acc + 0.1
        self._still_since = None
        self.motor.status["in_guarded_event"] = False
        f = self._world.faults
        if self.name == "lift" and f.block_lift_after is not None and goal > self._pos():
            f.block_lift_at = self._pos() + f.block_lift_after  # block_lift: this rise stops early
        self._set_target(goal)

    def pull_status(self) -> None:
        w, st, m = self._world, self.status, self.motor.status
        pos, vel = self._pos(), self._vel()
        st.update(timestamp_pc=w.t, pos=pos, vel=vel)
        goal = self._goal if self._goal is not None else pos
        away = abs(goal - pos) > NEAR_SETPOINT_M
        if away and abs(vel) < 1e-3 and w.t > self._mg_end - 0.1 and not w.faults.never_finish:
            self._still_since = w.t if self._still_since is None else self._still_since
            if w.t - self._still_since >= GUARD_TIME_S and not m["in_guarded_event"]:
                m["in_guarded_event"] = True  # contact: the firmware stops and holds here
                self._goal = pos
                self._set_target(pos)
        else:
            self._still_since = None
        moving = (w.t < self._mg_end or (w.faults.never_finish and away)) and not m["in_guarded_event"]
        m.update(pos=pos, vel=vel, timestamp=w.t, near_pos_setpoint=not away, is_mg_moving=moving,
                 is_moving=moving or abs(vel) > 1e-3, is_moving_filtered=moving or abs(vel) > 1e-3,
                 effort_pct=math.copysign(60.0, goal - pos) if m["in_guarded_event"] else 0.0)

    def wait_until_at_setpoint(self, timeout: float = 15.0) -> bool:
        return self._wait(lambda: bool(self.motor.status["near_pos_setpoint"]), timeout)

    def wait_while_is_moving(self, timeout: float = 15.0, use_motion_generator: bool = True) -> bool:
        key = "is_mg_moving" if use_motion_generator else "is_moving_filtered"
        return self._wait(lambda: not self.motor.status[key], timeout)

    def wait_for_contact(self, timeout: float = 5.0) -> bool:
        return self._wait(lambda: bool(self.motor.status["in_guarded_event"]), timeout)


class SimBase(_SimPart):
    """stretch_body.base.Base: incremental moves applied kinematically to the simulated body."""

    def __init__(self, world: StretchWorld, refresh: Callable[[], None]) -> None:
        super().__init__("base", world, refresh)
        self.left_wheel = SimStepper("hello-motor-left-wheel")
        self.right_wheel = SimStepper("hello-motor-right-wheel")
        self.params = {"motion": {"default": {"vel_m": BASE_VEL, "accel_m": 0.12}}}
        self.status: dict[str, Any] = {"timestamp_pc": 0.0, "x": 0.0, "y": 0.0, "theta": 0.0, "x_vel": 0.0,
                                       "y_vel": 0.0, "theta_vel": 0.0, "pose_time_s": 0.0, "effort": (0, 0),
                                       "left_wheel": self.left_wheel.status,
                                       "right_wheel": self.right_wheel.status}
        self._pending = [0.0, 0.0]

    def startup(self, threaded: bool = True) -> bool:
        self.hw_valid = self.left_wheel.startup() and self.right_wheel.startup()
        return self.hw_valid

    def translate_by(self, x_m: float, v_m: float | None = None, a_m: float | None = None,
                     stiffness: float | None = None, contact_thresh_N: float | None = None,
                     contact_thresh: float | None = None) -> None:
        self._pending[0] += float(x_m)

    def rotate_by(self, x_r: float, v_r: float | None = None, a_r: float | None = None,
                  stiffness: float | None = None, contact_thresh_N: float | None = None,
                  contact_thresh: float | None = None) -> None:
        self._pending[1] += float(x_r)

    def set_velocity(self, v_m: float, w_r: float, a: float | None = None, stiffness: float | None = None,
                     contact_thresh_N: float | None = None, contact_thresh: float | None = None) -> None:
        """Only zero velocity (stop) is simulated: it cancels the current base motion."""
        if v_m == 0 and w_r == 0:
            self._pending = [0.0, 0.0]
            self._world.base_goal = None

    def push_command(self) -> None:
        if any(abs(v) > 1e-9 for v in self._pending):
            import numpy as np

            self._world.base_goal = np.array([self._pending[0], 0.0, self._pending[1]])
            self._pending = [0.0, 0.0]

    def pull_status(self) -> None:
        x, y, th = self._world.base_pose
        moving = self._world.base_moving()
        self.status.update(timestamp_pc=self._world.t, x=float(x), y=float(y), theta=float(th),
                           x_vel=BASE_VEL if moving else 0.0)
        for wheel in (self.left_wheel, self.right_wheel):
            wheel.status.update(is_mg_moving=moving, is_moving=moving, is_moving_filtered=moving,
                                near_pos_setpoint=not moving)

    def wait_until_at_setpoint(self, timeout: float = 15.0) -> bool:
        return self._wait(lambda: not self._world.base_moving(), timeout)

    def wait_while_is_moving(self, timeout: float = 15.0, use_motion_generator: bool = True) -> bool:
        return self._wait(lambda: not self._world.base_moving(), timeout)
