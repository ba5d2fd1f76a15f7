"""MujocoArm: the UR5e + 85 mm parallel gripper of PyBulletArm, simulated in MuJoCo.

Why a second engine: Bullet's multibody solver removes a penetration by velocity (ERP x depth /
dt), so a finger pressed a few millimetres into an object can throw it at metres per second.
MuJoCo's soft contacts remove penetration with a spring-damper, and elliptic friction cones with
a high impratio keep a squeezed object from sliding out of the grip. This world is selected by a
robot profile (`driver: mujoco_arm`, robots/ur5e_robotiq_mujoco.yaml); its results are reported
beside PyBullet's, never mixed with them, and PyBullet stays the default.

Same protocols and the same behaviour as PyBulletArm: Driver, Streaming (motions.py), GroundTruth,
GraspChecker, Receptacles, TaskSource, SimLabelling and FaultInjectable. Most of the driver is the
PyBullet arm's own code, inherited: the motions, routes, primitives and feasibility checks are written
against a handful of engine calls, which the mujoco_arm modules replace (model.py builds the world,
control.py the servos and the tick, checks.py the collision queries, ground_truth.py contacts and
launches, labelling.py the physics facts `watchdog record` labels with, camera.py rendering).
Scenes come from the same generator (episodes.py) with the same seeds, so both engines start from
the same objects at the same poses.

Simplifications, beyond the PyBullet arm's own (gripper.py, driver.py there):
- the arm's links have no collision geometry (only the gripper collides) and no visual meshes
  (the camera hides the robot anyway); their weight is compensated, as the UR controller does;
- friction between two objects, or an object and the table, is MuJoCo's (the larger of the two
  coefficients), not Bullet's product; only the finger pads use the product (objects.py);
- mesh objects collide as one convex hull each (MuJoCo's rule); the mug's opening is filled;
- the table's texture under `hard` lighting is not drawn (its colour and the light still vary), nor
  the meshes' own textures (a blue duck is blue here, green in PyBullet: `draws_mesh_textures`);
- resting objects sleep by MuJoCo's own rule (island sleeping), not the PyBullet arm's thresholds.
"""

from __future__ import annotations

import os

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

from bt_grasp.drivers.base import Observation  # noqa: E402
from bt_grasp.drivers.mujoco_arm.camera import MjCamera  # noqa: E402
from bt_grasp.drivers.mujoco_arm.checks import MjFeasibilityMixin  # noqa: E402
from bt_grasp.drivers.mujoco_arm.control import MjControlMixin  # noqa: E402
from bt_grasp.drivers.mujoco_arm.ground_truth import MjGroundTruthMixin  # noqa: E402
from bt_grasp.drivers.mujoco_arm.ik import MjIkSolver  # noqa: E402
from bt_grasp.drivers.mujoco_arm.labelling import MjLabellingMixin  # noqa: E402
from bt_grasp.drivers.mujoco_arm.primitives import MjPrimitivesMixin  # noqa: E402
from bt_grasp.drivers.mujoco_arm.world_setup import MjWorldMixin  # noqa: E402
from bt_grasp.drivers.pybullet_arm import driver as pybullet_driver  # noqa: E402
from bt_grasp.drivers.pybullet_arm.camera import Lighting  # noqa: E402
from bt_grasp.drivers.pybullet_arm.episodes import episode_seed  # noqa: E402
from bt_grasp.drivers.pybullet_arm.faults import FaultBook, InjectsFaults  # noqa: E402
from bt_grasp.drivers.pybullet_arm.motions import MotionsMixin  # noqa: E402
from bt_grasp.drivers.pybullet_arm.routes import RoutesMixin  # noqa: E402
from bt_grasp.profile import RobotProfile  # noqa: E402


class MujocoArm(pybullet_driver.ArmSettings, MjWorldMixin, MjControlMixin, RoutesMixin, MjFeasibilityMixin, MjPrimitivesMixin,
                MotionsMixin, MjGroundTruthMixin, MjLabellingMixin, InjectsFaults):
    """UR5e + parallel gripper in MuJoCo: primitives with telemetry, scenes, ground truth, faults."""

    # Meshes are drawn in their catalogue colour, untextured: a perceiver here takes the vocabulary
    # without the PyBullet textures' `looks`, or it reads a green duck as "the blue duck".
    draws_mesh_textures = False
    # Its EGL context is current on the thread that made it, and EGL refuses it on another: calls
    # stay on the caller's thread, so they run without a wall-clock limit (bt_grasp/call_limit.py).
    thread_bound = True

    def __init__(self, profile: RobotProfile, gui: bool = False, lighting: str = "easy",
                 image_size: int | None = None, high_clutter_share: float = 0.5) -> None:
        w, h = self._take_settings(profile, gui, lighting, image_size, high_clutter_share)  # gui: headless here
        cam = profile.camera
        self.camera = MjCamera(w, h, cam.fov_deg, cam.near, cam.far, cam.T())
        self.ik = MjIkSolver()
        self.faults = FaultBook()
        self.clock = 0.0
        self.spec = None
        self.bodies = {}
        self._stop = False
        self._world_builds = 0
        self._last_frame = None
        self._init_motions(profile.control_period_s)
        self._build_world([], [])

    def reset(self, episode: int = 0, seed: int = 0, target: str | None = None) -> Observation:
        """Build episode `episode` of base seed `seed`: the PyBullet arm's scene for that seed
        (generated through pybullet_arm.driver, so the benchmark's scene cache applies)."""
        ep_seed = episode_seed(seed, episode)
        rng = np.random.default_rng(ep_seed + 99991)
        self.camera.lighting = Lighting.sample(self.lighting_mode, rng)
        self.spec = pybullet_driver.generate_episode(ep_seed, target=target,
                                                     high_clutter_share=self.high_clutter_share,
                                                     camera=self.camera.resized(256))
        self._build_world(list(self.spec.objects), list(self.spec.poses))
        self._settle_scene()
        self.clock = 0.0
        self._stop = False
        return self.observe()

    def stop(self) -> None:
        """Ask the running primitive to stop at its next step or poll (fault "stopped"); hold position."""
        self._stop = True
        self._hold_arm(self._q())

    def close(self) -> None:
        """Release the renderer and the scene generator's PyBullet client."""
        self.camera.release()
        from bt_grasp.drivers.pybullet_arm.episodes import close_generator

        close_generator()

