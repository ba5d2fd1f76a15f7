"""The simulated Stretch's base, moved kinematically (no wheel dynamics), carrying what the
fingers hold along with it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bt_grasp.drivers.stretch.sim.params import BASE_ROT_VEL, BASE_VEL


class KinematicBaseMixin:
    """Mixin of StretchWorld: the base pose in the odometry frame and its pending motion."""

    pb: Any
    cid: int
    robot: int
    objects: dict[int, Any]
    left_links: set[int]
    right_links: set[int]
    base_pose: np.ndarray
    base_goal: np.ndarray | None
    _base_inertial: tuple[Any, Any]

    def _step_base(self, dt: float) -> None:
        """Kinematic base: consume the pending translation, then rotation, at the default speeds."""
        if self.base_goal is None:
            return
        x, y, th = self.base_pose
        lin, ang = self.base_goal[0], self.base_goal[2]
        if abs(lin) > 1e-6:
            step = math.copysign(min(abs(lin), BASE_VEL * dt), lin)
            x, y = x + step * math.cos(th), y + step * math.sin(th)
            self.base_goal[0] -= step
        elif abs(ang) > 1e-6:
            step = math.copysign(min(abs(ang), BASE_ROT_VEL * dt), ang)
            th += step
            self.base_goal[2] -= step
        else:
            self.base_goal = None
            return
        carried = self._gripped_bodies()
        old = self._base_T()
        self.base_pose[:] = (x, y, th)
        self._set_base_pose(x, y, th)
        # a teleported base imparts no velocity, so friction would not carry a held object: move
        # what the fingers hold by the same rigid motion (the kinematic base's only concession)
        if carried:
            delta = self._base_T() @ np.linalg.inv(old)
            for b in carried:
                pos, orn = self.pb.getBasePositionAndOrientation(b, physicsClientId=self.cid)
                R = np.array(self.pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
                T = np.eye(4)
                T[:3, :3], T[:3, 3] = R, pos
                T = delta @ T
                q = _quat_from_matrix(T[:3, :3])
                self.pb.resetBasePositionAndOrientation(b, T[:3, 3].tolist(), q, physicsClientId=self.cid)

    def _base_T(self) -> np.ndarray:
        x, y, th = self.base_pose
        T = np.eye(4)
        T[:2, :2] = [[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]]
        T[0, 3], T[1, 3] = x, y
        return T

    def _gripped_bodies(self) -> list[int]:
        out = []
        for b in self.objects:
            links = {c[3] for c in self.pb.getContactPoints(self.robot, b, physicsClientId=self.cid)}
            if links & self.left_links and links & self.right_links:
                out.append(b)
        return out

    def _set_base_pose(self, x: float, y: float, th: float) -> None:
        """Put base_link at (x, y, th). PyBullet's reset takes the base's inertial frame, so the
        URDF's base inertial offset is composed in."""
        pb = self.pb
        orn = pb.getQuaternionFromEuler([0, 0, th])
        pos, q = pb.multiplyTransforms([x, y, 0.0], orn, self._base_inertial[0], self._base_inertial[1])
        pb.resetBasePositionAndOrientation(self.robot, pos, q, physicsClientId=self.cid)

    def base_moving(self) -> bool:
        return self.base_goal is not None


def _quat_from_matrix(R: np.ndarray) -> list[float]:
    """(x, y, z, w) of a rotation matrix (Shepperd's method, branch on the largest term)."""
    tr = float(np.trace(R))
    if tr > 0:
        s = math.sqrt(tr + 1.0) * 2
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2]) * 2
        q = [0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif R[1, 1] > R[2, 2]:
        s = math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2]) * 2
        q = [(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1]) * 2
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s]
    return [float(v) for v in q]
