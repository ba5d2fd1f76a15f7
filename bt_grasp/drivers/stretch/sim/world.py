"""The PyBullet world behind the simulated Stretch: robot, tabletop scene, servo models, faults.

What is simulated, and how (say it so nobody mistakes it for the real robot):
- The robot is the `hello-robot-stretch-urdf` RE2V0 `*_tool_stretch_gripper.urdf` (movable
  fingers) with a fixed base; base translation/rotation is applied kinematically (the body is
  moved, no wheel dynamics).
- Lift, telescoping arm (four equal prismatic segments), wrist yaw and head pan/tilt are
  PyBullet position motors with stretch_body's default speeds. Their "motion generator" is a
  trapezoid-free time profile: a move is "in motion" for |delta| / v seconds after it started, as
  the Dynamixel moving bit / stepper `is_mg_moving` report it. A stepper that stops moving short of
  its goal for 0.3 s latches a guarded (contact) event like the real firmware.
- The gripper servo is modelled, not copied: its effort (pct load, -100..100, negative closing)
  is proportional to the position error in pct (`KP_PCT` % per pct), saturating at 100 %, and is
  what the fingers push with (a PyBullet motor whose force limit is that effort). So a grasp at a
  small closing command squeezes gently, a large command saturates, and backing the command off
  lowers the effort — the reason stretch_body's sentry backs off stalled grippers.
- The closed stop (fingertips touching, pct ~ 0) is a joint limit of the fingers. Finger compliance
  of the real gripper is not modelled.
- Time is simulated time: nothing moves unless `advance()` steps the physics; `SimClock.sleep`
  does that, so the driver's polling loops run in sim time.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp.bench.objects import ObjectSpec
from bt_grasp.drivers.base import Fault
from bt_grasp.errors import BackendUnavailable

PHYSICS_DT = 1.0 / 240.0
STATUS_EVERY = 4  # physics steps between status refreshes (60 Hz, above the real 15-25 Hz threads)

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

TABLE_HEIGHT = 0.55
TABLE_CENTRE = (0.0, -0.70)
TABLE_SIZE = (0.90, 0.50)
BASKET_CENTRE = (0.30, -0.66)
BASKET_INNER = 0.16
BASKET_WALL = 0.05
SPAWN_X, SPAWN_Y = (-0.22, 0.12), (-0.58, -0.80)


def stretch_urdf_path() -> Path:
    """The RE2V0 gripper URDF shipped by hello-robot-stretch-urdf (its fingers are movable)."""
    try:
        import stretch_urdf  # type: ignore[import-not-found]
    except ImportError as exc:
        raise BackendUnavailable("simulated Stretch needs hello-robot-stretch-urdf: "
                                 "pip install 'bt_grasp[stretch-sim]'") from exc
    root = Path(stretch_urdf.__file__).resolve().parent / "RE2V0"
    found = sorted(root.glob("*_tool_stretch_gripper.urdf"))
    if not found:
        raise BackendUnavailable(f"no RE2V0 *_tool_stretch_gripper.urdf under {root}")
    return found[0]


def pct_to_finger_q(pct: float) -> float:
    """Finger joint angle whose fingertip gap equals stretch_body's aperture for this pct."""
    return (pct * APERTURE_PER_PCT + FINGER_GAP0) / FINGER_GAP_SLOPE


def finger_q_to_pct(q: float) -> float:
    return (q * FINGER_GAP_SLOPE - FINGER_GAP0) / APERTURE_PER_PCT


def fallback_objects() -> list[ObjectSpec]:
    """Objects used when the shared catalogue is not importable (sized for a 69 mm aperture)."""
    return [
        ObjectSpec("red box", "box", "red", "small", "box", (0.04, 0.03, 0.05), (0.85, 0.1, 0.1, 1), 0.06),
        ObjectSpec("blue cylinder", "cylinder", "blue", "small", "cylinder", (0.02, 0.07),
                   (0.1, 0.25, 0.85, 1), 0.05),
        ObjectSpec("green box", "box", "green", "medium", "box", (0.05, 0.035, 0.06), (0.1, 0.65, 0.2, 1), 0.08),
        ObjectSpec("yellow cylinder", "cylinder", "yellow", "medium", "cylinder", (0.022, 0.09),
                   (0.95, 0.85, 0.1, 1), 0.07),
    ]


