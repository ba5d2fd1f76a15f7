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

The devices are in steppers.py (lift, arm, base) and dynamixels.py (wrist yaw, head, gripper);
device.py holds what they share.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.drivers.stretch.sim.device import WAIT_POLL_S
from bt_grasp.drivers.stretch.sim.dynamixels import SimEndOfArm, SimHead
from bt_grasp.drivers.stretch.sim.steppers import SimBase, SimPrismaticJoint
from bt_grasp.drivers.stretch.sim.stretch_world import StretchWorld


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
