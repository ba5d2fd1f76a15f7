"""The simulated Stretch's joints and motors: joint state, motor targets, the lift/arm motion
generators and the gripper servo model (stretch_world.py's docstring says how each is modelled)."""

from __future__ import annotations

import math
from typing import Any

from bt_grasp.drivers.stretch.sim.faults import ActiveFaults
from bt_grasp.drivers.stretch.sim.params import (
    APERTURE_PER_PCT,
    ARM_ACC,
    ARM_VEL,
    FINGER_GAP_SLOPE,
    FINGER_TAU_MAX,
    GRIPPER_VEL_RAD_S,
    HEAD_VEL,
    KP_PCT,
    LIFT_ACC,
    LIFT_VEL,
    RAD_PER_PCT,
    finger_q_to_pct,
    pct_to_finger_q,
)


class ActuatorsMixin:
    """Mixin of StretchWorld: reading the joints and driving their motors."""

    pb: Any
    cid: int
    robot: int
    joint: dict[str, int]
    arm_joints: list[int]
    fingers: list[int]
    faults: ActiveFaults
    lift_target: float
    arm_target: float
    yaw_target: float
    head_target: dict[str, float]
    gripper_cmd_pct: float
    gripper_sp_pct: float
    gripper_effort_pct: float
    _lift_sp: list[float]
    _arm_sp: list[float]

    def _set_finger_limits(self, lower: float) -> None:
        for f in self.fingers:
            self.pb.changeDynamics(self.robot, f, jointLowerLimit=lower, jointUpperLimit=0.6,
                                   physicsClientId=self.cid)

    def q(self, joint: str) -> float:
        return float(self.pb.getJointState(self.robot, self.joint[joint], physicsClientId=self.cid)[0])

    def qd(self, joint: str) -> float:
        return float(self.pb.getJointState(self.robot, self.joint[joint], physicsClientId=self.cid)[1])

    def lift_pos(self) -> float:
        return self.q("joint_lift")

    def arm_pos(self) -> float:
        return sum(float(self.pb.getJointState(self.robot, j, physicsClientId=self.cid)[0]) for j in self.arm_joints)

    def arm_vel(self) -> float:
        return sum(float(self.pb.getJointState(self.robot, j, physicsClientId=self.cid)[1]) for j in self.arm_joints)

    def finger_state(self) -> tuple[float, float, float]:
        """(mean finger q, mean finger qdot, mean applied torque) of the two fingers."""
        left, right = (self.pb.getJointState(self.robot, f, physicsClientId=self.cid) for f in self.fingers)
        # plain arithmetic: the same float as np.mean of two, without numpy's per-call overhead (every step)
        return (left[0] + right[0]) / 2, (left[1] + right[1]) / 2, (left[3] + right[3]) / 2

    def gripper_pct(self) -> float:
        return finger_q_to_pct(self.finger_state()[0])

    def _apply_motors(self) -> None:
        """(Re)send the joint targets; lift and arm follow their trapezoidal setpoints."""
        pb, c, r = self.pb, self.cid, self.robot
        if self.faults.never_finish:  # frozen: hold where they are
            self._lift_sp = [self.lift_pos(), 0.0]
            self._arm_sp = [self.arm_pos(), 0.0]
        self._send_steppers()
        pb.setJointMotorControl2(r, self.joint["joint_wrist_yaw"], pb.POSITION_CONTROL,
                                 targetPosition=self.yaw_target, maxVelocity=2.0, force=20.0, physicsClientId=c)
        for name, q in self.head_target.items():
            pb.setJointMotorControl2(r, self.joint[f"joint_{name}"], pb.POSITION_CONTROL, targetPosition=q,
                                     maxVelocity=HEAD_VEL, force=20.0, physicsClientId=c)
        self._servo_gripper()

    def _stepper_goals(self) -> tuple[float, float]:
        lift_goal = self.lift_target
        if self.faults.block_lift_at is not None:
            lift_goal = min(lift_goal, self.faults.block_lift_at)
        return lift_goal, self.arm_target

    def _step_steppers(self, dt: float) -> None:
        """Advance the lift/arm motion generators (trapezoids at stretch_body's default vel/accel:
        an instant velocity step would fling a held object out of the fingers)."""
        if self.faults.never_finish:
            return
        lift_goal, arm_goal = self._stepper_goals()
        _trapezoid(self._lift_sp, lift_goal, LIFT_VEL, LIFT_ACC, dt)
        _trapezoid(self._arm_sp, arm_goal, ARM_VEL, ARM_ACC, dt)
        self._send_steppers()

    def _send_steppers(self) -> None:
        pb, c, r = self.pb, self.cid, self.robot
        pb.setJointMotorControl2(r, self.joint["joint_lift"], pb.POSITION_CONTROL, targetPosition=self._lift_sp[0],
                                 maxVelocity=2 * LIFT_VEL, force=400.0, physicsClientId=c)
        for j in self.arm_joints:
            pb.setJointMotorControl2(r, j, pb.POSITION_CONTROL, targetPosition=self._arm_sp[0] / 4,
                                     maxVelocity=ARM_VEL / 2, force=100.0, physicsClientId=c)

    def _servo_gripper(self, dt: float = 0.0) -> None:
        """Dynamixel-like position servo. Its profile setpoint walks toward the command at the
        default velocity; the effort (the servo's current, pct load) is KP_PCT * (setpoint - pos)
        saturating at 100 %, and the fingers push with exactly that much torque. Free closing tracks
        the setpoint (small effort); against an object the setpoint runs on and the effort grows."""
        pct_now = self.gripper_pct()
        cmd = self.gripper_cmd_pct
        if self.faults.never_finish:
            self.gripper_sp_pct = pct_now  # the servo never gets anywhere
        else:
            step = GRIPPER_VEL_RAD_S / RAD_PER_PCT * dt
            d = cmd - self.gripper_sp_pct
            self.gripper_sp_pct += max(-step, min(step, d))
        err = self.gripper_sp_pct - pct_now
        self.gripper_effort_pct = max(-100.0, min(100.0, KP_PCT * err))
        force = max(0.02, abs(self.gripper_effort_pct) / 100.0 * FINGER_TAU_MAX)
        vmax = 2.0 * GRIPPER_VEL_RAD_S / RAD_PER_PCT * APERTURE_PER_PCT / FINGER_GAP_SLOPE
        for f in self.fingers:
            self.pb.setJointMotorControl2(self.robot, f, self.pb.POSITION_CONTROL,
                                          targetPosition=pct_to_finger_q(self.gripper_sp_pct), maxVelocity=vmax,
                                          force=force, physicsClientId=self.cid)


def _trapezoid(sp: list[float], goal: float, vmax: float, amax: float, dt: float) -> None:
    """One step of a trapezoidal motion generator; sp = [position, velocity], updated in place."""
    x, v = sp
    d = goal - x
    if abs(d) < 1e-6 and abs(v) < amax * dt:
        sp[0], sp[1] = goal, 0.0
        return
    stop_dist = v * v / (2 * amax)
    if d * v > 0 and abs(d) <= stop_dist:
        v_des = 0.0  # brake
    else:
        v_des = math.copysign(vmax, d)
    v += max(-amax * dt, min(amax * dt, v_des - v))
    x_new = x + v * dt
    if (goal - x_new) * d < 0 and abs(v) <= amax * dt * 2:  # would pass the goal at crawl speed
        x_new, v = goal, 0.0
    sp[0], sp[1] = x_new, v
