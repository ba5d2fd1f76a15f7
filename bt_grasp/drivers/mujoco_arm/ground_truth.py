"""Simulator ground truth on MuJoCo (scores runs only): poses, what is held, launches.

The queries are pybullet_arm/ground_truth.py's (what counts as held or in the basket is defined
there once); the contacts and velocities they read come from MuJoCo's data. Launches are
recorded by the same rule and record as launches.py: an object not held moving faster than
1 m/s sideways or upwards.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from bt_grasp.drivers.pybullet_arm.ground_truth import GroundTruthMixin
from bt_grasp.drivers.pybullet_arm.launches import LaunchWatch

HELD_MIN_Z = 0.002  # the object's lowest point must be off the table by this (as in the PyBullet arm)


def free_body_velocity(data: mujoco.MjData, body: int) -> tuple[np.ndarray, np.ndarray]:
    """A free body's linear (world frame) and angular (body frame) velocity: its free joint's qvel."""
    adr = int(data.model.jnt_dofadr[data.model.body_jntadr[body]])
    return data.qvel[adr:adr + 3], data.qvel[adr + 3:adr + 6]


class MjLaunchWatch(LaunchWatch):
    """launches.py's LaunchWatch reading a free body's linear velocity from MuJoCo's qvel."""

    def velocity(self, world: Any, body: int) -> tuple[float, float, float]:
        vx, vy, vz = (float(v) for v in free_body_velocity(world, body)[0])
        return vx, vy, vz


class MjGroundTruthMixin(GroundTruthMixin):
    """GroundTruthMixin with MuJoCo's contacts and poses."""

    model: Any
    data: Any
    built: Any
    _body_name: Any

    def object_pose(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        b = self._body_named(name)
        if b is None:
            return None
        w, x, y, z = (float(v) for v in self.data.xquat[b])
        return np.array(self.data.xpos[b]), np.array([x, y, z, w])

    def _contact_bodies(self) -> list[tuple[int, int, int, int]]:
        """(geom1, geom2, body1, body2) of every active contact."""
        d, m = self.data, self.model
        n = int(d.ncon)
        if n == 0:
            return []
        geoms = np.asarray(d.contact.geom[:n])
        bodies = m.geom_bodyid[geoms]
        return [(int(g[0]), int(g[1]), int(b[0]), int(b[1])) for g, b in zip(geoms, bodies, strict=True)]

    def contacts_of(self, name: str) -> list[tuple[str, float, float]]:
        """pybullet_arm/ground_truth.py's contacts_of, from MuJoCo's contacts (pads included)."""
        body = self._body_named(name)
        if body is None:
            return []
        force = np.zeros(6)
        out = []
        for i, (g1, g2, b1, b2) in enumerate(self._contact_bodies()):
            if body not in (b1, b2):
                continue
            geom, other = (g2, b2) if b1 == body else (g1, b1)
            mujoco.mj_contactForce(self.model, self.data, i, force)
            if geom in self.built.finger_geoms:
                what = "finger"
            elif other in self.bodies or other in (self.built.table_id, self.built.basket_id):
                what = self._body_name(other)
            else:
                what = "gripper"
            out.append((what, -float(self.data.contact.dist[i]), float(force[0])))
        return out

    def _in_grip(self, contacts: list[tuple[int, int, int, int]] | None = None) -> set[int]:
        """Bodies touching every finger pad (`contacts`: _contact_bodies(), read now if not given)."""
        touching: dict[int, set[int]] = {g: set() for g in self.built.finger_geoms}
        for g1, g2, b1, b2 in self._contact_bodies() if contacts is None else contacts:
            if g1 in touching:
                touching[g1].add(b2)
            if g2 in touching:
                touching[g2].add(b1)
        return set.intersection(*touching.values())

    def _held_body(self) -> int | None:
        contacts = self._contact_bodies()
        grip = self._in_grip(contacts)
        table = self.built.table_id
        for b in self.bodies:
            if b not in grip:
                continue
            if any({b1, b2} == {b, table} for _, _, b1, b2 in contacts):
                continue
            if self._lowest_z(b) > HELD_MIN_Z:
                return b
        return None

    def _lowest_z(self, b: int) -> float:
        """The lowest point of the body's collision geoms (exact for MuJoCo's shapes and hulls)."""
        m, d = self.model, self.data
        low = np.inf
        for g in self.built.object_geoms.get(b, []):
            R = d.geom_xmat[g].reshape(3, 3)
            z = float(d.geom_xpos[g][2])
            size = m.geom_size[g]
            kind = m.geom_type[g]
            if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
                z -= size[0]
            elif kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
                c = abs(float(R[2, 2]))
                z -= c * size[1] + np.sqrt(max(0.0, 1.0 - c * c)) * size[0]
            elif kind == mujoco.mjtGeom.mjGEOM_MESH:
                mesh = int(m.geom_dataid[g])
                start = int(m.mesh_vertadr[mesh])
                verts = m.mesh_vert[start:start + int(m.mesh_vertnum[mesh])]
                z += float(np.min(verts @ R[2]))
            else:  # a box: its corners
                z -= float(np.abs(R[2]) @ size)
            low = min(low, z)
        return low
