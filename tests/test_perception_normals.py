"""Surface normals and depth edges from one depth image (perception/normals.py): where they
propose cuts between touching same-colour objects, and where they do not."""

from __future__ import annotations

import numpy as np
import pytest

from bt_grasp.bench.catalogue import COLOURS
from bt_grasp.perception.assemble import heights_and_points
from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.normals import depth_edges, faces_apart, surface_normals
from bt_grasp.perception.split_merge import split_at_valleys, valley_map
from bt_grasp.perception.synthetic import Prim, overhead_camera, render

RED = COLOURS["red"][:3]


def _two_boxes(low: float, high: float) -> list[Prim]:
    """Two 6 cm red boxes side by side, touching along y = 0, `low` and `high` m tall."""
    return [Prim("box", (0.50, -0.03, low / 2), (0.06, 0.06, low), RED),  # type: ignore[arg-type]
            Prim("box", (0.50, 0.03, high / 2), (0.06, 0.06, high), RED)]  # type: ignore[arg-type]


def test_normals_of_a_tilted_plane_are_its_normal():
    K, T, shape = overhead_camera(64)
    rng = np.random.default_rng(3)
    n_true = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])
    uu, vv = np.meshgrid(np.arange(64.0), np.arange(64.0))
    a, b = rng.normal(size=3), rng.normal(size=3)
    a -= (a @ n_true) * n_true
    b -= (b @ n_true) * n_true  # two directions in the plane
    P = 0.001 * (uu[..., None] * a + vv[..., None] * b)
    fg = np.ones(P.shape[:2], dtype=bool)
    fg[:, :10] = False
    n = surface_normals(P, fg, k=2)
    inner = n[5:-5, 15:-5].reshape(-1, 3)
    assert np.allclose(np.abs(inner @ n_true), 1.0, atol=1e-6)
    assert (inner[:, 2] > 0).all()  # facing up
    assert np.isnan(n[:, :10]).all()  # off the foreground: undefined


def _two_boxes_seen(low: float, high: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two touching boxes of tops `low` and `high` at 256 px: pointmap, heights, instance ids."""
    K, T, shape = overhead_camera(256)
    obs = render(_two_boxes(low, high), K, T, shape)
    P, heights, _ = heights_and_points(obs)
    return P, heights, obs.annotations["instance"]


def test_a_step_between_touching_boxes_is_an_edge_and_their_tops_and_rims_are_not():
    P, heights, inst = _two_boxes_seen(0.02, 0.03)
    edges = depth_edges(P, heights > 0.007)
    from scipy import ndimage

    low, high = inst == 1, inst == 2
    foot = low & ndimage.binary_dilation(high, iterations=2)  # the lower top along the step
    assert edges[foot].mean() > 0.5
    others = (low | high) & ~ndimage.binary_dilation(high, iterations=4)
    assert not edges[others].any()  # flat tops, and the outward rims at the table, are no edge


def test_a_lone_box_or_ball_has_no_edge():
    """Their surfaces fold outwards only (rims, curvature): nothing to cut."""
    K, T, shape = overhead_camera(256)
    obs = render([Prim("box", (0.48, -0.05, 0.02), (0.08, 0.05, 0.04), RED, yaw=0.4),  # type: ignore[arg-type]
                  Prim("sphere", (0.52, 0.08, 0.028), (0.028,), RED)], K, T, shape)  # type: ignore[arg-type]
    P, heights, _ = heights_and_points(obs)
    assert not depth_edges(P, heights > 0.007).any()


@pytest.mark.parametrize("high", [0.029, 0.031])
def test_the_edges_cut_touching_same_colour_boxes_at_a_step_too_shallow_for_a_valley(high):
    """A 9-11 mm step: no depth jump breaks the pixel links and the colour is one, so the boxes
    are one segment, and the fold at the step's foot is too shallow for a valley; the edge map
    cuts it, each box one piece."""
    K, T, shape = overhead_camera(512)
    obs = render(_two_boxes(0.02, high), K, T, shape)
    labels, P, heights = GeometricPerceiver(split_valleys=False).segment(obs)
    assert labels.max() == 1
    fg = labels > 0
    assert split_at_valleys(labels, fg, valley_map(heights, fg), 20).max() == 1
    pieces = split_at_valleys(labels, fg, valley_map(heights, fg) | depth_edges(P, fg), 20)
    assert pieces.max() == 2
    inst = obs.annotations["instance"]
    owners = []
    for box in (1, 2):
        ids, counts = np.unique(pieces[inst == box], return_counts=True)
        assert counts.max() / counts.sum() > 0.9  # the cut runs along the lower top, a few pixels in
        owners.append(int(ids[counts.argmax()]))
    assert owners[0] != owners[1]


def test_boxes_of_one_height_make_one_flat_top_without_edges():
    """Side by side at one height the two tops are one plane: no step, no crease, no cut."""
    K, T, shape = overhead_camera(512)
    obs = render(_two_boxes(0.03, 0.03), K, T, shape)
    labels, P, heights = GeometricPerceiver(split_valleys=False).segment(obs)
    fg = labels > 0
    assert split_at_valleys(labels, fg, depth_edges(P, fg), 20).max() == 1


def test_parallel_faces_at_two_heights_are_two_objects_and_one_face_is_one():
    P, heights, inst = _two_boxes_seen(0.02, 0.035)
    n = surface_normals(P, heights > 0.007)
    low, high = inst == 1, inst == 2
    assert faces_apart(low, high, n, P)
    v = np.nonzero(low.any(axis=1))[0]
    top_half = low & (np.arange(low.shape[0])[:, None] < v.mean())
    assert not faces_apart(top_half, low & ~top_half, n, P)  # two halves of one face
    P2, h2, inst2 = _two_boxes_seen(0.03, 0.03)
    assert not faces_apart(inst2 == 1, inst2 == 2, surface_normals(P2, h2 > 0.007), P2)


@pytest.mark.parametrize(("high", "option"), [(0.032, "depth_edges"), (0.034, "face_veto")])
def test_touching_same_colour_boxes_of_two_heights_are_two_objects_with_the_depth_cues(high, option):
    """Shipped (both cues off) the two boxes are one segment; with the edges the 12 mm step is cut
    and stays cut, with the face veto the valley's cut is not merged back (the two tops are
    parallel faces at two heights)."""
    K, T, shape = overhead_camera(512)
    obs = render(_two_boxes(0.02, high), K, T, shape)
    assert len(GeometricPerceiver().survey(obs).objects) == 1
    scene = GeometricPerceiver(**{option: True}).survey(obs)
    assert len(scene.objects) == 2
    inst = obs.annotations["instance"]
    owners = set()
    for o in scene.objects:
        ids, counts = np.unique(inst[o.mask], return_counts=True)
        assert counts.max() / counts.sum() > 0.9
        owners.add(int(ids[counts.argmax()]))
    assert owners == {1, 2}
