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
from scipy.spatial import Delaunay, QhullError

from .features import min_area_rect

RECEPTACLE_NAME = "basket"
MIN_LONG_M = 0.20  # longer than any catalogue object: a fixture, not something to grasp


def find_receptacle(labels: np.ndarray, P: np.ndarray) -> int:
    """Label of the receptacle segment (0 if none): the largest segment longer than MIN_LONG_M."""
    best, best_len = 0, MIN_LONG_M
    for lab in np.unique(labels):
        if lab == 0:
            continue
        pts = P[labels == lab]
        pts = pts[np.isfinite(pts).all(axis=1)]
        if len(pts) < 50:
            continue
        sub = pts[:: max(1, len(pts) // 2000), :2]
        _, _, length, _, _ = min_area_rect(sub)
        if length > best_len:
            best, best_len = int(lab), length
    return best


def outline(labels: np.ndarray, rid: int) -> np.ndarray:
    """HxW bool: pixels inside the convex hull (in the image) of the receptacle's segment."""
    v, u = np.nonzero(labels == rid)
    inside = np.zeros(labels.shape, dtype=bool)
    if len(u) < 3:
        return inside
    try:
        tri = Delaunay(np.stack([u, v], axis=1)[:: max(1, len(u) // 3000)])
    except QhullError:
        return inside
    v0, v1, u0, u1 = v.min(), v.max() + 1, u.min(), u.max() + 1
    vv, uu = np.mgrid[v0:v1, u0:u1]
    inside[v0:v1, u0:u1] = (tri.find_simplex(np.stack([uu.ravel(), vv.ravel()], axis=1)) >= 0).reshape(vv.shape)
    return inside


def add_floor(labels: np.ndarray, rid: int, inside: np.ndarray, heights: np.ndarray,
              min_height: float) -> np.ndarray:
    """Labels with the receptacle's floor (unlabelled pixels inside its outline `inside`, below
    the foreground threshold) given to the receptacle."""
    floor = inside & (labels == 0) & np.isfinite(heights) & (heights < min_height)
    out = labels.copy()
    out[floor] = rid
    return out
