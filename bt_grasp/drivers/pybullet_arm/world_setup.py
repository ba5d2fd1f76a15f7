"""Building the arm's world (table, basket, robot, collision ghost), hand-made scenes, resting
objects put to sleep, and the camera frame with the robot hidden."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pybullet as pb

from bt_grasp.drivers.base import Observation
from bt_grasp.drivers.pybullet_arm import scene
from bt_grasp.drivers.pybullet_arm.contact import CONTACT
from bt_grasp.drivers.pybullet_arm.episodes import EpisodeSpec
from bt_grasp.drivers.pybullet_arm.gripper import (
    FINGER_FRICTION,
    FINGER_TRAVEL_M,
    STROKE_M,
    arm_urdf_path,
    ghost_urdf_path,
)
from bt_grasp.drivers.pybullet_arm.ik import HOME_Q, joint_indices
from bt_grasp.drivers.pybullet_arm.launches import LaunchWatch
from bt_grasp.drivers.pybullet_arm.params import REST_CHECKS
from bt_grasp.drivers.pybullet_arm.speed import OPTIONS
from bt_grasp.drivers.pybullet_arm.wrist import WristLoadSensor


class WorldMixin:
    """The simulated world of PyBulletArm: building it and looking at it."""

    # Provided by the host class PyBulletArm (driver.py) and its other mixins.
    _cancel_active: Any
    _reset_commands: Any
    _world_builds: Any
    camera: Any
    client: Any
    gui: Any
    max_force: Any
    # Set here (_build_world, reset_scene, observe), declared for the type checker.
    spec: EpisodeSpec | None
    bodies: dict[int, Any]  # body id -> ObjectSpec
    _last_frame: tuple[tuple[Any, ...], Observation] | None

    def _build_world(self) -> None:
        self._cancel_active()  # a motion still running belongs to the old world
        c = self.client
        self._world_builds += 1  # part of every frame key: a rebuilt world is a new scene
        self._last_frame = None
        pb.resetSimulation(physicsClientId=c)
        scene.configure(c)
        rigid = CONTACT.rigid_objects
        if rigid:  # split impulse for every penetration between rigid bodies (contact.py)
            pb.setPhysicsEngineParameter(useSplitImpulse=1, splitImpulsePenetrationThreshold=0.0, physicsClientId=c)
        self.table_id = scene.add_table(c, self.camera.lighting.table_rgba, self.camera.lighting.table_texture,
                                        maximal=rigid)
        self.basket_id = scene.add_basket(c, maximal=rigid)
        # headless, the arm's visual meshes are never drawn (observe() hides the robot): skip them
        lean = OPTIONS.lean_robot and not self.gui
        self.robot = pb.loadURDF(str(arm_urdf_path(visual=not lean)), (0, 0, 0), useFixedBase=True,
                                 flags=pb.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        self.arm_j, self.finger_j, self.tcp_link = joint_indices(c, self.robot)
        self.wrist = WristLoadSensor(c, self.robot)  # telemetry `load`: see wrist.py
        pads: dict[str, float] = {}
        if CONTACT.pad_stiffness_n_m < math.inf:  # soft finger pads (contact.py)
            pads = {"contactStiffness": CONTACT.pad_stiffness_n_m, "contactDamping": CONTACT.pad_damping}
        for j in self.finger_j:
            pb.changeDynamics(self.robot, j, lateralFriction=FINGER_FRICTION, spinningFriction=0.01,
                              jointLowerLimit=0.0, jointUpperLimit=FINGER_TRAVEL_M, physicsClientId=c, **pads)
        self.ghost = pb.loadURDF(str(ghost_urdf_path()), (0, 0, -5), useFixedBase=True, physicsClientId=c)
        for link in range(-1, pb.getNumJoints(self.ghost, physicsClientId=c)):
            pb.setCollisionFilterGroupMask(self.ghost, link, 0, 0, physicsClientId=c)
            pb.changeVisualShape(self.ghost, link, rgbaColor=[0, 0, 0, 0], physicsClientId=c)
        self._ghost_palm = next(j for j in range(pb.getNumJoints(self.ghost, physicsClientId=c))
                                if pb.getJointInfo(self.ghost, j, physicsClientId=c)[12] == b"gripper_palm")
        self._robot_rgba = {d[1]: d[7] for d in pb.getVisualShapeData(self.robot, physicsClientId=c)}
        self._set_arm_now(HOME_Q)
        self._set_fingers_now(STROKE_M)
        self._reset_commands()
        self.bodies = {}
        self.launch_watch = LaunchWatch()
        self._rest_checks: dict[int, int] = {}  # body -> consecutive at-rest checks (_sleep_resting)

    def _set_arm_now(self, q: np.ndarray) -> None:
        for j, v in zip(self.arm_j, q, strict=True):
            pb.resetJointState(self.robot, j, float(v), physicsClientId=self.client)

    def _set_fingers_now(self, gap: float) -> None:
        for j in self.finger_j:
            pb.resetJointState(self.robot, j, gap / 2, physicsClientId=self.client)

    def _sleep_resting(self, needed: int = REST_CHECKS) -> None:
        """Put objects that have been at rest for `needed` checks in a row to sleep.

        Why: a step costs ~0.3-0.8 ms while the pile is awake and ~0.05-0.1 ms while it sleeps,
        and Bullet only lets a body sleep after 2 s below its own (looser) thresholds, so after
        every touch the whole pile was stepped for seconds although nothing moved. Resting uses
        the generator's thresholds (scene.REST_LIN / REST_ANG, checked every REST_EVERY steps);
        bodies touching the robot are left awake. The residual velocity (below those thresholds)
        is zeroed, otherwise the body wakes at once. A sleeping body wakes when anything moving
        touches its island, e.g. the gripper, so contact physics is unchanged."""
        c = self.client
        for b in self.bodies:
            lin, ang = pb.getBaseVelocity(b, physicsClientId=c)
            if np.linalg.norm(lin) > scene.REST_LIN or np.linalg.norm(ang) > scene.REST_ANG \
                    or pb.getContactPoints(self.robot, b, physicsClientId=c):
                self._rest_checks[b] = 0
                continue
            self._rest_checks[b] = self._rest_checks.get(b, 0) + 1
            if self._rest_checks[b] >= needed:
                pb.resetBaseVelocity(b, (0, 0, 0), (0, 0, 0), physicsClientId=c)
                pb.changeDynamics(b, -1, activationState=pb.ACTIVATION_STATE_SLEEP, physicsClientId=c)

    def reset_scene(self, objects: list[Any], positions: list[Any], orientations: list[Any] | None = None,
                    target: str | None = None, settle_s: float = 0.5) -> Observation:
        """A hand-made scene (tests, demos): objects at given poses, settled briefly, no generator."""
        self._build_world()
        orientations = orientations or [(0, 0, 0, 1)] * len(objects)
        for spec, pos, orn in zip(objects, positions, orientations, strict=True):
            self.bodies[scene.spawn(self.client, spec, pos, orn, maximal=CONTACT.rigid_objects)] = spec
        for _ in range(int(settle_s / scene.TIMESTEP)):
            pb.stepSimulation(physicsClientId=self.client)
        poses = [tuple(tuple(v) for v in pb.getBasePositionAndOrientation(b, physicsClientId=self.client))
                 for b in self.bodies]
        self.spec = EpisodeSpec(seed=-1, objects=list(objects), target=target or "", poses=poses,  # type: ignore[arg-type]
                                visibility=float("nan"), high_clutter=False)
        self.clock = 0.0
        return self.observe()

    # ------------------------------------------------------------------ camera
    def _robot_visible(self, visible: bool) -> None:
        for link, rgba in self._robot_rgba.items():
            colour = list(rgba) if visible else [rgba[0], rgba[1], rgba[2], 0.0]
            pb.changeVisualShape(self.robot, link, rgbaColor=colour, physicsClientId=self.client)

    def _frame_key(self) -> tuple:
        """What a rendered frame depends on that can change without the physics clock advancing:
        a rebuilt world, the lighting, the image size, and the (invisible) collision ghost."""
        ghost = pb.getBasePositionAndOrientation(self.ghost, physicsClientId=self.client)
        return (self._world_builds, self.clock, tuple(self.bodies), id(self.camera.lighting), self.camera.width, ghost)

    def observe(self) -> Observation:
        """RGB-D frame of the fixed camera with the robot hidden; annotations = the sim's annotator.

        Rendering is a pure function of the simulator state, so a second call with no physics
        step in between (e.g. locate right after survey) returns the same Observation object
        instead of rendering an identical image again; callers treat frames as read-only.
        """
        key = self._frame_key()
        if self._last_frame is not None and self._last_frame[0] == key:
            return self._last_frame[1]
        obs = self._render_frame()
        self._last_frame = (key, obs)
        return obs

    def _render_frame(self) -> Observation:
        self._robot_visible(False)
        try:
            rgb, depth, inst = self.camera.render(self.client)
        finally:
            self._robot_visible(True)
        objects = {b: {"name": s.name, "category": s.category, "colour": s.colour, "size": s.size}
                   for b, s in self.bodies.items()}
        return Observation(rgb=rgb, depth=depth, K=self.camera.K(), T_cam_base=self.camera.T_cam_base.copy(),
                           clock=self.clock,
                           annotations={"instance": inst, "objects": objects, "table_id": self.table_id,
                                        "basket_id": self.basket_id})
