"""The simulated Stretch's numbers, shared by the world and the stretch_body-shaped parts:
stretch_body's RE2V0 gripper parameters, joint ranges and default speeds, and the finger model
fitted to the URDF (what a stretch_body pct means as a finger angle)."""

from __future__ import annotations

import math

# Gripper conversions, RE2V0 stretch_gripper params in stretch_body (robot_params_RE2V0.py).
GRIPPER_CONVERSION = {"finger_length_m": 0.171, "open_aperture_m": 0.09, "closed_aperture_m": 0.0,
                      "open_robotis": 70.0, "closed_robotis": 0.0}
APERTURE_PER_PCT = 0.09 / 70.0
ZERO_T, RANGE_T = 5212, (0, 8022)
RAD_PER_PCT = ((ZERO_T - RANGE_T[0]) / 100.0) * 2 * math.pi / 4096.0  # servo world rad per pct
PCT_MAX_OPEN = RANGE_T[1] / ((ZERO_T - RANGE_T[0]) / 100.0) - 100.0  # ~53.9, as stretch_body computes
STALL_MIN_VEL, STALL_MAX_EFFORT, STALL_MAX_TIME = 0.1, 20.0, 0.5
GRIPPER_VEL_RAD_S = 4.0  # 'default' motion vel of the gripper servo (world rad/s)

# Fingertip surface gap in the URDF as a function of the finger joint angle q (both fingers):
# gap ~= FINGER_GAP_SLOPE * q - FINGER_GAP0 (measured on the collision meshes, 0 <= q <= 0.45).
FINGER_GAP_SLOPE, FINGER_GAP0 = 0.32, 0.003
FINGER_TAU_MAX = 1.5  # N m per finger at 100 % effort (~9 N at the fingertip)
FINGER_FRICTION = 1.5  # rubber fingertip pads
KP_PCT = 2.5  # % effort per pct of position error (saturates at 40 pct of error)

LIFT_RANGE, ARM_RANGE = (0.0, 1.10), (0.0, 0.52)
LIFT_VEL, ARM_VEL = 0.11, 0.14  # stretch_body 'default' vel_m
LIFT_ACC, ARM_ACC = 0.2, 0.14  # stretch_body 'default' accel_m
YAW_RANGE = (-1.75, 4.0)
HEAD_VEL = 2.0
BASE_VEL, BASE_ROT_VEL = 0.12, 0.5


def pct_to_finger_q(pct: float) -> float:
    """Finger joint angle whose fingertip gap equals stretch_body's aperture for this pct."""
    return (pct * APERTURE_PER_PCT + FINGER_GAP0) / FINGER_GAP_SLOPE


def finger_q_to_pct(q: float) -> float:
    return (q * FINGER_GAP_SLOPE - FINGER_GAP0) / APERTURE_PER_PCT
