"""The recorder's rotation maths (quaternions x, y, z, w), engine-free.

Each function repeats Bullet's own arithmetic (pybullet's getQuaternionFromEuler,
getEulerFromQuaternion, getMatrixFromQuaternion) operation for operation, so a recording on the
PyBullet arm is bit-for-bit the one made when the recorder called pybullet for them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def quat_from_euler(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """Fixed-axis x-y-z angles (roll about x first, then pitch about y, yaw about z), normalised."""
    cr, sr = math.cos(roll / 2.0), math.sin(roll / 2.0)
    cp, sp = math.cos(pitch / 2.0), math.sin(pitch / 2.0)
    cy, sy = math.cos(yaw / 2.0), math.sin(yaw / 2.0)
    q = (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
         cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return q[0] / n, q[1] / n, q[2] / n, q[3] / n


def yaw_of(q: Sequence[float] | np.ndarray) -> float:
    """The yaw of quat_from_euler's inverse (Bullet's getEulerZYX, gimbal lock included)."""
    x, y, z, w = (float(v) for v in q)
    sarg = -2.0 * (x * z - w * y)
    if sarg <= -0.99999:
        return 2.0 * math.atan2(x, -y)
    if sarg >= 0.99999:
        return 2.0 * math.atan2(-x, y)
    return math.atan2(2 * (x * y + w * z), w * w + x * x - y * y - z * z)


def matrix_of(q: Sequence[float] | np.ndarray) -> np.ndarray:
    """3x3 rotation matrix of a quaternion (need not be unit length)."""
    x, y, z, w = (float(v) for v in q)
    s = 2.0 / (x * x + y * y + z * z + w * w)
    xs, ys, zs = x * s, y * s, z * s
    wx, wy, wz = w * xs, w * ys, w * zs
    xx, xy, xz = x * xs, x * ys, x * zs
    yy, yz, zz = y * ys, y * zs, z * zs
    return np.array([[1.0 - (yy + zz), xy - wz, xz + wy],
                     [xy + wz, 1.0 - (xx + zz), yz - wx],
                     [xz - wy, yz + wx, 1.0 - (xx + yy)]])
