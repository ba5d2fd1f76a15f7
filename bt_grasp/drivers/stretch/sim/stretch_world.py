"""The PyBullet world behind the simulated Stretch: robot, tabletop scene, servo models, faults.

StretchWorld is assembled from one module per job: params.py (the robot's numbers), scene.py
(table, basket, objects), actuators.py (joints, motors, servo models), kinematic_base.py,
faults.py (physical faults) and ground_truth.py; this module builds it and owns time.

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
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp.bench.objects import ObjectSpec
from bt_grasp.drivers.stretch.sim.actuators import ActuatorsMixin
from bt_grasp.drivers.stretch.sim.faults import ActiveFaults, FaultsMixin
from bt_grasp.drivers.stretch.sim.ground_truth import GroundTruthMixin
from bt_grasp.drivers.stretch.sim.kinematic_base import KinematicBaseMixin
from bt_grasp.drivers.stretch.sim.params import FINGER_FRICTION, pct_to_finger_q
from bt_grasp.drivers.stretch.sim.scene import SceneMixin, SimObject
from bt_grasp.errors import BackendUnavailable

PHYSICS_DT = 1.0 / 240.0
STATUS_EVERY = 4  # physics steps between status refreshes (60 Hz, above the real 15-25 Hz threads)


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


class StretchWorld(SceneMixin, ActuatorsMixin, KinematicBaseMixin, FaultsMixin, GroundTruthMixin):
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
        if not gui:
            self._hide_the_head()
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

    def _hide_the_head(self) -> None:
        """Make the head and the camera's own mount invisible to the headless renderer: the head
        camera cannot see them (the same pixels in every pose checked), yet drawing their meshes
        was about half of each frame's cost. Headless only, so a GUI still shows the head."""
        pb, c = self.pb, self.cid
        head = {self.link["link_head"]}
        parents = {j: pb.getJointInfo(self.robot, j, physicsClientId=c)[16] for j in self.link.values()}
        while grown := {j for j, parent in parents.items() if parent in head} - head:
            head |= grown
        for shape in pb.getVisualShapeData(self.robot, physicsClientId=c):
            if shape[1] in head:
                pb.changeVisualShape(self.robot, shape[1], rgbaColor=[0, 0, 0, 0], physicsClientId=c)

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
