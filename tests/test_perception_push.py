"""Push planning: image directions on the table, gap search, "clutter too dense"."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import cKDTree

from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.geometry import pointmap
from bt_grasp.perception.push import TOO_DENSE, image_direction_to_base, plan_push
from bt_grasp.perception.synthetic import Prim, overhead_camera, render

RED, BLUE, GREEN = (0.85, 0.1, 0.1), (0.1, 0.25, 0.85), (0.1, 0.65, 0.2)


def _setup(prims, tilt=0.0):
    K, T, shape = overhead_camera(256, tilt=tilt)
    obs = render(prims, K, T, shape)
    per = GeometricPerceiver()
    scene = per.survey(obs)
    return obs, scene, per.locate(obs, "red box", scene)


def _occupied_xy(obs, scene) -> np.ndarray:
    P = pointmap(obs.depth, obs.K, obs.T_cam_base)
    m = np.zeros(obs.depth.shape, bool)
    for o in scene.objects:
        m |= o.mask
    return P[m][:, :2]


@pytest.mark.parametrize("tilt", [0.0, 0.25])
def test_image_directions_map_to_the_table(tilt):
    obs, scene, loc = _setup([Prim("box", (0.5, 0.0, 0.02), (0.04, 0.04, 0.04), RED)], tilt)
    from bt_grasp.perception.geometry import Plane

    plane = Plane(np.array([0.0, 0.0, 1.0]), 0.0)
    # This camera shows base +x as image up and base -y as image right.
    expect = {"up": [1, 0], "down": [-1, 0], "right": [0, -1], "left": [0, 1]}
    for d, e in expect.items():
        v = image_direction_to_base(d, (obs.K[0, 2], obs.K[1, 2]), obs.K, obs.T_cam_base, plane)
        assert np.allclose(v[:2], e, atol=1e-6) and abs(v[2]) < 1e-9
    with pytest.raises(ValueError):
        image_direction_to_base("north", (1.0, 1.0), obs.K, obs.T_cam_base, plane)


def test_push_starts_in_free_space_behind_the_object():
    prims = [Prim("box", (0.5, 0.0, 0.02), (0.04, 0.04, 0.04), RED),
             Prim("box", (0.5, 0.06, 0.02), (0.04, 0.04, 0.04), BLUE)]  # neighbour on +y (image left)
    obs, scene, loc = _setup(prims)
    occ = cKDTree(_occupied_xy(obs, scene))
    for d in ("left", "right", "up", "down"):
        plan = plan_push(obs, loc, scene, d, distance=0.1)
        assert plan.ok, (d, plan.reason)
        assert not occ.query_ball_point(plan.start[:2], r=0.0199), d
        assert np.linalg.norm(plan.end - plan.start) == pytest.approx(0.1)
        assert np.allclose((plan.end - plan.start)[:2] / 0.1, plan.direction[:2])
        assert isinstance(plan.direction, tuple)
        assert 0.008 <= plan.height <= 0.04 and plan.start[2] == pytest.approx(plan.height, abs=1e-6)
        # The start lies on the side opposite the push.
        assert (plan.start[:2] - [0.5, 0.0]) @ np.asarray(plan.direction[:2]) < -0.02
    # Pushing right (towards -y) starts on +y: behind the neighbour, outside its footprint.
    right = plan_push(obs, loc, scene, "right")
    assert right.start[1] > 0.08 + 0.0199 - 1e-3
    # Without a scene the occupancy comes from every point above the table: same start.
    assert np.allclose(plan_push(obs, loc, None, "right").start, right.start, atol=0.006)
    # Distances are clamped to 3-20 cm.
    far = plan_push(obs, loc, scene, "up", distance=1.0)
    assert np.linalg.norm(far.end - far.start) == pytest.approx(0.20)


def test_boxed_in_object_reports_clutter_too_dense():
    prims = [Prim("box", (0.5, 0.0, 0.02), (0.04, 0.04, 0.04), RED)]
    colours = [BLUE, GREEN]
    k = 0
    for dx in (-0.1, -0.05, 0.0, 0.05, 0.1):
        for dy in (-0.1, -0.05, 0.0, 0.05, 0.1):
            if dx == 0.0 and dy == 0.0:
                continue
            prims.append(Prim("box", (0.5 + dx, dy, 0.02), (0.045, 0.045, 0.04), colours[k % 2]))
            k += 1
    obs, scene, loc = _setup(prims)
    assert loc is not None
    for d in ("left", "right", "up", "down"):
        plan = plan_push(obs, loc, scene, d)
        assert not plan.ok and plan.reason == TOO_DENSE and plan.start is None
    # With a wide search the walk gets out of the 5x5 grid and succeeds.
    assert plan_push(obs, loc, scene, "up", max_search=0.2).ok
