"""A partly hidden segment is judged by its own edge, not by where a nearer object cuts it."""

from __future__ import annotations

import numpy as np

from bt_grasp.perception.outline import edge_roundness, free_edge


def _cut(inside) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An object 4 cm tall (1 px = 1 mm) whose lower-right part lies under an 8 cm tall one."""
    n = 160
    yy, xx = np.mgrid[0:n, 0:n].astype(float)
    P = np.stack([xx * 0.001, yy * 0.001, np.zeros((n, n))], axis=2)
    obj = inside(xx, yy)
    occluder = (xx > 85) & (yy > 60)
    heights = np.where(occluder, 0.08, np.where(obj, 0.04, 0.0))
    return obj & ~occluder, heights, P


def test_a_cut_disc_is_round_and_a_cut_box_is_straight():
    disc = _cut(lambda x, y: (x - 80) ** 2 + (y - 80) ** 2 <= 30 ** 2)  # a 6 cm puck seen from above
    box = _cut(lambda x, y: (abs(x - 80) <= 30) & (abs(y - 80) <= 22))  # a 6 x 4.5 cm box
    assert edge_roundness(*disc) > 0.3
    assert edge_roundness(*box) < -0.2


def test_the_edge_along_the_nearer_object_is_a_cut_not_the_objects_own():
    mask, heights, _ = _cut(lambda x, y: (abs(x - 80) <= 30) & (abs(y - 80) <= 22))
    edge = free_edge(mask, heights)
    assert edge.any()
    assert not edge[61:, 84].any() and not edge[60, 86:].any()  # beside the occluder: a cut
    assert edge[58, 60] and edge[80, 50]  # the box's own sides


def test_an_outline_hidden_all_round_says_nothing():
    n = 60
    yy, xx = np.mgrid[0:n, 0:n].astype(float)
    P = np.stack([xx * 0.001, yy * 0.001, np.zeros((n, n))], axis=2)
    mask = (abs(xx - 30) <= 5) & (abs(yy - 30) <= 5)
    heights = np.where(mask, 0.02, 0.06)  # a low patch seen through a gap between higher things
    assert edge_roundness(mask, heights, P) is None


def _lying_cylinder_top(radius: float, width: float, length: float = 0.08) -> np.ndarray:
    """Points on the visible top of a cylinder lying along x, `width` of it across (1 mm grid)."""
    ys = np.arange(-width / 2, width / 2 + 1e-9, 0.001)
    xs = np.arange(-length / 2, length / 2 + 1e-9, 0.001)
    x, y = np.meshgrid(xs, ys)
    z = np.sqrt(np.maximum(radius ** 2 - y ** 2, 0.0))
    return np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)


def test_a_lying_can_is_a_cylinder_and_a_narrow_rounded_strip_is_not():
    from bt_grasp.perception.features import cross_curvature

    can = _lying_cylinder_top(0.028, 0.056)  # a medium can on its side, seen whole
    assert cross_curvature(can, 0.0, 0.056) > 0.8
    strip = _lying_cylinder_top(0.006, 0.011)  # 11 mm of a box edge, rounded like a 6 mm rod
    assert cross_curvature(strip, 0.0, 0.011) == 0.0  # no catalogue cylinder is that thin
