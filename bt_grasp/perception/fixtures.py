"""The receptacle (the basket fixture on the table): found, filled in, and what lies in it.

Why: a delivery is verified by seeing the target in the basket, so the basket must be one
segment of its own and the objects in it separate segments. The basket is recognised as the
segment far larger than any catalogue object (the longest is 15 cm; the basket is 30 cm); its
floor is only millimetres above the table, below the foreground threshold, so the floor pixels
inside the walls' outline are added to it. Objects in it stand above the floor and keep their
own segments (the depth step at their base separates them from the floor).

Simplified: one receptacle per frame (the largest such segment); its outline is the convex hull
of its visible walls, cut by the image border when the basket is only partly in view.
"""

from __future__ import annotations

import numpy as np

from .geometry import finite_rows, min_area_rect

RECEPTACLE_NAME = "basket"
MIN_LONG_M = 0.20  # longer than any catalogue object: a fixture, not something to grasp


def find_receptacle(labels: np.ndarray, P: np.ndarray, pixel_m: float) -> int:
    """Label of the receptacle segment (0 if none): the largest segment longer than MIN_LONG_M.

    pixel_m: roughly the size of a pixel on the table, to skip segments too small in the image.
    """
    from scipy import ndimage  # here, not at import: scipy loads slowly, only surveys use it

    best, best_len = 0, MIN_LONG_M
    for k, win in enumerate(ndimage.find_objects(labels)):
        if win is None:
            continue
        lab = k + 1
        span = max(win[0].stop - win[0].start, win[1].stop - win[1].start) * pixel_m * np.sqrt(2)
        if span < MIN_LONG_M:  # even its image box's diagonal is too short
            continue
        pts = P[win][labels[win] == lab]
        pts = pts[finite_rows(pts)]
        if len(pts) < 50:
            continue
        sub = pts[:: max(1, len(pts) // 2000), :2]
        _, _, length, _, _ = min_area_rect(sub)
        if length > best_len:
            best, best_len = int(lab), length
    return best


def outline(labels: np.ndarray, rid: int) -> np.ndarray:
    """HxW bool: pixels inside the convex hull (in the image) of the receptacle's segment.

    A convex polygon covers one span per image row, so the hull's edges are walked at half-pixel
    steps and each row is filled between its leftmost and rightmost edge point.
    """
    from scipy.spatial import ConvexHull, QhullError  # here, not at import: scipy loads slowly

    v, u = np.nonzero(labels == rid)
    inside = np.zeros(labels.shape, dtype=bool)
    if len(u) < 3:
        return inside
    pts = np.stack([u, v], axis=1).astype(float)
    try:
        hull = pts[ConvexHull(pts).vertices]
    except QhullError:
        return inside
    a, b = hull, np.roll(hull, -1, axis=0)
    steps = np.maximum(np.ceil(2 * np.abs(b - a).max(axis=1)).astype(int), 1)
    t = np.concatenate([np.arange(n) / n for n in steps])
    start = np.repeat(a, steps, axis=0)
    edge = start + (np.repeat(b, steps, axis=0) - start) * t[:, None]
    rows = np.rint(edge[:, 1]).astype(int)
    lo = np.full(labels.shape[0], labels.shape[1], dtype=int)
    hi = np.full(labels.shape[0], -1, dtype=int)
    np.minimum.at(lo, rows, np.floor(edge[:, 0]).astype(int))
    np.maximum.at(hi, rows, np.ceil(edge[:, 0]).astype(int))
    cols = np.arange(labels.shape[1])
    inside[:] = (cols[None, :] >= lo[:, None]) & (cols[None, :] <= hi[:, None])
    return inside


def add_floor(labels: np.ndarray, rid: int, inside: np.ndarray, heights: np.ndarray,
              min_height: float) -> np.ndarray:
    """Labels with the receptacle's floor (unlabelled pixels inside its outline `inside`, below
    the foreground threshold) given to the receptacle."""
    floor = inside & (labels == 0) & np.isfinite(heights) & (heights < min_height)
    out = labels.copy()
    out[floor] = rid
    return out
