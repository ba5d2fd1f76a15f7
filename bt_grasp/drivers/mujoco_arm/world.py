"""Building the MuJoCo world for an episode or a hand-made scene, and looking at it.

A world is compiled per scene (model.build, ~20 ms): MuJoCo's models are fixed once compiled, and
each episode has its own objects. The camera's renderer is rebound to each new model.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from bt_grasp.drivers.base import Observation
from bt_grasp.drivers.mujoco_arm import model as mjmodel
from bt_grasp.drivers.mujoco_arm.control import WristLoad
from bt_grasp.drivers.mujoco_arm.ground_truth import MjLaunchWatch
from bt_grasp.drivers.pybullet_arm.episodes import EpisodeSpec
from bt_grasp.drivers.pybullet_arm.gripper import STROKE_M
from bt_grasp.drivers.pybullet_arm.ik import HOME_Q

SETTLE_TICKS = 48  # after spawning, as the PyBullet arm: contacts re-created at the generated poses settle


class MjWorldMixin:
    """The simulated world of MujocoArm: building it and looking at it."""

    # Provided by the host class MujocoArm (driver.py) and its other mixins.
    _cancel_active: Any
    _command_fingers: Any
    _hold_arm: Any
    camera: Any
    clock: float
    max_force: float
    spec: EpisodeSpec | None
    bodies: dict[int, Any]
    _last_frame: tuple[tuple[Any, ...], Observation] | None
    _world_builds: int
    q_cmd: np.ndarray
    gap_cmd: float
    gap_ref: float

    def _build_world(self, objects: list[Any], poses: list[Any]) -> None:
        """Compile a world holding `objects` at `poses`, the arm at home with the gripper open."""
        self._cancel_active()  # a motion still running belongs to the old world
        self._world_builds += 1
        self._last_frame = None
        cam = self.camera
        self.built = mjmodel.build(objects, poses, lighting=cam.lighting, camera=(cam.T_cam_base, cam.fov_deg))
        self.model = self.built.model
        self.data = mujoco.MjData(self.model)
        self.table_id, self.basket_id = self.built.table_id, self.built.basket_id
        self.bodies = dict(self.built.bodies)
        mjmodel.home_qpos(self.built, self.data)
        self.q_cmd = HOME_Q.copy()
        self.gap_cmd = self.gap_ref = STROKE_M
        self._fingers_frozen = False
        self._gap_floor = 0.0
        self.grip_force = 0.2 * self.max_force
        self._hold_arm(self.q_cmd)
        self._command_fingers(STROKE_M, self.grip_force)
        mujoco.mj_forward(self.model, self.data)
        self.wrist = WristLoad(self.model, self.data, self.built.wrist_site)
        self.launch_watch = MjLaunchWatch()
        self._steps = 0
        cam.attach(self.model)

    def _settle_scene(self, ticks: int) -> None:
        """Step without telemetry (a new scene's contacts settle; deterministic)."""
        mujoco.mj_step(self.model, self.data, nstep=ticks * mjmodel.PHYSICS_SUBSTEPS)

    def reset_scene(self, objects: list[Any], positions: list[Any], orientations: list[Any] | None = None,
                    target: str | None = None, settle_s: float = 0.5) -> Observation:
        """A hand-made scene (tests, demos): objects at given poses, settled briefly, no generator."""
        orientations = orientations or [(0, 0, 0, 1)] * len(objects)
        self._build_world(list(objects), [(tuple(p), tuple(o)) for p, o in zip(positions, orientations, strict=True)])
        self._settle_scene(int(round(settle_s / mjmodel.TICK_S)))
        poses = [(tuple(float(v) for v in self.data.xpos[b]), tuple(float(v) for v in self.data.xquat[b][[1, 2, 3, 0]]))
                 for b in self.bodies]
        self.spec = EpisodeSpec(seed=-1, objects=list(objects), target=target or "", poses=poses,  # type: ignore[arg-type]
                                visibility=float("nan"), high_clutter=False)
        self.clock = 0.0
        return self.observe()

    def _frame_key(self) -> tuple[Any, ...]:
        """What a rendered frame depends on besides the clock: the world, lighting and image size."""
        return (self._world_builds, self.clock, tuple(self.bodies), id(self.camera.lighting), self.camera.width)

    def observe(self) -> Observation:
        """RGB-D frame of the fixed camera with the robot hidden; annotations = the sim's annotator.

        A second call with no step in between returns the same Observation (frames are read-only)."""
        key = self._frame_key()
        if self._last_frame is not None and self._last_frame[0] == key:
            return self._last_frame[1]
        rgb, depth, inst = self.camera.render(self.data)
        objects = {b: {"name": s.name, "category": s.category, "colour": s.colour, "size": s.size}
                   for b, s in self.bodies.items()}
        obs = Observation(rgb=rgb, depth=depth, K=self.camera.K(), T_cam_base=self.camera.T_cam_base.copy(),
                          clock=self.clock,
                          annotations={"instance": inst, "objects": objects, "table_id": self.table_id,
                                       "basket_id": self.basket_id})
        self._last_frame = (key, obs)
        return obs
