"""The MuJoCo camera's two-draw frame is the frame `mujoco.Renderer` draws in three.

MjCamera reads the depth buffer of its segmentation draw instead of drawing depth separately and
keeps one GL context across worlds, with buffers sized to the image; the colour, metric depth and
body ids must be the same, pixel for pixel, as mujoco.Renderer's colour, depth and segmentation
renders of that world with MuJoCo's own buffer sizes, in light with and without shadows.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("MUJOCO_GL", "egl")  # headless, as the driver sets it; before mujoco is imported
mujoco = pytest.importorskip("mujoco")
pytest.importorskip("airo_models")

from bt_grasp.profile import load_profile  # noqa: E402


def _renderer_frame(arm: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The frame as mujoco.Renderer draws it: one render per buffer."""
    from bt_grasp.drivers.mujoco_arm.camera import CAMERA_NAME

    cam, model, data = arm.camera, arm.model, arm.data  # type: ignore[attr-defined]
    model.vis.global_.offwidth = model.vis.global_.offheight = 1024  # the world's own buffers
    model.vis.quality.shadowsize = 4096
    r = mujoco.Renderer(model, cam.height, cam.width)
    try:
        def draw() -> np.ndarray:
            r.update_scene(data, camera=CAMERA_NAME, scene_option=cam._option)
            return np.array(r.render())

        rgb = draw()
        r.enable_depth_rendering()
        depth = draw()
        r.enable_segmentation_rendering()
        seg = draw()
    finally:
        r.close()
    depth[depth >= cam.far * 0.999] = 0.0
    inst = np.full(depth.shape, -1, np.int32)
    is_geom = (seg[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM)) & (seg[..., 0] >= 0)
    inst[is_geom] = np.asarray(model.geom_bodyid, np.int32)[seg[..., 0][is_geom]]
    return rgb, depth, inst


def test_two_draws_give_the_renderers_colour_depth_and_body_ids_across_worlds() -> None:
    from bt_grasp.drivers.mujoco_arm import MujocoArm

    arm = MujocoArm(load_profile("ur5e_robotiq_mujoco"), image_size=128, lighting="hard")
    shadows = set()
    try:
        for episode in (0, 1, 2):  # later worlds reuse the camera's GL context
            arm.reset(episode=episode, seed=3)
            shadows.add(bool(arm.model.light_castshadow.any()))
            rgb, depth, inst = arm.camera.render(arm.data)
            want = _renderer_frame(arm)
            assert np.array_equal(rgb, want[0])
            assert np.array_equal(depth, want[1])
            assert np.array_equal(inst, want[2])
            assert set(arm.bodies) & set(np.unique(inst).tolist())  # the scene's objects are seen
            assert (depth > 0).any()
        assert shadows == {True, False}  # with and without a shadow map in use
        assert (arm.camera.render(arm.data, segmentation=False)[2] == -1).all()  # no ids asked, none given
    finally:
        arm.close()
