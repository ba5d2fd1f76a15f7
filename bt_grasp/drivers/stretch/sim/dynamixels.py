"""The simulated stretch_body Dynamixel devices: wrist yaw, head pan/tilt and the gripper servo,
which move as soon as commanded, and the chains (end of arm, head) that group them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bt_grasp.drivers.stretch.sim.device import _SimPart
from bt_grasp.drivers.stretch.sim.params import (
    GRIPPER_CONVERSION,
    GRIPPER_VEL_RAD_S,
    HEAD_VEL,
    PCT_MAX_OPEN,
    RAD_PER_PCT,
    STALL_MAX_EFFORT,
    STALL_MAX_TIME,
    STALL_MIN_VEL,
    YAW_RANGE,
    finger_q_to_pct,
)
from bt_grasp.drivers.stretch.sim.stretch_world import StretchWorld


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
