"""The fixed overhead RGB-D camera rendered by MuJoCo (EGL offscreen), with the robot hidden.

Same intrinsics, pose and lighting as the PyBullet camera (it subclasses that dataclass for K(),
resized() and the episode's Lighting); only rendering differs. The robot's geoms sit in a geom
group this camera does not draw, as the PyBullet camera makes the robot transparent.
Depth is MuJoCo's metric depth along the optical axis; pixels at the far plane are 0 (unknown).
Segmentation: each pixel's geom, mapped to its body id (the ids GroundTruth.object_names uses).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from bt_grasp.drivers.mujoco_arm.objects import VISUAL_GROUP
from bt_grasp.drivers.pybullet_arm.camera import Camera

CAMERA_NAME = "overhead"


@dataclass
class MjCamera(Camera):
    """Pinhole camera (vertical fov, OpenCV pose in the base frame) drawn by a mujoco.Renderer."""

    renderer: Any = None

    def attach(self, model: mujoco.MjModel) -> None:
        """Bind to a newly compiled world: clip planes in metres, a renderer of this size."""
        self.release()
        extent = float(model.stat.extent)
        model.vis.map.znear = self.near / extent
        model.vis.map.zfar = self.far / extent
        self.renderer = mujoco.Renderer(model, self.height, self.width)
        self._option = mujoco.MjvOption()
        self._option.geomgroup[:] = 0
        self._option.geomgroup[VISUAL_GROUP] = 1
        self._option.sitegroup[:] = 0

    def release(self) -> None:
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None

    def _draw(self, data: mujoco.MjData, mode: str) -> np.ndarray:
        r = self.renderer
        if mode == "depth":
            r.enable_depth_rendering()
        elif mode == "seg":
            r.enable_segmentation_rendering()
        try:
            r.update_scene(data, camera=CAMERA_NAME, scene_option=self._option)
            return np.array(r.render())
        finally:
            if mode == "depth":
                r.disable_depth_rendering()
            elif mode == "seg":
                r.disable_segmentation_rendering()

    def render(self, data: Any, segmentation: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # type: ignore[override]
        """(rgb uint8 HxWx3, depth float32 metres, instance int32 body ids with -1 background)."""
        rgb = self._draw(data, "rgb").astype(np.uint8)
        depth = self._draw(data, "depth").astype(np.float32)
        depth[depth >= self.far * 0.999] = 0.0
        inst = np.full((self.height, self.width), -1, np.int32)
        if segmentation:
            seg = self._draw(data, "seg")
            geom = seg[:, :, 0]
            is_geom = (seg[:, :, 1] == int(mujoco.mjtObj.mjOBJ_GEOM)) & (geom >= 0)
            bodies = np.asarray(data.model.geom_bodyid, np.int32)
            inst[is_geom] = bodies[geom[is_geom]]
        return rgb, depth, inst
