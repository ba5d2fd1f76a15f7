"""Inverse kinematics of the grasp point by damped least squares on MuJoCo's site Jacobians.

A private kinematic copy (the arm alone, model.build(with_world=False)) so solving never
touches the simulated world's state. Same contract as pybullet_arm/ik.py's IkSolver.solve:
(joint solution, position error m, orientation error rad). The home pose HOME_Q pulls the null
space weakly, keeping solutions in the elbow-up, tool-down branch the PyBullet solver keeps with
its rest pose.
"""

from __future__ import annotations

import mujoco
import numpy as np

from bt_grasp.drivers.mujoco_arm import model as mjmodel
from bt_grasp.drivers.pybullet_arm.ik import HOME_Q, Q_LOWER, Q_UPPER, wrapped_near

DAMPING = 1e-4          # λ² of the damped pseudo-inverse (m², rad²)
MAX_STEP_RAD = 0.4      # joint change per iteration: keeps a far target from flipping branches
NULL_GAIN = 0.02        # pull towards HOME_Q in the Jacobian's null space


def quat_xyzw(mat: np.ndarray) -> np.ndarray:
    """Quaternion (x, y, z, w) of a 3x3 rotation (flattened or not)."""
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.asarray(mat, float).reshape(9))
    return np.array([q[1], q[2], q[3], q[0]])


def mat_of(quat_xyzw_: np.ndarray) -> np.ndarray:
    """3x3 rotation of a quaternion (x, y, z, w)."""
    x, y, z, w = (float(v) for v in quat_xyzw_)
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, np.array([w, x, y, z]) / np.linalg.norm([w, x, y, z]))
    return out.reshape(3, 3)


class MjIkSolver:
    """IK for the tcp site on the arm-only model."""

    def __init__(self) -> None:
        self.built = mjmodel.build([], [], with_world=False)
        self.model = self.built.model
        self.data = mujoco.MjData(self.model)
        self.site = self.built.tcp_site
        self.qadr = self.built.arm_qadr
        self.dofadr = self.built.arm_dofadr
        self._jp = np.zeros((3, self.model.nv))
        self._jr = np.zeros((3, self.model.nv))

    def fk(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """tcp position and quaternion (x, y, z, w) for arm joints q."""
        self.data.qpos[self.qadr] = q
        mujoco.mj_kinematics(self.model, self.data)
        return self.data.site_xpos[self.site].copy(), quat_xyzw(self.data.site_xmat[self.site])

    def solve(self, pos: np.ndarray, orn: np.ndarray, seed_q: np.ndarray | None = None,
              iters: int = 20, tol: float = 1e-4) -> tuple[np.ndarray, float, float]:
        """Joint solution, position error (m) and orientation error (rad) after iterating.

        `iters` counts like the PyBullet solver's outer iterations (each of those ran up to 100
        inner ones), so every outer iteration here is ten DLS steps."""
        m, d = self.model, self.data
        q = np.array(HOME_Q if seed_q is None else seed_q, dtype=float)[:6]
        R_goal = mat_of(orn)
        pos = np.asarray(pos, float)
        pos_err = ang_err = np.inf
        for _ in range(max(1, iters) * 10):
            d.qpos[self.qadr] = q
            mujoco.mj_kinematics(m, d)
            p = d.site_xpos[self.site]
            R = d.site_xmat[self.site].reshape(3, 3)
            e_p = pos - p
            # rotation error as a world-frame rotation vector taking R to R_goal
            e_r = np.zeros(3)
            q_err = np.zeros(4)
            mujoco.mju_mat2Quat(q_err, (R_goal @ R.T).reshape(9))
            mujoco.mju_quat2Vel(e_r, q_err, 1.0)
            pos_err, ang_err = float(np.linalg.norm(e_p)), float(np.linalg.norm(e_r))
            if pos_err < tol and ang_err < 2e-3:
                break
            mujoco.mj_comPos(m, d)
            mujoco.mj_jacSite(m, d, self._jp, self._jr, self.site)
            J = np.vstack([self._jp[:, self.dofadr], self._jr[:, self.dofadr]])
            err = np.concatenate([e_p, e_r])
            JJt = J @ J.T + DAMPING * np.eye(6)
            dq = J.T @ np.linalg.solve(JJt, err)
            null = np.eye(6) - J.T @ np.linalg.solve(JJt, J)
            dq += NULL_GAIN * null @ (HOME_Q - q)
            scale = max(1.0, float(np.max(np.abs(dq))) / MAX_STEP_RAD)
            q = np.clip(q + dq / scale, Q_LOWER, Q_UPPER)
        return wrapped_near(q, seed_q), pos_err, ang_err

    def close(self) -> None:
        """Nothing to release (kept for the PyBullet solver's interface)."""