def object_pool(max_width: float = 0.05) -> list[ObjectSpec]:
    """Primitive-shaped catalogue objects narrow enough for the Stretch gripper, else the fallback.

    The catalogue is imported lazily (it is written concurrently and may be absent); meshes are
    skipped because their pybullet_data files are scaled for the arm scene.
    """
    try:
        from bt_grasp.bench import catalogue as cat

        pool = [s for s in cat.catalogue() if s.shape in ("box", "cylinder")
                and cat.graspable_width(s) <= max_width and cat.extents(s)[2] <= 0.10]
        if len(pool) >= 3:
            return pool
    except Exception:  # noqa: BLE001 - any catalogue problem means "use the fallback"
        pass
    return fallback_objects()


@dataclass
class SimObject:
    body: int
    spec: ObjectSpec
    rest_z: float


@dataclass
class ActiveFaults:
    """Physical faults the world applies until the driver ends the primitive."""

    remove_on_close: bool = False
    block_fingers_q: float | None = None
    block_lift_at: float | None = None
    block_lift_after: float | None = None
    never_finish: bool = False
    target: int | None = None
    restore: list[tuple[int, dict[str, float]]] = field(default_factory=list)


class StretchWorld:
    """PyBullet client with the Stretch, a table, a basket and objects; owns simulated time."""

    def __init__(self, gui: bool = False, seed: int = 0, n_objects: int = 3,
                 objects: list[ObjectSpec] | None = None) -> None:
        import pybullet as pb
        import pybullet_data

        self.pb = pb
        self.cid = pb.connect(pb.GUI if gui else pb.DIRECT)
        pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=self.cid)
        pb.setGravity(0, 0, -9.81, physicsClientId=self.cid)
        pb.setTimeStep(PHYSICS_DT, physicsClientId=self.cid)
        pb.setPhysicsEngineParameter(numSolverIterations=50, deterministicOverlappingPairs=1,
                                     physicsClientId=self.cid)
        self.t = 0.0
        self._nstep = 0
        with _quiet_stdout():  # Bullet prints a warning per link without inertia (camera frames)
            self.robot = pb.loadURDF(str(stretch_urdf_path()), [0, 0, 0], useFixedBase=True,
                                     flags=pb.URDF_ENABLE_CACHED_GRAPHICS_SHAPES, physicsClientId=self.cid)
        dyn = pb.getDynamicsInfo(self.robot, -1, physicsClientId=self.cid)
        self._base_inertial = (dyn[3], dyn[4])
        self.joint: dict[str, int] = {}
        self.link: dict[str, int] = {}
        for j in range(pb.getNumJoints(self.robot, physicsClientId=self.cid)):
            info = pb.getJointInfo(self.robot, j, physicsClientId=self.cid)
            self.joint[info[1].decode()] = j
            self.link[info[12].decode()] = j
        self.arm_joints = [self.joint[f"joint_arm_l{i}"] for i in range(4)]
        self.fingers = [self.joint["joint_gripper_finger_left"], self.joint["joint_gripper_finger_right"]]
        self.finger_links = set(self.fingers) | {self.link["link_gripper_fingertip_left"],
                                                 self.link["link_gripper_fingertip_right"]}
        self.left_links = {self.fingers[0], self.link["link_gripper_fingertip_left"]}
        self.right_links = {self.fingers[1], self.link["link_gripper_fingertip_right"]}
        for f in self.fingers + [self.link["link_gripper_fingertip_left"],
                                 self.link["link_gripper_fingertip_right"]]:
            pb.changeDynamics(self.robot, f, lateralFriction=FINGER_FRICTION, physicsClientId=self.cid)
        self.q_closed_stop = pct_to_finger_q(0.0)
        self._set_finger_limits(self.q_closed_stop)
        self.base_pose = np.zeros(3)  # x, y, theta in the odometry frame (= world at reset)
        self.base_goal: np.ndarray | None = None
        # commanded targets (joint space); the sim body layer writes these
        self.lift_target = 0.6
        self.arm_target = 0.0
        self.yaw_target = 0.0
        self.head_target = {"head_pan": -math.pi / 2, "head_tilt": -0.8}
        self.gripper_cmd_pct = 0.0
        self.gripper_sp_pct = 0.0
        self.gripper_effort_pct = 0.0
        self.faults = ActiveFaults()
        self.objects: dict[int, SimObject] = {}
        self.table = self._add_table()
        self.basket = self._add_basket()
        self.rng = np.random.default_rng(seed)
        self._pool = objects
        self.n_objects = n_objects
        self.task: str | None = None
        self._home_pose()
        self.spawn_objects(seed)

    # ------------------------------------------------------------------ scene
    def _box(self, half: tuple[float, float, float], pos: tuple[float, float, float],
             rgba: tuple[float, float, float, float], mass: float = 0.0) -> int:
        pb = self.pb
        col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=self.cid)
        vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=rgba, physicsClientId=self.cid)
        return pb.createMultiBody(mass, col, vis, pos, physicsClientId=self.cid)

    def _add_table(self) -> int:
        hx, hy = TABLE_SIZE[0] / 2, TABLE_SIZE[1] / 2
        body = self._box((hx, hy, 0.02), (TABLE_CENTRE[0], TABLE_CENTRE[1], TABLE_HEIGHT - 0.02),
                         (0.72, 0.62, 0.48, 1.0))
        self.pb.changeDynamics(body, -1, lateralFriction=0.8, physicsClientId=self.cid)
        self._box((0.5, 0.5, 0.005), (0, 0, -0.005), (0.5, 0.5, 0.5, 1.0))  # floor
        return body

    def _add_basket(self) -> int:
        """An open tray of five boxes as one multibody (walls BASKET_WALL high)."""
        pb = self.pb
        h, t, w = BASKET_INNER / 2, 0.005, BASKET_WALL
        parts = [((h + t, h + t, t), (0, 0, t)),
                 ((t, h + t, w / 2), (h + t, 0, w / 2)), ((t, h + t, w / 2), (-h - t, 0, w / 2)),
                 ((h + t, t, w / 2), (0, h + t, w / 2)), ((h + t, t, w / 2), (0, -h - t, w / 2))]
        cols = [pb.createCollisionShape(pb.GEOM_BOX, halfExtents=he, collisionFramePosition=p,
                                        physicsClientId=self.cid) for he, p in parts]
        vis = [pb.createVisualShape(pb.GEOM_BOX, halfExtents=he, visualFramePosition=p,
                                    rgbaColor=(0.35, 0.25, 0.15, 1), physicsClientId=self.cid) for he, p in parts]
        base_pos = (BASKET_CENTRE[0], BASKET_CENTRE[1], TABLE_HEIGHT)
        return pb.createMultiBody(0, cols[0], vis[0], base_pos,
                                  linkMasses=[0] * 4, linkCollisionShapeIndices=cols[1:],
                                  linkVisualShapeIndices=vis[1:], linkPositions=[(0, 0, 0)] * 4,
                                  linkOrientations=[(0, 0, 0, 1)] * 4, linkInertialFramePositions=[(0, 0, 0)] * 4,
                                  linkInertialFrameOrientations=[(0, 0, 0, 1)] * 4, linkParentIndices=[0] * 4,
                                  linkJointTypes=[pb.JOINT_FIXED] * 4, linkJointAxis=[(0, 0, 1)] * 4,
                                  physicsClientId=self.cid)

    def _spawn(self, spec: ObjectSpec, x: float, y: float) -> int:
        pb = self.pb
        if spec.shape == "box":
            half = [d / 2 for d in spec.dims[:3]]
            col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=self.cid)
            vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=spec.rgba, physicsClientId=self.cid)
            hz = spec.dims[2] / 2
        elif spec.shape == "cylinder":
            r, hgt = spec.dims[0], spec.dims[1]
            col = pb.createCollisionShape(pb.GEOM_CYLINDER, radius=r, height=hgt, physicsClientId=self.cid)
            vis = pb.createVisualShape(pb.GEOM_CYLINDER, radius=r, length=hgt, rgbaColor=spec.rgba,
                                       physicsClientId=self.cid)
            hz = hgt / 2
        else:
            r = spec.dims[0]
            col = pb.createCollisionShape(pb.GEOM_SPHERE, radius=r, physicsClientId=self.cid)
            vis = pb.createVisualShape(pb.GEOM_SPHERE, radius=r, rgbaColor=spec.rgba, physicsClientId=self.cid)
            hz = r
        z = TABLE_HEIGHT + hz + 0.001
        # long side along y: the fingers close along base x (wrist yaw 0), across the narrow side
        yaw = math.pi / 2 if spec.shape == "box" and spec.dims[0] > spec.dims[1] else 0.0
        orn = pb.getQuaternionFromEuler([0, 0, yaw])
        body = pb.createMultiBody(spec.mass, col, vis, [x, y, z], orn, physicsClientId=self.cid)
        pb.changeDynamics(body, -1, lateralFriction=spec.friction, spinningFriction=0.002,
                          rollingFriction=0.001 if spec.shape != "box" else 0.0, physicsClientId=self.cid)
        self.objects[body] = SimObject(body, spec, z)
        return body

    def spawn_objects(self, seed: int, target: str | None = None) -> None:
        """Replace the objects with n_objects drawn from the pool, spaced >= 9 cm apart; `target`
        (a pool object's name) is always among them when the pool has it."""
        for b in list(self.objects):
            self.pb.removeBody(b, physicsClientId=self.cid)
        self.objects.clear()
        rng = np.random.default_rng(seed)
        pool = self._pool or object_pool()
        idx = [int(i) for i in rng.choice(len(pool), size=min(self.n_objects, len(pool)), replace=False)]
        names = [s.name for s in pool]
        if target in names and names.index(target) not in idx:
            idx[0] = names.index(target)
        self.task = target if target in names else pool[idx[0]].name
        placed: list[tuple[float, float]] = []
        for i in idx:
            for _ in range(200):
                x, y = rng.uniform(*SPAWN_X), rng.uniform(SPAWN_Y[1], SPAWN_Y[0])
                if all(math.hypot(x - px, y - py) > 0.09 for px, py in placed):
                    break
            placed.append((x, y))
            self._spawn(pool[int(i)], x, y)
        self._settle()

    def _settle(self) -> None:
        for _ in range(120):
            self.pb.stepSimulation(physicsClientId=self.cid)
        for o in self.objects.values():
            o.rest_z = self.pb.getBasePositionAndOrientation(o.body, physicsClientId=self.cid)[0][2]

    def _home_pose(self) -> None:
        """Put the joints at their targets instantly (episode reset, not a motion)."""
        pb = self.pb
        pb.resetJointState(self.robot, self.joint["joint_lift"], self.lift_target, physicsClientId=self.cid)
        self._lift_sp = [self.lift_target, 0.0]
        self._arm_sp = [self.arm_target, 0.0]
        for j in self.arm_joints:
            pb.resetJointState(self.robot, j, self.arm_target / 4, physicsClientId=self.cid)
        pb.resetJointState(self.robot, self.joint["joint_wrist_yaw"], self.yaw_target, physicsClientId=self.cid)
        for name, q in self.head_target.items():
            pb.resetJointState(self.robot, self.joint[f"joint_{name}"], q, physicsClientId=self.cid)
        for f in self.fingers:
            pb.resetJointState(self.robot, f, pct_to_finger_q(self.gripper_cmd_pct), physicsClientId=self.cid)
        self.gripper_sp_pct = self.gripper_cmd_pct
        self.base_pose[:] = 0.0
        self.base_goal = None
        self._set_base_pose(0.0, 0.0, 0.0)
        self._apply_motors()

    def reset(self, seed: int = 0, target: str | None = None) -> None:
        """New episode: robot to its ready pose, gripper half open, new objects."""
        self.clear_faults()
        self.lift_target, self.arm_target, self.yaw_target = 0.85, 0.0, 0.0
        self.head_target = {"head_pan": -math.pi / 2, "head_tilt": -0.8}
        self.gripper_cmd_pct = 30.0
        self._home_pose()
        self.spawn_objects(seed, target)

    # ------------------------------------------------------------------ joints
    def _set_finger_limits(self, lower: float) -> None:
        for f in self.fingers:
            self.pb.changeDynamics(self.robot, f, jointLowerLimit=lower, jointUpperLimit=0.6,
                                   physicsClientId=self.cid)

    def q(self, joint: str) -> float:
        return float(self.pb.getJointState(self.robot, self.joint[joint], physicsClientId=self.cid)[0])

    def qd(self, joint: str) -> float:
        return float(self.pb.getJointState(self.robot, self.joint[joint], physicsClientId=self.cid)[1])

    def lift_pos(self) -> float:
        return self.q("joint_lift")

    def arm_pos(self) -> float:
        return sum(float(self.pb.getJointState(self.robot, j, physicsClientId=self.cid)[0]) for j in self.arm_joints)

    def arm_vel(self) -> float:
        return sum(float(self.pb.getJointState(self.robot, j, physicsClientId=self.cid)[1]) for j in self.arm_joints)

    def finger_state(self) -> tuple[float, float, float]:
        """(mean finger q, mean finger qdot, mean applied torque) of the two fingers."""
        st = [self.pb.getJointState(self.robot, f, physicsClientId=self.cid) for f in self.fingers]
        return (float(np.mean([s[0] for s in st])), float(np.mean([s[1] for s in st])),
                float(np.mean([s[3] for s in st])))

    def gripper_pct(self) -> float:
        return finger_q_to_pct(self.finger_state()[0])

    def _apply_motors(self) -> None:
        """(Re)send the joint targets; lift and arm follow their trapezoidal setpoints."""
        pb, c, r = self.pb, self.cid, self.robot
        if self.faults.never_finish:  # frozen: hold where they are
            self._lift_sp = [self.lift_pos(), 0.0]
            self._arm_sp = [self.arm_pos(), 0.0]
        self._send_steppers()
        pb.setJointMotorControl2(r, self.joint["joint_wrist_yaw"], pb.POSITION_CONTROL,
                                 targetPosition=self.yaw_target, maxVelocity=2.0, force=20.0, physicsClientId=c)
        for name, q in self.head_target.items():
            pb.setJointMotorControl2(r, self.joint[f"joint_{name}"], pb.POSITION_CONTROL, targetPosition=q,
                                     maxVelocity=HEAD_VEL, force=20.0, physicsClientId=c)
        self._servo_gripper()

    def _stepper_goals(self) -> tuple[float, float]:
        lift_goal = self.lift_target
        if self.faults.block_lift_at is not None:
            lift_goal = min(lift_goal, self.faults.block_lift_at)
        return lift_goal, self.arm_target

    def _step_steppers(self, dt: float) -> None:
        """Advance the lift/arm motion generators (trapezoids at stretch_body's default vel/accel:
        an instant velocity step would fling a held object out of the fingers)."""
        if self.faults.never_finish:
            return
        lift_goal, arm_goal = self._stepper_goals()
        _trapezoid(self._lift_sp, lift_goal, LIFT_VEL, LIFT_ACC, dt)
        _trapezoid(self._arm_sp, arm_goal, ARM_VEL, ARM_ACC, dt)
        self._send_steppers()

    def _send_steppers(self) -> None:
        pb, c, r = self.pb, self.cid, self.robot
        pb.setJointMotorControl2(r, self.joint["joint_lift"], pb.POSITION_CONTROL, targetPosition=self._lift_sp[0],
                                 maxVelocity=2 * LIFT_VEL, force=400.0, physicsClientId=c)
        for j in self.arm_joints:
            pb.setJointMotorControl2(r, j, pb.POSITION_CONTROL, targetPosition=self._arm_sp[0] / 4,
                                     maxVelocity=ARM_VEL / 2, force=100.0, physicsClientId=c)

    def _servo_gripper(self, dt: float = 0.0) -> None:
        """Dynamixel-like position servo. Its profile setpoint walks toward the command at the
        default velocity; the effort (the servo's current, pct load) is KP_PCT * (setpoint - pos)
        saturating at 100 %, and the fingers push with exactly that much torque. Free closing tracks
        the setpoint (small effort); against an object the setpoint runs on and the effort grows."""
        pct_now = self.gripper_pct()
        cmd = self.gripper_cmd_pct
        if self.faults.never_finish:
            self.gripper_sp_pct = pct_now  # the servo never gets anywhere
        else:
            step = GRIPPER_VEL_RAD_S / RAD_PER_PCT * dt
            d = cmd - self.gripper_sp_pct
            self.gripper_sp_pct += max(-step, min(step, d))
        err = self.gripper_sp_pct - pct_now
        self.gripper_effort_pct = max(-100.0, min(100.0, KP_PCT * err))
        force = max(0.02, abs(self.gripper_effort_pct) / 100.0 * FINGER_TAU_MAX)
        vmax = 2.0 * GRIPPER_VEL_RAD_S / RAD_PER_PCT * APERTURE_PER_PCT / FINGER_GAP_SLOPE
        for f in self.fingers:
            self.pb.setJointMotorControl2(self.robot, f, self.pb.POSITION_CONTROL,
                                          targetPosition=pct_to_finger_q(self.gripper_sp_pct), maxVelocity=vmax,
                                          force=force, physicsClientId=self.cid)

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

    # ------------------------------------------------------------------ time
    def advance(self, dt: float, on_status: Any = None) -> None:
        """Run the world for dt simulated seconds (physics skipped while a never_finish fault holds
        every joint still: nothing can change, so only the clock moves)."""
        n = max(1, int(round(dt / PHYSICS_DT)))
        if self.faults.never_finish:
            self.t += n * PHYSICS_DT
            if on_status:
                on_status()
            return
        for _ in range(n):
            self._servo_gripper(PHYSICS_DT)
            self._step_steppers(PHYSICS_DT)
            self._step_base(PHYSICS_DT)
            self.pb.stepSimulation(physicsClientId=self.cid)
            self.t += PHYSICS_DT
            self._nstep += 1
            if on_status and self._nstep % STATUS_EVERY == 0:
                on_status()
        if on_status:
            on_status()

    # ------------------------------------------------------------------ faults
    def apply_faults(self, faults: list[Fault], target_point: np.ndarray | None) -> None:
        """Arm the physical faults for the primitive about to run (target: object nearest the point)."""
        tgt = self.nearest_object(target_point) if target_point is not None else None
        self.faults.target = tgt
        for f in faults:
            p = f.params
            if f.kind == "remove_target_on_close":
                self.faults.remove_on_close = True
            elif f.kind in ("friction", "mass"):
                bodies = [self._body_by_name(p["object"])] if "object" in p else (
                    [tgt] if tgt is not None else list(self.objects))
                for b in bodies:
                    if b is None:
                        continue
                    info = self.pb.getDynamicsInfo(b, -1, physicsClientId=self.cid)
                    self.faults.restore.append((b, {"mass": info[0], "lateralFriction": info[1]}))
                    kw = {"lateralFriction": float(p.get("value", 0.05))} if f.kind == "friction" else {
                        "mass": float(p.get("value", 2.0))}
                    self.pb.changeDynamics(b, -1, physicsClientId=self.cid, **kw)
            elif f.kind == "block_fingers":
                at = float(p.get("at_norm", 0.5))
                self.faults.block_fingers_q = pct_to_finger_q(at * PCT_MAX_OPEN)
                self._set_finger_limits(self.faults.block_fingers_q)
            elif f.kind == "block_lift":
                self.faults.block_lift_after = float(p.get("after_m", 0.0))  # armed for the next rise
            elif f.kind == "never_finish":
                self.faults.never_finish = True
        self._apply_motors()

    def on_gripper_command(self, pct: float) -> None:
        """Called by the simulated gripper: a closing command triggers remove_target_on_close."""
        if self.faults.remove_on_close and pct < self.gripper_pct():
            self.faults.remove_on_close = False
            body = self.faults.target
            if body is None:
                body = self.nearest_object(self.grasp_center())
            if body is not None and body in self.objects:
                self.pb.resetBasePositionAndOrientation(body, [5.0 + body, 5.0, 0.05], [0, 0, 0, 1],
                                                        physicsClientId=self.cid)

    def end_faults(self) -> None:
        """Primitive over: physical obstructions go away (removed objects stay removed; mass and
        friction changes persist for the episode, like a real object's properties)."""
        self.faults.block_fingers_q = None
        self.faults.block_lift_at = None
        self.faults.block_lift_after = None
        self.faults.never_finish = False
        self.faults.remove_on_close = False
        self._set_finger_limits(self.q_closed_stop)
        self._apply_motors()

    def clear_faults(self) -> None:
        for b, kw in reversed(self.faults.restore):  # undo in reverse: later saves hold earlier changes
            if b in self.objects:
                self.pb.changeDynamics(b, -1, physicsClientId=self.cid, **kw)
        self.faults = ActiveFaults()
        self._set_finger_limits(self.q_closed_stop)

    # ------------------------------------------------------------------ ground truth
    def grasp_center(self) -> np.ndarray:
        return np.array(self.pb.getLinkState(self.robot, self.link["link_grasp_center"],
                                             physicsClientId=self.cid)[4])

    def _body_by_name(self, name: str) -> int | None:
        return next((b for b, o in self.objects.items() if o.spec.name == name), None)

    def object_position(self, body: int) -> np.ndarray:
        return np.array(self.pb.getBasePositionAndOrientation(body, physicsClientId=self.cid)[0])

    def nearest_object(self, point: np.ndarray | None, within: float = 0.12) -> int | None:
        if point is None or not self.objects:
            return None
        best = min(self.objects, key=lambda b: float(np.linalg.norm(self.object_position(b) - point)))
        return best if np.linalg.norm(self.object_position(best) - point) <= within else None

    def held_object(self) -> str | None:
        """The object touched by both fingers and off its resting height (or its support)."""
        for b, o in self.objects.items():
            cps = self.pb.getContactPoints(self.robot, b, physicsClientId=self.cid)
            links = {c[3] for c in cps}
            lifted = self.object_position(b)[2] > o.rest_z + 0.005
            if links & self.left_links and links & self.right_links and lifted:
                return o.spec.name
        return None

    def object_names(self) -> dict[int, str]:
        return {b: o.spec.name for b, o in self.objects.items()}

    def object_in_basket(self, name: str) -> bool:
        b = self._body_by_name(name)
        if b is None:
            return False
        x, y, z = self.object_position(b)
        h = BASKET_INNER / 2
        return (abs(x - BASKET_CENTRE[0]) <= h and abs(y - BASKET_CENTRE[1]) <= h
                and TABLE_HEIGHT <= z <= TABLE_HEIGHT + 0.15)

    def close(self) -> None:
        try:
            self.pb.disconnect(physicsClientId=self.cid)
        except Exception:  # noqa: BLE001 - already disconnected
            pass


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Silence C-level stdout (Bullet's importer warnings) so CLI output stays parseable."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # captured / replaced stdout: nothing to do
        yield
        return
    sys.stdout.flush()
    saved, devnull = os.dup(fd), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    try:
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)
        os.close(devnull)


def _trapezoid(sp: list[float], goal: float, vmax: float, amax: float, dt: float) -> None:
    """One step of a trapezoidal motion generator; sp = [position, velocity], updated in place."""
    x, v = sp
    d = goal - x
    if abs(d) < 1e-6 and abs(v) < amax * dt:
        sp[0], sp[1] = goal, 0.0
        return
    stop_dist = v * v / (2 * amax)
    if d * v > 0 and abs(d) <= stop_dist:
        v_des = 0.0  # brake
    else:
        v_des = math.copysign(vmax, d)
    v += max(-amax * dt, min(amax * dt, v_des - v))
    x_new = x + v * dt
    if (goal - x_new) * d < 0 and abs(v) <= amax * dt * 2:  # would pass the goal at crawl speed
        x_new, v = goal, 0.0
    sp[0], sp[1] = x_new, v


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


class SimClock:
    """The driver's clock when it runs the simulated Stretch: sleeping advances the physics."""

    simulated = True  # a primitive's poll advances it by one control period

    def __init__(self, world: StretchWorld, on_status: Any = None) -> None:
        self.world = world
        self.on_status = on_status

    def now(self) -> float:
        return self.world.t

    def sleep(self, dt: float) -> None:
        self.world.advance(dt, self.on_status)
