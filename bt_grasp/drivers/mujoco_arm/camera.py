"""The fixed overhead RGB-D camera rendered by MuJoCo (EGL offscreen), with the robot hidden.

Same intrinsics, pose and lighting as the PyBullet camera (it subclasses that dataclass for K(),
resized() and the episode's Lighting); only rendering differs. The robot's geoms sit in a geom
group this camera does not draw, as the PyBullet camera makes the robot transparent.
Depth is MuJoCo's metric depth along the optical axis; pixels at the far plane are 0 (unknown).
Segmentation: each pixel's geom, mapped to its body id (the ids GroundTruth.object_names uses).

Why not `mujoco.Renderer`: it draws once per buffer (colour, depth, segmentation: three draws a
frame) and builds a GL context per world. Here a frame is two draws, the colour one and a
segmentation one whose depth buffer is read with it (the Renderer's depth draw uses the same
segmentation flags, so the depth is the same, bit for bit); the GL context lives as long as the
camera and only the per-world render context is rebuilt, with buffers no larger than the image
needs. tests/test_mujoco_camera.py checks the frames against `mujoco.Renderer`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from bt_grasp.drivers.mujoco_arm.objects import VISUAL_GROUP
from bt_grasp.drivers.pybullet_arm.camera import Camera

CAMERA_NAME = "overhead"
UNUSED_SHADOW_MAP = 1024  # texels a side (MuJoCo's default 4096 costs ~40 ms per world to allocate)


@dataclass
class MjCamera(Camera):
    """Pinhole camera (vertical fov, OpenCV pose in the base frame) drawn with MuJoCo's renderer."""

    gl: Any = None        # the offscreen GL context, kept across worlds
    context: Any = None   # MjrContext of the attached world (meshes uploaded to GL)
    scene: Any = None     # MjvScene of the attached world
    view: Any = None      # MjvCamera: the world's fixed camera

    def attach(self, model: mujoco.MjModel) -> None:
        """Bind to a newly compiled world: clip planes in metres, its render context and scene."""
        self._free_world()
        extent = float(model.stat.extent)
        model.vis.map.znear = self.near / extent
        model.vis.map.zfar = self.far / extent
        # The context allocates (and software GL clears) an offscreen buffer and a shadow map per
        # world: the image's own size, and a small map when no light casts a shadow (it is unused).
        model.vis.global_.offwidth, model.vis.global_.offheight = self.width, self.height
        if not np.any(model.light_castshadow):
            model.vis.quality.shadowsize = UNUSED_SHADOW_MAP
        if self.gl is None:
            self.gl = mujoco.GLContext(self.width, self.height)
        self.gl.make_current()
        self.context = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150.value)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self.context)
        self.context.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self.scene = mujoco.MjvScene(model, maxgeom=max(1000, 2 * model.ngeom))
        self.view = mujoco.MjvCamera()
        self.view.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self.view.fixedcamid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, CAMERA_NAME)
        self._option = mujoco.MjvOption()
        self._option.geomgroup[:] = 0
        self._option.geomgroup[VISUAL_GROUP] = 1
        self._option.sitegroup[:] = 0

    def _free_world(self) -> None:
        if self.context is not None:
            self.gl.make_current()
            self.context.free()
        self.context = self.scene = self.view = None

    def release(self) -> None:
        """Free the render context and the GL context (attach builds them again)."""
        self._free_world()
        if self.gl is not None:
            self.gl.free()
            self.gl = None

    def _draw(self, segmentation: bool, colour: np.ndarray, depth: np.ndarray | None = None) -> None:
        flags = self.scene.flags
        flags[mujoco.mjtRndFlag.mjRND_SEGMENT] = flags[mujoco.mjtRndFlag.mjRND_IDCOLOR] = segmentation
        rect = mujoco.MjrRect(0, 0, self.width, self.height)
        mujoco.mjr_render(rect, self.scene, self.context)
        mujoco.mjr_readPixels(colour, depth, rect, self.context)

    def _metric(self, raw: np.ndarray, model: mujoco.MjModel) -> np.ndarray:
        """Metric depth from the reversed-Z depth buffer (perspective projection), in float32."""
        extent = float(model.stat.extent)
        far, near = np.float32(model.vis.map.zfar * extent), np.float32(model.vis.map.znear * extent)
        c = np.float32(-0.5) * (-(far + near) / (far - near)) - np.float32(0.5)
        d = np.float32(-0.5) * (-(np.float32(2) * far * near) / (far - near))
        return (d / (raw.astype(np.float64) + c)).astype(np.float32)

    def render(self, data: Any, segmentation: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # type: ignore[override]
        """(rgb uint8 HxWx3, depth float32 metres, instance int32 body ids with -1 background)."""
        model = data.model
        self.gl.make_current()
        mujoco.mjv_updateScene(model, data, self._option, None, self.view, mujoco.mjtCatBit.mjCAT_ALL, self.scene)
        h, w = self.height, self.width
        rgb = np.empty((h, w, 3), np.uint8)
        self._draw(False, rgb)
        ids, raw = np.empty((h, w, 3), np.uint8), np.empty((h, w), np.float32)
        self._draw(True, ids, raw)
        depth = self._metric(raw, model)
        depth[depth >= self.far * 0.999] = 0.0
        inst = np.full((h, w), -1, np.int32)
        if segmentation:
            # segid + 1 is drawn as a 24-bit colour (0 = background); map it to the geom's body
            seg = ids[..., 0].astype(np.int64) + (ids[..., 1].astype(np.int64) << 8) + (ids[..., 2].astype(np.int64) << 16)
            body_of = np.full(self.scene.ngeom + 1, -1, np.int32)
            for g in self.scene.geoms[:self.scene.ngeom]:
                if g.segid != -1 and g.objtype == int(mujoco.mjtObj.mjOBJ_GEOM) and g.objid >= 0:
                    body_of[g.segid + 1] = model.geom_bodyid[g.objid]
            inst = body_of[seg]
        # the GL image's first row is the bottom one
        return np.ascontiguousarray(rgb[::-1]), np.ascontiguousarray(depth[::-1]), np.ascontiguousarray(inst[::-1])
