"""Joint and finger commands, state read-back and the per-tick runtime, on MuJoCo.

The step loops primitives are made of (straight Cartesian lines, guarded moves, waits, the finger
reference ramp) are the PyBullet arm's, inherited from pybullet_arm/control.py's ControlMixin: a
primitive here runs the same phases, speeds and telemetry as there. Only what touches the engine
is replaced: the arm is held by position servos (MuJoCo `position` actuators, force-limited
like the PyBullet motors, the links' own weight compensated), each finger by a position servo
whose force limit is the grip force against a drive damping that caps its speed (a 2F-85's drive,
model.py), and one tick (1/240 s) is PHYSICS_SUBSTEPS MuJoCo steps (one).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from bt_grasp.drivers.mujoco_arm.ik import quat_xyzw
from bt_grasp.drivers.mujoco_arm.model import PHYSICS_SUBSTEPS, TICK_S
from bt_grasp.drivers.pybullet_arm.contact import CONTACT
from bt_grasp.drivers.pybullet_arm.control import ControlMixin, clamp
from bt_grasp.drivers.pybullet_arm.gripper import FINGER_TRAVEL_M


class WristLoad:
    """The vertical force (N, downward positive) the gripper and what it holds put on the tool
    flange: MuJoCo's force sensor at the palm's site (the reaction between tool0 and the palm),
    turned into the world's vertical axis, as pybullet_arm/wrist.py reads Bullet's F/T sensor."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, site: int) -> None:
        self.data = data
        self.site = site
        sensor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, "wrist_force")
        self.adr = int(model.sensor_adr[sensor])
        # the empty gripper's load (what a real F/T sensor is tared with), from the model's masses
        body = int(model.site_bodyid[site])
        self.empty_n = float(model.body_subtreemass[body]) * abs(float(model.opt.gravity[2]))

    def read(self) -> float:
        f = self.data.sensordata[self.adr:self.adr + 3]
        R = self.data.site_xmat[self.site].reshape(3, 3)
        return float((R @ f)[2])


class MjControlMixin(ControlMixin):
    """ControlMixin with MuJoCo's actuators and state."""

    # Provided by the host class MujocoArm (driver.py) and its other mixins.
    model: Any
    data: Any
    built: Any
    _fingers_frozen: bool
    _gap_floor: float
    grip_force: float

    def _hold_arm(self, q: np.ndarray) -> None:
        self.data.ctrl[self.built.arm_act] = q

    def _apply_fingers(self) -> None:
        """Each finger's servo target and force cap, and the drive damping that holds a free finger
        to the finger speed at that force (model.py, the finger drive)."""
        q = clamp(self.gap_ref / 2, 0.0, FINGER_TRAVEL_M)
        damping = max(self.grip_force, 1.0) / CONTACT.finger_speed_mps
        for a, dof in zip(self.built.finger_act, self.built.finger_dofadr, strict=True):
            self.data.ctrl[a] = q
            self.model.actuator_forcerange[a] = (-self.grip_force, self.grip_force)
            self.model.dof_damping[dof] = damping

    def _finger_state(self) -> tuple[float, float]:
        """(gap in metres, mean |servo force| / max force)."""
        gap = float(sum(self.data.qpos[a] for a in self.built.finger_qadr))
        force = float(np.mean(np.abs(self.data.actuator_force[self.built.finger_act])))
        return gap, force / self.max_force

    def _finger_speed(self) -> float:
        """Mean |finger joint speed| (m/s)."""
        return float(np.mean(np.abs(self.data.qvel[self.built.finger_dofadr])))

    def tcp_pose(self) -> tuple[np.ndarray, np.ndarray]:
        s = self.built.tcp_site
        return self.data.site_xpos[s].copy(), quat_xyzw(self.data.site_xmat[s])

    def _q(self) -> np.ndarray:
        return np.array(self.data.qpos[self.built.arm_qadr])

    def _tick(self) -> None:
        """One control tick: PHYSICS_SUBSTEPS steps; telemetry when due, launches, timeout and stop()."""
        self._advance_fingers()
        mujoco.mj_step(self.model, self.data, nstep=PHYSICS_SUBSTEPS)
        self.clock += TICK_S
        self._steps += 1
        self._after_step(self.data)

    def _hold_safe(self) -> None:
        """motions.py's safe state: the arm held at its joints, the fingers stopped where they are
        unless they squeeze something (then the grip stays)."""
        from bt_grasp.drivers.pybullet_arm.motions import CLOSING_SHARE, SQUEEZE_MARGIN_M

        q = self._q()
        self.q_cmd = q
        self._hold_arm(q)
        gap = self._finger_state()[0]
        closing = float(np.mean(self.data.qvel[self.built.finger_dofadr])) < -CLOSING_SHARE * CONTACT.finger_speed_mps
        if closing or self.gap_ref >= gap - SQUEEZE_MARGIN_M:
            self.gap_ref = gap
        self.gap_cmd = self.gap_ref
        self._apply_fingers()
