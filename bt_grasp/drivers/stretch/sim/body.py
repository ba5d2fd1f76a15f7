"""The subset of the stretch_body object model that StretchDriver uses, backed by StretchWorld.

Same attribute names, method signatures (checked against stretch_body by
tests/test_stretch_contract.py when stretch_body is importable), status keys and units:
- gripper: `end_of_arm.move_to('stretch_gripper', pct)`; status `pos` (servo world rad), `vel`
  (rad/s), `effort` (pct load, -100..100, negative when closing on something), `pos_pct`,
  `stalled`, `stall_overload`, `gripper_conversion` {aperture_m, finger_rad, finger_effort,
  finger_vel}, computed with stretch_body's RE2V0 parameters and formulas.
- lift / arm: metres; `move_to`/`move_by` are queued and only start on `robot.push_command()`
  (the steppers' semantics); `wait_until_at_setpoint`, `wait_while_is_moving`; status `pos`, `vel`
  and `motor` {pos_calibrated, is_mg_moving, near_pos_setpoint, in_guarded_event, effort_pct, ...}.
- Dynamixel joints (gripper, wrist yaw, head pan/tilt) move as soon as commanded, as on the robot.
- base: `translate_by`/`rotate_by` queued until push_command; status x, y, theta.

Waiting: the real calls block in wall time while background threads refresh status; here they
advance simulated time (refreshing status at 60 Hz) until the condition holds or the timeout,
measured in simulated seconds, runs out. Not modelled: runstop, pimu, wacc, collision manager,
sentries (the gripper overload back-off; the driver backs off itself), trajectories, stow/home
motions (home() only marks the joints calibrated).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bt_grasp.drivers.stretch.sim.world import (
    ARM_ACC,
    ARM_RANGE,
    ARM_VEL,
    BASE_VEL,
    GRIPPER_CONVERSION,
    GRIPPER_VEL_RAD_S,
    HEAD_VEL,
    LIFT_ACC,
    LIFT_RANGE,
    LIFT_VEL,
    PCT_MAX_OPEN,
    RAD_PER_PCT,
    STALL_MAX_EFFORT,
    STALL_MAX_TIME,
    STALL_MIN_VEL,
    YAW_RANGE,
    StretchWorld,
)

WAIT_POLL_S = 0.1  # stretch_body's wait loops poll every 0.1 s
GUARD_TIME_S = 0.3  # a stepper stopped short of its goal this long latches a guarded event
NEAR_SETPOINT_M = 0.004


class _SimPart:
    """Shared plumbing: the world, the robot-wide status refresh, hw_valid, startup/stop."""

    def __init__(self, name: str, world: StretchWorld, refresh: Callable[[], None]) -> None:
        self.name = name
        self._world = world
        self._refresh = refresh
        self.hw_valid = False
        self.params: dict[str, Any] = {}

    def startup(self, threaded: bool = True) -> bool:
        self.hw_valid = True
        return True

    def stop(self) -> None:
        self.hw_valid = False

    def push_command(self) -> None:
        """Dynamixel devices have nothing queued; steppers override."""

    def _wait(self, done: Callable[[], bool], timeout: float) -> bool:
        end = self._world.t + timeout
        self._refresh()
        while not done():
            if self._world.t >= end - 1e-9:
                return False
            self._world.advance(min(WAIT_POLL_S, end - self._world.t), self._refresh)
        return True


# ---------------------------------------------------------------------------- steppers
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


# ---------------------------------------------------------------------------- dynamixels
def _dxl_status() -> dict[str, Any]:
    return {"timestamp_pc": 0.0, "comm_errors": 0, "pos": 0.0, "vel": 0.0, "effort": 0.0, "temp": 30.0,
            "shutdown": 0, "hardware_error": 0, "input_voltage_error": False, "overheating_error": False,
            "motor_encoder_error": False, "electrical_shock_error": False, "overload_error": False,
            "stalled": False, "stall_overload": False, "pos_ticks": 0, "vel_ticks": 0, "effort_ticks": 0,
            "watchdog_errors": 0}


class SimDynamixel(_SimPart):
    """stretch_body.dynamixel_hello_XL430.DynamixelHelloXL430 for a revolute joint (rad)."""

    def __init__(self, name: str, joint: str, world: StretchWorld, refresh: Callable[[], None],
                 vel: float = HEAD_VEL, limits: tuple[float, float] = (-math.pi, math.pi)) -> None:
        super().__init__(name, world, refresh)
        self.joint = joint
        self.status = _dxl_status()
        self.params = {"req_calibration": 0, "stall_min_vel": STALL_MIN_VEL,
                       "stall_max_effort": STALL_MAX_EFFORT, "stall_max_time": STALL_MAX_TIME,
                       "motion": {"default": {"vel": vel, "accel": 4.0}}}
        self.is_calibrated = True
        self._limits = limits
        self._profile_end = 0.0
        self._over_eff_start: float | None = None

    def startup(self, threaded: bool = False) -> bool:
        self.hw_valid = True
        return True

    def stop(self, close_port: bool = True) -> None:
        self.hw_valid = False

    def _set(self, x: float) -> None:
        if self.joint == "joint_wrist_yaw":
            self._world.yaw_target = x
        else:
            self._world.head_target[self.name] = x
        self._world._apply_motors()

    def _start_profile(self, dx: float, v: float | None) -> None:
        vel = v or self.params["motion"]["default"]["vel"]
        self._profile_end = self._world.t + abs(dx) / vel + 0.05

    def move_to(self, x_des: float, v_des: float | None = None, a_des: float | None = None) -> None:
        x = min(max(float(x_des), self._limits[0]), self._limits[1])
        self._start_profile(x - self.status["pos"], v_des)
        self._set(x)

    def move_by(self, x_des: float, v_des: float | None = None, a_des: float | None = None) -> None:
        self.move_to(self.status["pos"] + float(x_des), v_des, a_des)

    def quick_stop(self) -> None:
        self.move_to(self.status["pos"])

    def _moving(self) -> bool:
        w = self._world
        return w.t < self._profile_end or (w.faults.never_finish and abs(self._cmd() - self.status["pos"]) > 1e-3)

    def _cmd(self) -> float:
        return self._world.yaw_target if self.joint == "joint_wrist_yaw" else self._world.head_target[self.name]

    def _stall_flags(self) -> None:
        """stretch_body's rule: stalled = |vel| < stall_min_vel; overload = stalled and |effort| >
        stall_max_effort for longer than stall_max_time."""
        st, t = self.status, self._world.t
        st["stalled"] = abs(st["vel"]) < self.params["stall_min_vel"]
        over = abs(st["effort"]) > self.params["stall_max_effort"]
        if st["stalled"] and over:
            self._over_eff_start = t if self._over_eff_start is None else self._over_eff_start
            st["stall_overload"] = t - self._over_eff_start > self.params["stall_max_time"]
        else:
            self._over_eff_start = None
            st["stall_overload"] = False

    def pull_status(self, data: Any = None) -> None:
        self.status.update(timestamp_pc=self._world.t, pos=self._world.q(self.joint),
                           vel=self._world.qd(self.joint))
        self._stall_flags()

    def wait_until_at_setpoint(self, timeout: float = 15.0, use_motion_generator: bool = True) -> bool:
        return self._wait(lambda: not self._moving(), timeout)


class SimStretchGripper(SimDynamixel):
    """stretch_body.stretch_gripper.StretchGripper: positions in pct (-100 closed .. ~54 open)."""

    def __init__(self, world: StretchWorld, refresh: Callable[[], None]) -> None:
        super().__init__("stretch_gripper", "", world, refresh, vel=GRIPPER_VEL_RAD_S)
        self.params.update(req_calibration=1, stall_backoff=2.0, gripper_conversion=dict(GRIPPER_CONVERSION))
        self.status["pos_pct"] = 0.0
        self.status["gripper_conversion"] = {"aperture_m": 0.0, "finger_rad": 0.0, "finger_effort": 0.0,
                                             "finger_vel": 0.0}
        self.pct_max_open = PCT_MAX_OPEN
        self.poses = {"zero": 0, "open": self.pct_max_open, "close": -100}
        self.is_calibrated = True

    def startup(self, threaded: bool = True) -> bool:
        self.hw_valid = True
        return True

    def pct_to_world_rad(self, pct: float) -> float:
        return pct * RAD_PER_PCT

    def world_rad_to_pct(self, r: float) -> float:
        return r / RAD_PER_PCT

    def move_to(self, pct: float, v_r: float | None = None, a_r: float | None = None) -> None:
        pct = min(max(float(pct), -100.0), self.pct_max_open)
        self._start_profile(self.pct_to_world_rad(pct) - self.status["pos"], v_r)
        self._world.on_gripper_command(pct)
        self._world.gripper_cmd_pct = pct

    def move_by(self, delta_pct: float, v_r: float | None = None, a_r: float | None = None) -> None:
        self.pull_status()
        self.move_to(self.status["pos_pct"] + float(delta_pct), v_r, a_r)

    def pose(self, p: str, v_r: float | None = None, a_r: float | None = None) -> None:
        self.move_to(self.poses[p], v_r, a_r)

    def _cmd(self) -> float:
        return self._world.gripper_cmd_pct * RAD_PER_PCT

    def pull_status(self, data: Any = None) -> None:
        w = self._world
        q, qd, _ = w.finger_state()
        from bt_grasp.drivers.stretch.sim.world import finger_q_to_pct

        pct = finger_q_to_pct(q)
        dq_pct = finger_q_to_pct(q + qd) - pct  # pct per second
        effort = w.gripper_effort_pct  # the servo model's current (see StretchWorld._servo_gripper)
        st = self.status
        st.update(timestamp_pc=w.t, pos=pct * RAD_PER_PCT, vel=dq_pct * RAD_PER_PCT, effort=effort,
                  pos_pct=pct, effort_ticks=int(effort * 10.24), pos_ticks=int(pct * 52.12 + 5212))
        self._stall_flags()
        gc = self.params["gripper_conversion"]
        slope = (gc["open_aperture_m"] - gc["closed_aperture_m"]) / (gc["open_robotis"] - gc["closed_robotis"])
        aperture = slope * (pct - gc["closed_robotis"]) + gc["closed_aperture_m"]
        st["gripper_conversion"] = {"aperture_m": aperture, "finger_rad": (aperture / 2.0) / gc["finger_length_m"],
                                    "finger_effort": effort, "finger_vel": slope * st["vel"] / 2.0}


class SimDynamixelChain(_SimPart):
    """stretch_body.dynamixel_X_chain.DynamixelXChain: named motors sharing one bus."""

    def __init__(self, name: str, world: StretchWorld, refresh: Callable[[], None],
                 motors: dict[str, SimDynamixel]) -> None:
        super().__init__(name, world, refresh)
        self.motors = motors
        self.joints = list(motors)
        self.status: dict[str, Any] = {k: m.status for k, m in motors.items()}

    def startup(self, threaded: bool = True) -> bool:
        ok = all(m.startup(threaded=False) for m in self.motors.values())
        self.hw_valid = ok
        self.pull_status()
        return ok

    def stop(self) -> None:
        for m in self.motors.values():
            m.stop()
        self.hw_valid = False

    def get_joint(self, joint_name: str) -> SimDynamixel | None:
        return self.motors.get(joint_name)

    def get_motor(self, motor_name: str) -> SimDynamixel | None:
        return self.motors.get(motor_name)

    def move_to(self, joint: str, x_r: float, v_r: float | None = None, a_r: float | None = None) -> None:
        self.motors[joint].move_to(x_r, v_r, a_r)

    def move_by(self, joint: str, x_r: float, v_r: float | None = None, a_r: float | None = None) -> None:
        self.motors[joint].move_by(x_r, v_r, a_r)

    def pull_status(self) -> None:
        for m in self.motors.values():
            m.pull_status()

    def wait_until_at_setpoint(self, timeout: float = 15.0, use_motion_generator: bool = True) -> bool:
        return self._wait(lambda: not any(m._moving() for m in self.motors.values()), timeout)


class SimEndOfArm(SimDynamixelChain):
    """stretch_body.end_of_arm.EndOfArm with the RE2 'tool_stretch_gripper': wrist_yaw + gripper."""

    def __init__(self, world: StretchWorld, refresh: Callable[[], None]) -> None:
        motors: dict[str, SimDynamixel] = {
            "wrist_yaw": SimDynamixel("wrist_yaw", "joint_wrist_yaw", world, refresh, vel=2.0, limits=YAW_RANGE),
            "stretch_gripper": SimStretchGripper(world, refresh)}
        super().__init__("end_of_arm", world, refresh, motors)

    def pose(self, joint: str, p: str, v_r: float | None = None, a_r: float | None = None) -> None:
        self.motors[joint].pose(p, v_r, a_r)  # type: ignore[attr-defined]

    def is_tool_present(self, class_name: str) -> bool:
        return class_name == "StretchGripper"


class SimHead(SimDynamixelChain):
    """stretch_body.head.Head: head_pan and head_tilt (rad)."""

    def __init__(self, world: StretchWorld, refresh: Callable[[], None]) -> None:
        motors: dict[str, SimDynamixel] = {
            "head_pan": SimDynamixel("head_pan", "joint_head_pan", world, refresh, limits=(-3.9, 1.5)),
            "head_tilt": SimDynamixel("head_tilt", "joint_head_tilt", world, refresh, limits=(-1.53, 0.79))}
        super().__init__("head", world, refresh, motors)
        self.poses = {"ahead": [0.0, 0.0], "tool": [-math.pi / 2, -math.pi / 4], "table": [-math.pi / 2, -0.8]}

    def pose(self, p: str, v_r: list[float | None] = [None, None],  # noqa: B006 - stretch_body's signature
             a_r: list[float | None] = [None, None]) -> None:  # noqa: B006
        self.move_to("head_pan", self.poses[p][0])
        self.move_to("head_tilt", self.poses[p][1])


# ---------------------------------------------------------------------------- robot
class SimStretchRobot:
    """stretch_body.robot.Robot over StretchWorld: the part of its API StretchDriver uses.

    `homed=False` simulates a robot whose steppers/gripper were never homed (is_homed() False until
    home()); `fail_startup` makes startup() return False like a robot with a device off the bus.
    `bt_grasp_world` is the simulator hook (faults, ground truth) a SimStretchDriver uses; a real
    Robot has no such attribute.
    """

    def __init__(self, world: StretchWorld | None = None, gui: bool = False, seed: int = 0,
                 homed: bool = True, fail_startup: bool = False) -> None:
        self.bt_grasp_world = world or StretchWorld(gui=gui, seed=seed)
        w = self.bt_grasp_world
        self.params: dict[str, Any] = {"tool": "tool_stretch_gripper", "serial_no": "sim-stretch-re2",
                                       "batch_name": "sim"}
        self.lift = SimPrismaticJoint("lift", w, self.pull_status)
        self.arm = SimPrismaticJoint("arm", w, self.pull_status)
        self.base = SimBase(w, self.pull_status)
        self.head = SimHead(w, self.pull_status)
        self.end_of_arm = SimEndOfArm(w, self.pull_status)
        self.devices: dict[str, Any] = {"base": self.base, "lift": self.lift, "arm": self.arm,
                                        "head": self.head, "end_of_arm": self.end_of_arm}
        self.status: dict[str, Any] = {"base": self.base.status, "lift": self.lift.status,
                                       "arm": self.arm.status, "head": self.head.status,
                                       "end_of_arm": self.end_of_arm.status}
        self._homed = homed
        self._fail_startup = fail_startup
        self._set_calibrated(homed)

    def _set_calibrated(self, flag: bool) -> None:
        self.lift.motor.status["pos_calibrated"] = flag
        self.arm.motor.status["pos_calibrated"] = flag
        self.end_of_arm.motors["stretch_gripper"].is_calibrated = flag

    def startup(self, start_non_dxl_thread: bool = True, start_dxl_thread: bool = True,
                start_sys_mon_thread: bool = True) -> bool:
        if self._fail_startup:
            return False
        ok = all(d.startup() for d in self.devices.values())
        self.pull_status()
        return ok

    def stop(self) -> None:
        for d in self.devices.values():
            d.stop()

    def get_status(self) -> dict[str, Any]:
        return dict(self.status)

    def pull_status(self) -> None:
        """What the real status threads do continuously; called by the sim at 60 Hz."""
        self.lift.pull_status()
        self.arm.pull_status()
        self.base.pull_status()
        self.head.pull_status()
        self.end_of_arm.pull_status()

    def push_command(self) -> None:
        self.base.push_command()
        self.arm.push_command()
        self.lift.push_command()

    def wait_command(self, timeout: float = 15.0, use_motion_generator: bool = True) -> bool:
        parts = (self.base, self.arm, self.lift)
        w = self.bt_grasp_world
        end = w.t + timeout
        self.pull_status()
        while True:
            busy = (w.base_moving() or any(p.motor.status["is_mg_moving"] for p in parts[1:])
                    or any(m._moving() for m in self.head.motors.values())
                    or any(m._moving() for m in self.end_of_arm.motors.values()))
            if not busy:
                return True
            if w.t >= end - 1e-9:
                return False
            w.advance(min(WAIT_POLL_S, end - w.t), self.pull_status)

    def is_homed(self) -> bool:
        ready = bool(self.lift.motor.status["pos_calibrated"] and self.arm.motor.status["pos_calibrated"])
        g = self.end_of_arm.motors["stretch_gripper"]
        return ready and (not g.params["req_calibration"] or g.is_calibrated)

    def home(self) -> None:
        """Marks every joint homed (the homing motions themselves are not simulated)."""
        self._set_calibrated(True)
