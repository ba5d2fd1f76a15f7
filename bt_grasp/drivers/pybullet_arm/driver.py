"""PyBulletArm: a UR5e with an 85 mm parallel gripper over a cluttered table, headless by default.

Implements the Driver protocol of bt_grasp.drivers.base and the GroundTruth, SimLabelling,
FaultInjectable and Streaming capabilities of bt_grasp.drivers.capabilities (primitives run across
ticks, one control period per poll: motions.py). The class is assembled from one module per job: world_setup.py
(building, scenes, camera), control.py (joint/finger commands, the per-step runtime), routes.py
(guarded moves, departs, transits), checks.py (feasibility), primitives.py, motions.py,
ground_truth.py (for scoring only) and labelling.py (for labelling recorded telemetry only).
Motions are Cartesian straight lines sampled every centimetre, solved by iterated IK on a private
kinematic copy (ik.py) and tracked with joint position control at 240 Hz. Simplifications: the
gripper is prismatic (gripper.py explains why), the arm's joint motors are stronger than a real
UR5e's so tracking lag stays small, and transit moves are straight lines without a planner (the
approach is collision-checked instead; the robot starts from a home pose above the workspace).

Telemetry `load` (wrist load, N) comes from a force-torque sensor on the tool0 -> gripper_palm joint
(`pybullet.enableJointForceTorqueSensor` + `getJointState(...)[2]`, see wrist.py); on a UR5e it is
the tool-flange F/T reading (RTDE `actual_TCP_force`).
"""

from __future__ import annotations

import numpy as np
import pybullet as pb

from bt_grasp.drivers.base import Observation
from bt_grasp.drivers.pybullet_arm import scene
from bt_grasp.drivers.pybullet_arm.camera import Camera, Lighting
from bt_grasp.drivers.pybullet_arm.checks import FeasibilityMixin
from bt_grasp.drivers.pybullet_arm.contact import CONTACT
from bt_grasp.drivers.pybullet_arm.episodes import (
    close_generator,
    episode_seed,
    generate_episode,
)
from bt_grasp.drivers.pybullet_arm.faults import FaultBook, InjectsFaults
from bt_grasp.drivers.pybullet_arm.ground_truth import GroundTruthMixin
from bt_grasp.drivers.pybullet_arm.ik import IkSolver
from bt_grasp.drivers.pybullet_arm.labelling import LabellingMixin
from bt_grasp.drivers.pybullet_arm.motions import MotionsMixin
from bt_grasp.drivers.pybullet_arm.params import DOWN  # noqa: F401  (re-exported: callers import it from here)
from bt_grasp.drivers.pybullet_arm.primitives import PrimitivesMixin
from bt_grasp.drivers.pybullet_arm.routes import RoutesMixin
from bt_grasp.drivers.pybullet_arm.speed import OPTIONS
from bt_grasp.drivers.pybullet_arm.world_setup import WorldMixin
from bt_grasp.profile import RobotProfile


class ArmSettings:
    """What an arm world takes from the robot profile and its caller before it builds anything:
    one lighting check and one reading of the profile for every engine (PyBullet, MuJoCo)."""

    name: str
    profile: RobotProfile
    lighting_mode: str
    high_clutter_share: float
    telemetry_period: float
    max_force: float
    gui: bool

    def _take_settings(self, profile: RobotProfile, gui: bool, lighting: str, image_size: int | None,
                       high_clutter_share: float) -> tuple[int, int]:
        """Store the settings; returns the camera's image size (width, height)."""
        if lighting not in ("easy", "hard"):
            raise ValueError(f"lighting must be 'easy' or 'hard', not {lighting!r}")
        self.name = profile.name
        self.profile = profile
        self.lighting_mode = lighting
        self.high_clutter_share = high_clutter_share
        self.telemetry_period = 1.0 / float(profile.driver_options.get("telemetry_hz", 80))
        self.max_force = float(profile.gripper.max_force_n)
        self.gui = gui
        return image_size or profile.camera.width, image_size or profile.camera.height


class PyBulletArm(ArmSettings, WorldMixin, RoutesMixin, FeasibilityMixin, PrimitivesMixin, MotionsMixin,
                  GroundTruthMixin, LabellingMixin, InjectsFaults):
    """UR5e + Robotiq-class gripper in PyBullet: primitives with telemetry, scenes, ground truth, faults."""

    # pybullet_data's meshes keep their own textures, which tint the catalogue colour (a blue duck
    # looks green): the catalogue vocabulary's `looks` (bench/vocabulary.py) describe that.
    draws_mesh_textures = True

    def __init__(self, profile: RobotProfile, gui: bool = False, lighting: str = "easy",
                 image_size: int | None = None, high_clutter_share: float = 0.5) -> None:
        w, h = self._take_settings(profile, gui, lighting, image_size, high_clutter_share)
        cam = profile.camera
        self.camera = Camera(w, h, cam.fov_deg, cam.near, cam.far, cam.T())
        self.client = pb.connect(pb.GUI if gui else pb.DIRECT)
        self.ik = IkSolver()
        self.faults = FaultBook()
        self.clock = 0.0
        self.spec = None
        self.bodies = {}   # body id -> ObjectSpec
        self._stop = False
        self._world_builds = 0
        self._last_frame = None
        self._init_motions(profile.control_period_s)
        self._build_world()
        self.clock = 0.0

    def reset(self, episode: int = 0, seed: int = 0, target: str | None = None) -> Observation:
        """Build episode `episode` of base seed `seed` (episode seed = seed + 1000 × episode).

        It lives in this module because bench/runner.py memoises scenes by replacing this
        module's `generate_episode`."""
        ep_seed = episode_seed(seed, episode)
        rng = np.random.default_rng(ep_seed + 99991)
        self.camera.lighting = Lighting.sample(self.lighting_mode, rng)
        self.spec = generate_episode(ep_seed, target=target, high_clutter_share=self.high_clutter_share,
                                     camera=self.camera.resized(256))
        self._build_world()
        for spec, (pos, orn) in zip(self.spec.objects, self.spec.poses, strict=True):
            body = scene.spawn(self.client, spec, pos, orn, maximal=CONTACT.rigid_objects)
            # The generator recorded getBasePositionAndOrientation, the centre-of-mass frame;
            # loadURDF puts the link frame at `pos`, which for a mesh whose inertial origin is
            # offset (a duck 1.5 cm, a teddy bear 7 cm) would start it shifted into its
            # neighbours. resetBasePositionAndOrientation sets the centre-of-mass frame.
            pb.resetBasePositionAndOrientation(body, pos, orn, physicsClientId=self.client)
            self.bodies[body] = spec
        for _ in range(48):  # let re-created contacts settle (deterministic, no telemetry)
            pb.stepSimulation(physicsClientId=self.client)
        if OPTIONS.sleep_resting:  # the generator settled them: at rest now means asleep now
            self._sleep_resting(needed=1)
        self.clock = 0.0
        self._stop = False
        return self.observe()

    def stop(self) -> None:
        """Ask the running primitive to stop at its next step or poll (fault "stopped"); hold position."""
        self._stop = True
        try:
            self._hold_arm(self._q())
        except pb.error:
            pass

    def close(self) -> None:
        """The one cleanup path: physics clients (this world, IK, scene generation). Files the arm
        writes live in the per-user cache (cache.py), so there are no temp folders to remove."""
        for c in (self.client,):
            try:
                pb.disconnect(c)
            except pb.error:
                pass
        self.ik.close()
        close_generator()


