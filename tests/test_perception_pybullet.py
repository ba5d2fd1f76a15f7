"""The geometric backend on real PyBullet renders (TinyRenderer), with our own camera maths."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bt_grasp.bench.catalogue import COLOURS
from bt_grasp.drivers.base import Observation
from bt_grasp.perception.geometric import GeometricPerceiver

SIZE = 256
NEAR, FAR, FOV = 0.1, 3.0, 55.0


def _camera(eye: list[float], target: list[float]) -> tuple[list[float], list[float], np.ndarray, np.ndarray]:
    view = p.computeViewMatrix(eye, target, [1, 0, 0])
    proj = p.computeProjectionMatrixFOV(FOV, 1.0, NEAR, FAR)
    # view is column-major world->GL camera (x right, y up, z back); OpenCV flips y and z.
    V = np.asarray(view).reshape(4, 4).T
    T = np.linalg.inv(V) @ np.diag([1.0, -1.0, -1.0, 1.0])
    f = SIZE / (2.0 * np.tan(np.deg2rad(FOV) / 2.0))
    # GL samples pixel centres: pixel index u sees NDC x = (u + 0.5) / W * 2 - 1.
    K = np.array([[f, 0.0, SIZE / 2.0 - 0.5], [0.0, f, SIZE / 2.0 - 0.5], [0.0, 0.0, 1.0]])
    return view, proj, K, T


@pytest.fixture(scope="module")
def bullet_scene():
    cid = p.connect(p.DIRECT)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
    p.loadURDF("plane.urdf", physicsClientId=cid)
    truth = []
    for colour, pos, half in (("red", (0.45, 0.10), (0.03, 0.02, 0.025)),
                              ("blue", (0.55, -0.08), (0.025, 0.025, 0.02)),
                              ("yellow", (0.40, -0.12), (0.02, 0.035, 0.03)),
                              ("green", (0.60, 0.12), (0.03, 0.03, 0.015))):
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=cid)
        vis = p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=COLOURS[colour], physicsClientId=cid)
        centre = (pos[0], pos[1], half[2])
        p.createMultiBody(0.1, col, vis, centre, physicsClientId=cid)
        truth.append((colour, np.array(centre), 2 * half[2]))
    view, proj, K, T = _camera([0.5, 0.0, 0.75], [0.5, 0.0, 0.0])
    _, _, rgba, depth_buf, _ = p.getCameraImage(SIZE, SIZE, view, proj, renderer=p.ER_TINY_RENDERER,
                                                physicsClientId=cid)
    p.disconnect(cid)
    rgb = np.asarray(rgba, dtype=np.uint8).reshape(SIZE, SIZE, 4)[..., :3]
    d = np.asarray(depth_buf, dtype=np.float64).reshape(SIZE, SIZE)
    depth = FAR * NEAR / (FAR - (FAR - NEAR) * d)
    obs = Observation(rgb=rgb, depth=depth.astype(np.float32), K=K, T_cam_base=T)
    return obs, truth


def test_geometric_on_pybullet_render(bullet_scene):
    obs, truth = bullet_scene
    scene = GeometricPerceiver().survey(obs)
    assert len(scene.objects) == len(truth)
    for colour, centre, height in truth:
        obj = next((o for o in scene.objects if o.attributes["colour"] == colour), None)
        assert obj is not None, f"no {colour} object among {[o.name for o in scene.objects]}"
        fc = np.asarray(obj.attributes["footprint_centre"])
        assert np.linalg.norm(fc - centre[:2]) < 0.015
        top = obj.attributes["top_height"]
        assert abs(top - height) < 0.015
        assert obj.attributes["shape"] in ("box", "bar")


def test_pybullet_locate_by_colour(bullet_scene):
    obs, truth = bullet_scene
    per = GeometricPerceiver()
    loc = per.locate(obs, "the yellow box", None)
    assert loc is not None
    centre = next(c for col, c, _ in truth if col == "yellow")
    assert np.linalg.norm(loc.points_base[:, :2].mean(axis=0) - centre[:2]) < 0.015
    assert per.locate(obs, "the purple ball", None) is None
