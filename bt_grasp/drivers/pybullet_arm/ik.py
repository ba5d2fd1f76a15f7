"""Iterated inverse kinematics on a private kinematic copy of the arm.

Single pybullet IK calls can be 5-53 mm off (measured on grasps in clutter; iterating brings it
under 0.1 mm), so we iterate: solve, set the joints, read forward kinematics, solve again from
there. Doing this in a separate DIRECT client holding only the robot avoids saving/restoring the
cluttered world.
"""

from __future__ import annotations

import numpy as np
import pybullet as pb

from bt_grasp.drivers.pybullet_arm.contact import CONTACT
from bt_grasp.drivers.pybullet_arm.gripper import arm_urdf_path
from bt_grasp.drivers.pybullet_arm.speed import OPTIONS

ARM_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
              "wrist_2_joint", "wrist_3_joint")
FINGER_JOINTS = ("finger_right_joint", "finger_left_joint")
# elbow-up, tool pointing down: the null-space rest pose that keeps solutions in one branch
HOME_Q = np.array([0.0, -1.9, 1.9, -1.571, -1.571, 0.0])
Q_LOWER = np.array([-2 * np.pi, -np.pi, -np.pi, -2 * np.pi, -2 * np.pi, -2 * np.pi])
Q_UPPER = -Q_LOWER


def joint_indices(client: int, body: int) -> tuple[list[int], list[int], int]:
    """(arm joint ids, finger joint ids, tcp link id) by name."""
    names = {pb.getJointInfo(body, j, physicsClientId=client)[1].decode(): j
             for j in range(pb.getNumJoints(body, physicsClientId=client))}
    links = {pb.getJointInfo(body, j, physicsClientId=client)[12].decode(): j
             for j in range(pb.getNumJoints(body, physicsClientId=client))}
    return [names[n] for n in ARM_JOINTS], [names[n] for n in FINGER_JOINTS], links["tcp"]



def wrapped_near(q: np.ndarray, seed_q: np.ndarray | None) -> np.ndarray:
    """Joint angles wrapped into [-pi, pi), or, with CONTACT.ik_near_seed and a seed, each joint's
    2pi-equivalent nearest the seed inside the limits: wrapped, a joint crossing +-pi along a line
    jumps a full turn between two IK points (contact.py)."""
    q = (q + np.pi) % (2 * np.pi) - np.pi
    if CONTACT.ik_near_seed and seed_q is not None:
        seed = np.asarray(seed_q, dtype=float)[:6]
        near = seed + (q - seed + np.pi) % (2 * np.pi) - np.pi
        q = np.where((near >= Q_LOWER) & (near <= Q_UPPER), near, q)
    return q

class IkSolver:
    """IK for the grasp point (tcp link) with a reach error, on its own physics client."""

    def __init__(self, base_pos: tuple[float, float, float] = (0, 0, 0),
                 base_orn: tuple[float, float, float, float] = (0, 0, 0, 1)) -> None:
        self.client = pb.connect(pb.DIRECT)
        # kinematics only: the lean arm (no visual meshes) loads several times faster
        self.body = pb.loadURDF(str(arm_urdf_path(visual=not OPTIONS.lean_robot)), base_pos, base_orn, useFixedBase=True,
                                physicsClientId=self.client)
        self.arm, self.fingers, self.tcp = joint_indices(self.client, self.body)
        self._movable = [j for j in range(pb.getNumJoints(self.body, physicsClientId=self.client))
                         if pb.getJointInfo(self.body, j, physicsClientId=self.client)[2] != pb.JOINT_FIXED]

    def _set(self, q: np.ndarray) -> None:
        for j, v in zip(self.arm, q, strict=True):
            pb.resetJointState(self.body, j, float(v), physicsClientId=self.client)

    def fk(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """tcp position and quaternion (x, y, z, w) for arm joints q."""
        self._set(q)
        st = pb.getLinkState(self.body, self.tcp, computeForwardKinematics=True, physicsClientId=self.client)
        return np.array(st[4]), np.array(st[5])

    def solve(self, pos: np.ndarray, orn: np.ndarray, seed_q: np.ndarray | None = None,
              iters: int = 20, tol: float = 1e-4) -> tuple[np.ndarray, float, float]:
        """Joint solution, position error (m) and orientation error (rad) after iterating."""
        q = np.array(HOME_Q if seed_q is None else seed_q, dtype=float)
        self._set(q)
        rest = list(HOME_Q) + [0.0] * (len(self._movable) - 6)
        lower = list(Q_LOWER) + [0.0] * (len(self._movable) - 6)
        upper = list(Q_UPPER) + [0.0425] * (len(self._movable) - 6)
        ranges = [u - lo for u, lo in zip(upper, lower, strict=True)]
        pos_err = ang_err = np.inf
        for i in range(iters):
            # first call picks the branch via the null space; later ones refine from the current q
            kw = dict(lowerLimits=lower, upperLimits=upper, jointRanges=ranges, restPoses=rest) if i == 0 else {}
            sol = pb.calculateInverseKinematics(
                self.body, self.tcp, [float(v) for v in pos], [float(v) for v in orn],
                maxNumIterations=100, residualThreshold=1e-6, physicsClientId=self.client, **kw)
            q = np.array(sol[:6])
            p, o = self.fk(q)
            pos_err = float(np.linalg.norm(p - pos))
            dot = abs(float(np.dot(o, orn / np.linalg.norm(orn))))
            ang_err = float(2 * np.arccos(min(1.0, dot)))
            if pos_err < tol and ang_err < 2e-3:
                break
        return wrapped_near(q, seed_q), pos_err, ang_err

    def close(self) -> None:
        try:
            pb.disconnect(self.client)
        except pb.error:
            pass


_SHARED: dict[str, IkSolver] = {}


def shared_solver() -> IkSolver:
    """One kinematic client per process for scene generation (the robot stands at the origin)."""
    if "s" not in _SHARED:
        _SHARED["s"] = IkSolver()
    return _SHARED["s"]
