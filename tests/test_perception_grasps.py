"""Antipodal grasp generation with a collision-checked gripper model."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.grasps import GripperModel, grasp_candidates, plan_grasps
from bt_grasp.perception.synthetic import Prim, overhead_camera, render

RED, BLUE, GREEN = (0.85, 0.1, 0.1), (0.1, 0.25, 0.85), (0.1, 0.65, 0.2)


def _frame(pose) -> np.ndarray:
    return Rotation.from_quat(pose.orientation).as_matrix()


def _locate(prims, text="red box", size=256):
    K, T, shape = overhead_camera(size)
    obs = render(prims, K, T, shape)
    per = GeometricPerceiver()
    scene = per.survey(obs)
    return obs, per.locate(obs, text, scene)


def test_isolated_box_grasps_span_its_width_and_are_top_down():
    obs, loc = _locate([Prim("box", (0.5, 0.0, 0.02), (0.05, 0.03, 0.04), RED)])
    grasps = plan_grasps(obs, loc)
    assert grasps
    assert [g.score for g in grasps] == sorted((g.score for g in grasps), reverse=True)
    g = grasps[0]
    R = _frame(g)
    assert np.allclose(R[:, 2], [0, 0, -1], atol=1e-6)  # approach straight down
    assert abs(R[:, 2] @ R[:, 0]) < 1e-9 and np.isclose(np.linalg.det(R), 1.0)
    closing = R[:, 0]
    across_y = abs(closing[1]) > abs(closing[0])
    true_w = 0.03 if across_y else 0.05
    assert abs(g.metadata["object_width"] - true_w) < 0.005
    assert abs(closing[1 if across_y else 0]) > np.cos(np.deg2rad(12))
    assert g.width <= GripperModel().max_aperture
    assert np.linalg.norm(g.position[:2] - [0.5, 0.0]) < 0.01
    assert 0.004 < g.position[2] < 0.04  # between table and top
    # Both principal widths appear among the candidates.
    widths = {round(c.metadata["object_width"], 2) for c in grasps}
    assert any(abs(w - 0.03) < 0.006 for w in widths)


def test_thin_flat_object_gets_top_down_grasps_kept_off_the_table():
    """A domino lying flat (1 cm tall): the grasp goes as low as the table test allows, not lower."""
    obs, loc = _locate([Prim("box", (0.5, 0.0, 0.005), (0.076, 0.038, 0.0095), RED)], "red domino")
    grasps = plan_grasps(obs, loc)
    assert grasps and all(g.metadata["approach"] == "top_down" for g in grasps)
    g = GripperModel()
    lowest = min(p.position[2] for p in grasps)
    assert lowest - g.margin >= g.table_clearance  # its inflated fingertips stay off the table
    assert lowest < 0.0095  # the fingers reach below the top face, onto the sides
    # the object's top goes with each grasp: the driver closes on a low side more softly
    assert all(abs(p.metadata["object_top_z"] - 0.0095) < 0.003 for p in grasps)


def test_box_squeezed_between_neighbours_has_no_grasp_across_the_blocked_axis():
    prims = [Prim("box", (0.5, 0.0, 0.02), (0.05, 0.03, 0.04), RED),
             Prim("box", (0.5, 0.04, 0.025), (0.08, 0.045, 0.05), BLUE),
             Prim("box", (0.5, -0.04, 0.025), (0.08, 0.045, 0.05), GREEN)]
    obs, loc = _locate(prims)
    grasps = plan_grasps(obs, loc)
    assert grasps, "closing along x (the free axis) must remain possible"
    for g in grasps:
        if g.metadata["approach"] == "top_down":
            assert abs(_frame(g)[1, 0]) < np.sin(np.deg2rad(30)), "closing along the blocked y axis"


def test_too_wide_object_has_no_grasp():
    obs, loc = _locate([Prim("box", (0.5, 0.0, 0.02), (0.10, 0.09, 0.04), RED)])
    assert plan_grasps(obs, loc) == []


def test_tilted_approach_when_top_down_is_blocked():
    """A shelf just above the object blocks every vertical approach; a tilted one gets in."""
    rng = np.random.default_rng(0)
    xs, ys = np.meshgrid(np.linspace(-0.015, 0.015, 16), np.linspace(-0.02, 0.02, 20))
    obj = []
    for z in np.linspace(0.0, 0.04, 9):  # a 3 x 4 x 4 cm box: sides and top
        obj += [[x, y, z] for x, y in ((-0.015, yy) for yy in ys[:, 0])]
        obj += [[x, y, z] for x, y in ((0.015, yy) for yy in ys[:, 0])]
        obj += [[x, y, z] for x, y in ((xx, -0.02) for xx in xs[0])]
        obj += [[x, y, z] for x, y in ((xx, 0.02) for xx in xs[0])]
    obj += [[x, y, 0.04] for x, y in zip(xs.ravel(), ys.ravel(), strict=True)]
    obj = np.asarray(obj) + rng.normal(0, 1e-4, (len(obj), 3))
    sx, sy = np.meshgrid(np.linspace(-0.05, 0.05, 40), np.linspace(-0.03, 0.03, 24))
    shelf = np.column_stack([sx.ravel(), sy.ravel(), np.full(sx.size, 0.075)])
    grasps = grasp_candidates(obj, np.vstack([obj, shelf]), table=0.0)
    assert grasps and all(g.metadata["approach"] == "tilted" for g in grasps)
    free = grasp_candidates(obj, obj, table=0.0)
    assert free and free[0].metadata["approach"] == "top_down"


def test_an_object_the_frame_cuts_off_is_grasped_across_itself_not_to_the_frame_edge():
    """A 70 mm ball half out of the image: the frame's edge is not the ball's side, so no grasp
    pairs it with the far side (a chord centred on the seen part would put a finger inside the
    ball); the grasps span the ball's true width. Without the frame's cut they span a chord."""
    from bt_grasp.perception.grasps import frame_cut, scene_cloud

    K, T, shape = overhead_camera(256)
    obs = render([Prim("sphere", (0.5, 0.345, 0.035), (0.035,), RED)], K, T, shape)
    per = GeometricPerceiver()
    loc = per.locate(obs, "red ball", per.survey(obs))
    cut = frame_cut(obs, loc.mask)
    assert cut is not None and len(cut)
    grasps = plan_grasps(obs, loc)
    assert grasps and all(g.metadata["object_width"] > 0.055 for g in grasps[:3])
    plane, scene = scene_cloud(obs)
    obj = loc.points_base[plane.height(loc.points_base) > 0.005]
    chords = grasp_candidates(obj, scene, plane)
    assert chords[0].metadata["object_width"] < 0.045


def test_an_object_inside_the_frame_has_no_cut():
    obs, loc = _locate([Prim("box", (0.5, 0.0, 0.02), (0.05, 0.03, 0.04), RED)])
    from bt_grasp.perception.grasps import frame_cut

    assert frame_cut(obs, loc.mask) is None
