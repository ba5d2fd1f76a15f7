"""Numbers the arm's motions and checks share: speeds, tolerances, heights, motor forces."""

from __future__ import annotations

import math

import numpy as np
import pybullet as pb

DOWN = np.array(pb.getQuaternionFromEuler([math.pi, 0.0, 0.0]))  # approach -z, closing along +x
ARM_FORCES = np.array([600.0, 600.0, 400.0, 150.0, 150.0, 150.0])
REACH_TOL_M = 0.004
PREGRASP_M = 0.12
SAFE_Z = 0.30
TABLE_CLEARANCE_M = 0.003   # fingertips may come this close to the table top
PALM_TOL_M = 0.005          # penetration of the palm into an object tolerated at a waypoint
FINGER_TOL_M = 0.015        # fingers may brush/push neighbours this deep (they move them aside)
DESCENT_CHECK_M = 0.01      # the grasp descent is checked for collisions this often along its length
NEVER_FINISH_CAP_S = 30.0
# Tcp speeds (m/s). Moves in free space with nothing held run at FREE_TRANSIT (a UR5e moves its
# tool at up to 1 m/s); moves that carry an object, descend to it or push it stay slow, because
# there the speed changes what the contact does. Every move costs ~0.3 ms of physics per 1/240 s
# step, so free transit at 0.8 rather than 0.4 m/s is ~15 % of an episode's wall time.
FREE_TRANSIT_MPS = 0.8
CARRY_TRANSIT_MPS = 0.4
# Leaving a spot upwards (a grasp or push starting where the last grasp ended, often after
# open_gripper among the objects): the fingers may still touch or sit in neighbours, and a finger
# dragged up at 0.8 m/s (3.3 mm per step) throws them. The first DEPART_M go at contact.py's
# depart_mps; DEPART_M is a finger's length plus a margin, after which the fingertips are above
# whatever they were among. DEPART_MPS is the descent's own speed (grasp: 0.15 m/s).
DEPART_M = 0.06
DEPART_MPS = 0.15
# A joint whose nearest equivalent lies past its limit (ik.py wrapped_near) goes the far way round,
# a turn of up to 2 pi between two IK points: the last wrist joint, turned by the carry to keep the
# grasp's yaw as the base swings, reaches +-2 pi late in an episode. Such a turn is taken at a
# UR5e wrist's speed limit (180 deg/s), not at Bullet's joint cap (100 rad/s, a full turn in
# 0.06 s, which flung a held duck at 13 m/s).
UNWIND_RPS = math.pi
# Guarded moves (place's lowering into the basket, contact.py release_z_m): the arm stops once the
# wrist load has fallen GUARD_N below its rest value for GUARD_STEPS steps in a row. Meeting
# something at GUARDED_MPS drops it by ~100 N within a step; GUARD_N and the steps keep the dip of
# the move's own start (the gripper accelerating downwards weighs ~3 N less for a step or two)
# from stopping it. The rest value is the median of GUARD_REST_STEPS steps held still before the
# move (the end of the previous move rings for ~10 steps).
GUARD_N = 5.0
GUARD_STEPS = 3
GUARD_REST_STEPS = 24
# The guard is not read over the move's first GUARD_START_STEPS (1 cm at GUARDED_MPS): starting
# at full speed, the servos jerk the gripper, and what it holds swings in the grip; the wrist
# reads up to 12 N under its rest value for several steps there (MuJoCo, a held object).
GUARD_START_STEPS = 24
GUARD_BACKOFF_M = 0.003
GUARDED_MPS = 0.1
# A wrist load this far above the empty gripper's weight after place has opened the gripper means
# something is still at the fingers (wedged between them): 10 g; at rest the sensor reads the
# empty gripper to within 0.02 N, and the lightest catalogue object weighs 0.15 N.
WEDGED_N = 0.1
REST_EVERY = 24   # steps between at-rest checks (0.1 s)
REST_CHECKS = 3   # consecutive at-rest checks before an object is put to sleep (0.3 s)
BASKET_HALF_FRAC = 0.5  # the scaled traybox is 0.3 m square
