"""The simulated Stretch driver: the unchanged StretchDriver on a SimStretchRobot, and its head camera.

It adds what only a simulator can: ground truth (GroundTruth protocol) and physical fault injection.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.base import Fault, Observation
from bt_grasp.drivers.stretch.driver import StretchDriver
from bt_grasp.drivers.stretch.sim.body import SimStretchRobot
from bt_grasp.drivers.stretch.sim.stretch_world import SimClock, StretchWorld
from bt_grasp.profile import RobotProfile


class SimHeadCamera:
    """Renders RGB-D + instance ids from the URDF's camera_color_optical_frame (the sim's pose,
    not the driver's kinematic chain, so tests can compare the two)."""

    def __init__(self, world: StretchWorld, width: int, height: int, fov_deg: float, near: float = 0.1,
                 far: float = 3.0) -> None:
        self.world = world
        self.width, self.height, self.fov, self.near, self.far = width, height, fov_deg, near, far

    def K(self) -> np.ndarray:
        f = 0.5 * self.height / np.tan(np.radians(self.fov) / 2)
        return np.array([[f, 0, self.width / 2], [0, f, self.height / 2], [0, 0, 1.0]])

    def pose_world(self) -> np.ndarray:
        pb, w = self.world.pb, self.world
        ls = pb.getLinkState(w.robot, w.link["camera_color_optical_frame"], computeForwardKinematics=True,
                             physicsClientId=w.cid)
        T = np.eye(4)
        T[:3, :3] = np.array(pb.getMatrixFromQuaternion(ls[5])).reshape(3, 3)
        T[:3, 3] = ls[4]
        return T

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        pb, w = self.world.pb, self.world
        T = self.pose_world()
        eye, fwd, up = T[:3, 3], T[:3, 2], -T[:3, 1]
        view = pb.computeViewMatrix(eye.tolist(), (eye + fwd).tolist(), up.tolist())
        proj = pb.computeProjectionMatrixFOV(self.fov, self.width / self.height, self.near, self.far)
        _, _, rgba, zbuf, seg = pb.getCameraImage(self.width, self.height, view, proj,
                                                  renderer=pb.ER_TINY_RENDERER, physicsClientId=w.cid)
        rgb = np.asarray(rgba, dtype=np.uint8).reshape(self.height, self.width, 4)[:, :, :3].copy()
        d = np.asarray(zbuf, dtype=np.float64).reshape(self.height, self.width)
        depth = (self.far * self.near / (self.far - (self.far - self.near) * d))
        depth[d >= 1.0 - 1e-7] = 0.0
        inst = np.asarray(seg, dtype=np.int64).reshape(self.height, self.width)
        inst = np.where(inst < 0, -1, inst & ((1 << 24) - 1)).astype(np.int32)
        objects = {b: {"name": o.spec.name, "category": o.spec.category, "colour": o.spec.colour,
                       "size": o.spec.size} for b, o in w.objects.items()}
        return rgb, depth.astype(np.float32), self.K(), {"instance": inst, "objects": objects}


class SimStretchDriver(StretchDriver):
    """StretchDriver on a SimStretchRobot, plus GroundTruth and physical faults."""

    name = "stretch_sim"

    def __init__(self, profile: RobotProfile, world: StretchWorld, robot: SimStretchRobot,
                 camera: SimHeadCamera, dry_run: bool = False) -> None:
        super().__init__(profile, robot_factory=lambda: robot, camera=camera, dry_run=dry_run,
                         clock=SimClock(world, robot.pull_status))
        self.world = world

    def reset(self, episode: int = 0, seed: int = 0, target: str | None = None) -> Observation:
        """New scene (objects drawn with seed and episode, including `target` when the catalogue
        has it and it fits the gripper), then the inherited ready-pose motion."""
        self.world.reset(seed=seed + 1000 * episode, target=target)  # the arm's episode seed rule
        if self.robot is not None:
            self.robot.pull_status()
        return super().reset(episode, seed, target)

    def task(self) -> str | None:
        """The episode's goal object: the requested target, else the first object spawned."""
        return self.world.task

    # FaultInjectable: physical kinds are staged in the world for the primitive's duration
    def _simulated(self) -> bool:
        return True

    def _apply_physical_faults(self, faults: list[Fault], target: np.ndarray | None) -> None:
        self.world.apply_faults(faults, target)

    def _end_physical_faults(self) -> None:
        self.world.end_faults()

    def clear_faults(self) -> None:
        super().clear_faults()
        self.world.clear_faults()

    # GroundTruth
    def held_object(self) -> str | None:
        return self.world.held_object()

    def object_names(self) -> dict[int, str]:
        return self.world.object_names()

    def object_in_basket(self, name: str) -> bool:
        return self.world.object_in_basket(name)

    def close(self) -> None:
        super().close()
        self.world.close()
