"""The SimLabelling surface (drivers/capabilities.py) on PyBullet: contacts, forces and masses as Bullet
has them, read by `watchdog record` to label attempts; never used to decide anything in a run
(set_body_mass also serves the injected `mass` fault)."""

from __future__ import annotations

from typing import Any

import pybullet as pb

from bt_grasp.drivers.pybullet_arm import scene
from bt_grasp.drivers.pybullet_arm.gripper import FINGER_FRICTION


class LabellingMixin:
    """SimLabelling for PyBulletArm."""

    # Provided by the host class PyBulletArm (driver.py) and its other mixins.
    client: Any
    finger_j: Any
    robot: Any
    _finger_state: Any

    def finger_touches(self) -> list[set[int]]:
        return [{c[2] for c in pb.getContactPoints(bodyA=self.robot, linkIndexA=j, physicsClientId=self.client)}
                for j in self.finger_j]

    def finger_gap_m(self) -> float:
        return self._finger_state()[0]

    def finger_normal_n(self, body: int) -> list[float]:
        return [sum(p[9] for p in pb.getContactPoints(self.robot, body, j, -1, physicsClientId=self.client))
                for j in self.finger_j]

    def body_mass_friction(self, body: int) -> tuple[float, float]:
        """Bullet's friction at a contact is the product of the two bodies' coefficients."""
        info = pb.getDynamicsInfo(body, -1, physicsClientId=self.client)
        return float(info[0]), FINGER_FRICTION * float(info[1])

    def set_body_mass(self, body: int, kg: float) -> None:
        pb.changeDynamics(body, -1, mass=float(kg), physicsClientId=self.client)

    def step_holding(self, seconds: float) -> None:
        """Plain simulation steps: the motors keep their targets; the clock does not advance."""
        for _ in range(round(seconds / scene.TIMESTEP)):
            pb.stepSimulation(physicsClientId=self.client)
