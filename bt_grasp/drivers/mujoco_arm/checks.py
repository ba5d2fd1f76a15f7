"""Feasibility on MuJoCo: the PyBullet arm's checks (pybullet_arm/checks.py) with MuJoCo's
signed distances between a collision ghost of the gripper and the table, basket and objects.

The ghost is a mocap body whose geoms never collide; a check writes their poses directly and asks
`mj_geomDistance`, so nothing in the simulated world moves or is stepped.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from bt_grasp.drivers.mujoco_arm.ik import mat_of
from bt_grasp.drivers.pybullet_arm.checks import FeasibilityMixin
from bt_grasp.drivers.pybullet_arm.gripper import FINGER_SIZE, GEOMETRY
from bt_grasp.drivers.pybullet_arm.params import FINGER_TOL_M, PALM_TOL_M

SEARCH_M = 0.01  # mj_geomDistance's search distance: only penetrations matter


class MjFeasibilityMixin(FeasibilityMixin):
    """FeasibilityMixin whose collision queries run on the MuJoCo model."""

    model: Any
    data: Any
    built: Any

    def _ghost_poses(self, pos: np.ndarray, orn: np.ndarray, gap: float) -> None:
        """Write the ghost geoms' world poses for the tcp at (pos, orn) with the fingers at `gap`."""
        R = mat_of(orn)
        tool0 = np.asarray(pos, float) - R[:, 2] * GEOMETRY.tcp_z
        m, d = self.model, self.data
        fx, _, fz = FINGER_SIZE
        for g, part in self.built.ghost_geoms.items():
            local = m.geom_pos[g].copy()
            if part == "finger":
                sign = 1.0 if local[0] > 0 else -1.0
                local = np.array([sign * (gap / 2 + fx / 2), 0.0, GEOMETRY.palm_z + fz / 2])
            d.geom_xpos[g] = tool0 + R @ local
            d.geom_xmat[g] = R.reshape(9)

    def _collisions(self, pos: np.ndarray, orn: np.ndarray, gap: float, check_objects: bool,
                    ignore: set[int] | None = None) -> str | None:
        """Name of what the gripper (open to `gap`) at (pos, orn) would penetrate, else None.

        The table and basket tolerate no penetration; objects tolerate PALM_TOL_M / FINGER_TOL_M.
        Whatever the gripper currently holds is ignored (it moves with the gripper)."""
        ignore = set(ignore or ())
        held = self._held_body()
        if held is not None:
            ignore.add(held)
        self._ghost_poses(pos, orn, gap)
        b = self.built
        others: list[tuple[int, list[int]]] = [(b.table_id, b.table_geoms), (b.basket_id, b.basket_geoms)]
        if check_objects:
            others += [(body, b.object_geoms[body]) for body in self.bodies]
        for body, geoms in others:
            if body in ignore:
                continue
            furniture = body in (b.table_id, b.basket_id)
            for g_ghost, part in b.ghost_geoms.items():
                tol = 1e-4 if furniture else (PALM_TOL_M if part == "palm" else FINGER_TOL_M)
                for g in geoms:
                    if mujoco.mj_geomDistance(self.model, self.data, g_ghost, g, SEARCH_M, None) < -tol:
                        return f"{self._body_name(body)} ({part})"
        return None

    def _nearest_object(self, pos: np.ndarray, max_dist: float = 0.08) -> int | None:
        best, best_d = None, max_dist
        for body in self.bodies:
            dist = float(np.linalg.norm(self.data.xpos[body] - pos))
            if dist < best_d:
                best, best_d = body, dist
        return best
