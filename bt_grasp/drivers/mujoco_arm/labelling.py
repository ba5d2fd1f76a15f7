"""The SimLabelling surface (drivers/capabilities.py) on MuJoCo, with pybullet_arm/labelling.py's meanings,
so `watchdog record` labels attempts on both engines by the same rules.

A finger is its pad geom; the friction at the pads is their explicit contact pairs' (the product
of the two coefficients, objects.py), which the `friction` fault rewrites.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from bt_grasp.drivers.mujoco_arm.model import PHYSICS_SUBSTEPS, TICK_S


class MjLabellingMixin:
    """SimLabelling for MujocoArm."""

    # Provided by the host class MujocoArm (driver.py) and its other mixins.
    model: Any
    data: Any
    built: Any
    _contact_bodies: Any
    _finger_state: Any

    def finger_touches(self) -> list[set[int]]:
        fingers = self.built.finger_geoms
        touched: list[set[int]] = [set() for _ in fingers]
        for g1, g2, b1, b2 in self._contact_bodies():
            for k, f in enumerate(fingers):
                if g1 == f:
                    touched[k].add(b2)
                elif g2 == f:
                    touched[k].add(b1)
        return touched

    def finger_gap_m(self) -> float:
        return float(self._finger_state()[0])

    def finger_normal_n(self, body: int) -> list[float]:
        """The normal components of MuJoCo's contact forces between each pad and `body`'s geoms."""
        m, d = self.model, self.data
        fingers = self.built.finger_geoms
        out = [0.0] * len(fingers)
        f6 = np.zeros(6)
        for i, (g1, g2, b1, b2) in enumerate(self._contact_bodies()):
            for k, f in enumerate(fingers):
                if (g1 == f and b2 == body) or (g2 == f and b1 == body):
                    mujoco.mj_contactForce(m, d, i, f6)  # contact frame: f6[0] is the normal
                    out[k] += float(f6[0])
        return out

    def body_mass_friction(self, body: int) -> tuple[float, float]:
        m = self.model
        geoms = set(self.built.object_geoms.get(body, []))
        mus = [float(m.pair_friction[p][0]) for p in range(m.npair)
               if int(m.pair_geom1[p]) in geoms or int(m.pair_geom2[p]) in geoms]
        return float(m.body_mass[body]), max(mus, default=0.0)

    def set_body_mass(self, body: int, kg: float) -> None:
        """The inertia scales with the mass: a heavy body with a light one's inertia is unstable."""
        m = self.model
        m.body_inertia[body] *= kg / float(m.body_mass[body])
        m.body_mass[body] = kg
        mujoco.mj_setConst(m, self.data)  # the constraint solver's mass-derived constants

    def step_holding(self, seconds: float) -> None:
        """Plain MuJoCo steps: the servos keep their targets; the clock does not advance."""
        mujoco.mj_step(self.model, self.data, nstep=round(seconds / TICK_S) * PHYSICS_SUBSTEPS)
