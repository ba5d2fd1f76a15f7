"""Feasibility: IK reach and collision checks of waypoints with a collision ghost; nothing moves."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pybullet as pb

from bt_grasp.drivers.base import Fault, GraspPose
from bt_grasp.drivers.pybullet_arm.gripper import (
    GEOMETRY,
    STROKE_M,
    TCP_FROM_TIP_M,
)
from bt_grasp.drivers.pybullet_arm.params import (
    DESCENT_CHECK_M,
    DOWN,
    FINGER_TOL_M,
    PALM_TOL_M,
    PREGRASP_M,
    REACH_TOL_M,
    TABLE_CLEARANCE_M,
)


class FeasibilityMixin:
    """Where a primitive would go and whether it can: reach, table clearance, collisions."""

    # Provided by the host class PyBulletArm (driver.py) and its other mixins.
    _facing: Any
    _finger_state: Any
    _ghost_palm: Any
    _held_body: Any
    _solve: Any
    basket_id: Any
    bodies: Any
    client: Any
    faults: Any
    ghost: Any
    q_cmd: Any
    table_id: Any

    def _ghost_at(self, pos: np.ndarray, orn: np.ndarray, gap: float) -> None:
        """Place the collision ghost so that its tcp is at (pos, orn)."""
        R = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        base = np.asarray(pos) - R[:, 2] * GEOMETRY.tcp_z
        pb.resetBasePositionAndOrientation(self.ghost, base.tolist(), list(orn), physicsClientId=self.client)
        for j in range(pb.getNumJoints(self.ghost, physicsClientId=self.client)):
            if pb.getJointInfo(self.ghost, j, physicsClientId=self.client)[2] == pb.JOINT_PRISMATIC:
                pb.resetJointState(self.ghost, j, gap / 2, physicsClientId=self.client)

    def _collisions(self, pos: np.ndarray, orn: np.ndarray, gap: float, check_objects: bool,
                    ignore: set[int] | None = None) -> str | None:
        """Name of what the gripper (open to `gap`) at (pos, orn) would penetrate, else None.

        The table and basket tolerate no penetration; objects tolerate PALM_TOL_M / FINGER_TOL_M.
        Whatever the gripper currently holds is ignored (it moves with the gripper).
        """
        ignore = set(ignore or ())
        held = self._held_body()
        if held is not None:
            ignore.add(held)
        self._ghost_at(pos, orn, gap)
        try:
            others = [self.table_id, self.basket_id] + (list(self.bodies) if check_objects else [])
            for b in others:
                if b in ignore:
                    continue
                pts = pb.getClosestPoints(self.ghost, b, distance=0.0, physicsClientId=self.client)
                for p in pts:
                    if b in (self.table_id, self.basket_id):
                        tol = 1e-4
                    else:
                        tol = PALM_TOL_M if p[3] == self._ghost_palm else FINGER_TOL_M
                    if p[8] < -tol:
                        part = "palm" if p[3] == self._ghost_palm else "finger"
                        return f"{self._body_name(b)} ({part})"
            return None
        finally:
            pb.resetBasePositionAndOrientation(self.ghost, (0, 0, -5), (0, 0, 0, 1), physicsClientId=self.client)

    def _tip_clear_of_table(self, pos: np.ndarray, orn: np.ndarray) -> bool:
        R = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        tip = np.asarray(pos) + R[:, 2] * TCP_FROM_TIP_M
        return float(tip[2]) >= TABLE_CLEARANCE_M - 1e-9

    def _body_name(self, b: int) -> str:
        if b == self.table_id:
            return "table"
        if b == self.basket_id:
            return "basket"
        spec = self.bodies.get(b)
        return spec.name if spec else f"body {b}"

    @staticmethod
    def _as_pose(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w = np.asarray(w, dtype=float)
        if w.shape == (4, 4):
            return w[:3, 3], _quat_from_matrix(w[:3, :3])
        if w.shape == (7,):
            return w[:3], w[3:]
        if w.shape == (3,):
            return w, DOWN.copy()
        raise ValueError(f"waypoint must be xyz, xyz+quat or a 4x4 pose, got shape {w.shape}")

    def feasible(self, waypoints: list[np.ndarray], gap: float | None = None,
                 check_objects: bool = True, ignore: set[int] | None = None) -> tuple[bool, str]:
        """IK reach and gripper collision at every waypoint (xyz = top-down, xyz+quat, or 4x4).

        Nothing moves. Reasons: "ik: waypoint i out of reach (err m)", "collision: <what> at waypoint i".
        """
        gap = self._finger_state()[0] if gap is None else gap
        q = self.q_cmd.copy()
        for i, w in enumerate(waypoints):
            pos, orn = self._as_pose(w)
            if not np.all(np.isfinite(pos)) or not np.all(np.isfinite(orn)):
                return False, f"ik: waypoint {i} is not finite"
            q, err, ang = self._solve(pos, orn, seed_q=q)
            if err > REACH_TOL_M or ang > 0.02:
                return False, f"ik: waypoint {i} out of reach (err {err:.3f} m, {ang:.3f} rad)"
            if not self._tip_clear_of_table(pos, orn):
                return False, f"collision: table at waypoint {i}"
            hit = self._collisions(pos, orn, gap, check_objects, ignore or set())
            if hit:
                return False, f"collision: {hit} at waypoint {i}"
        return True, ""

    # ------------------------------------------------------------------ primitives
    def _nearest_object(self, pos: np.ndarray, max_dist: float = 0.08) -> int | None:
        best, best_d = None, max_dist
        for b in self.bodies:
            p, _ = pb.getBasePositionAndOrientation(b, physicsClientId=self.client)
            d = float(np.linalg.norm(np.array(p) - pos))
            if d < best_d:
                best, best_d = b, d
        return best

    def _grasp_plan(self, pose: GraspPose, width: float, faults: list[Fault]) -> dict[str, Any]:
        """Where a grasp would move: the grasp point (raised so the fingertips clear the table, and
        moved by a grasp_offset fault), the pre-grasp above it, the descent and the body it aims at."""
        pos = np.asarray(pose.position, float).copy()
        orn = np.asarray(pose.orientation, float)
        orn = orn / np.linalg.norm(orn)
        plan: dict[str, Any] = {}
        for f in faults:
            if f.kind == "grasp_offset":
                R = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
                direction = np.asarray(f.params.get("direction", R[:, 0]), float)
                pos = pos + direction / np.linalg.norm(direction) * float(f.params.get("offset_m", 0.05))
        orn = self._facing(orn)  # after the offset fault, which is along the asked-for pose's axes
        R = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        approach = R[:, 2]
        tip_z = pos[2] + approach[2] * TCP_FROM_TIP_M
        if tip_z < TABLE_CLEARANCE_M:  # the grasp point is clamped so fingertips stay off the table
            plan["height_clamped_m"] = float(TABLE_CLEARANCE_M - tip_z)
            pos[2] += TABLE_CLEARANCE_M - tip_z
        pre = pos - approach * PREGRASP_M
        plan.update(pos=pos, orn=orn, pre=pre, tip_z=float(max(tip_z, TABLE_CLEARANCE_M)),
                    gap=float(np.clip(width, 0.01, STROKE_M)),
                    descent=[pos - approach * PREGRASP_M * k / 4 for k in (4, 3, 2, 1, 0)],
                    target=self._nearest_object(pos))
        return plan

    def _grasp_checks(self, plan: dict[str, Any]) -> tuple[bool, str]:
        ok, why = self.feasible([plan["pre"]], gap=plan["gap"], check_objects=True)
        if ok:
            ok, why = self._check_descent(plan["descent"], plan["orn"], plan["gap"])
        return ok, why

    def grasp_feasible(self, pose: GraspPose, width: float) -> tuple[bool, str]:
        """Exactly the checks grasp() makes before moving (pre-grasp, descent, grasp pose against
        everything but the aimed-at object); nothing moves and no fault is consumed."""
        ok, why = self._grasp_checks(self._grasp_plan(pose, width, self.faults.peek("grasp")))
        return ok, "" if ok else f"infeasible: {why}"

    def _check_descent(self, descent: list[np.ndarray], orn: np.ndarray, gap: float) -> tuple[bool, str]:
        """Descent waypoints: reach; never into the table; the palm/fingers not deep in other objects
        anywhere on the way down, not only at the grasp pose (a finger passing a mug's rim or a
        neighbour leaning over a clear grasp pose is driven into it and throws it)."""
        q = self.q_cmd.copy()
        for i, p in enumerate(descent):
            q, err, ang = self._solve(p, orn, seed_q=q)
            if err > REACH_TOL_M or ang > 0.02:
                return False, f"ik: descent waypoint {i} out of reach (err {err:.3f} m)"
            if not self._tip_clear_of_table(p, orn):
                return False, f"collision: table at descent waypoint {i}"
        # every object, the aimed-at one too: a finger landing on it is driven into it
        hit = self._line_hit(np.asarray(descent[0], float), np.asarray(descent[-1], float), orn, gap,
                             "the grasp pose")
        return (False, f"collision: {hit}") if hit else (True, "")

    def _line_hit(self, top: np.ndarray, bottom: np.ndarray, orn: np.ndarray, gap: float,
                  bottom_name: str) -> str | None:
        """What the gripper would penetrate coming straight down from `top` to `bottom`, checked
        every DESCENT_CHECK_M against every object, `bottom` first (`top` has its own check), and
        where: "blue mug (finger) 3 cm above <bottom_name>"; None if nothing."""
        length = float(np.linalg.norm(top - bottom))
        steps = max(1, int(math.ceil(length / DESCENT_CHECK_M)))
        for k in range(steps, 0, -1):
            hit = self._collisions(bottom + (top - bottom) * (1 - k / steps), orn, gap, True)
            if hit:
                above = (steps - k) / steps * length
                return f"{hit} at {bottom_name}" if k == steps else f"{hit} {100 * above:.0f} cm above {bottom_name}"
        return None


def _quat_from_matrix(R: np.ndarray) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(R).as_quat()
