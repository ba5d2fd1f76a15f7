"""Per-segment geometry: centroid, footprint rectangle, height, shape cues, size and category.

Why from the visible points only: the same code must run on the simulator's masks and on a real
camera's segments. Simplified: a single view sees tops and some sides, so occluded objects look
smaller; the footprint is the minimum-area rectangle of the visible points projected on the
base xy plane (the table is assumed horizontal in the base frame for the footprint, heights come
from the fitted plane).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from .colour import name_colour

GRASPABLE_WIDTH = 0.08  # narrowest footprint side an 85 mm gripper can still close across (+noise)

# Geometric-mean-dimension thresholds (metres) small|medium|large, per perceived category.
_SIZE_THRESHOLDS = {"cylinder": (0.05, 0.07), "bar": (0.045, 0.06), "default": (0.045, 0.06)}


def min_area_rect(xy: np.ndarray) -> tuple[np.ndarray, float, float, float, float]:
    """(centre, yaw, length, width, hull_area) of the minimum-area rectangle around 2D points.

    Rotating calipers over the convex hull's edge directions; length ≥ width, yaw of the long side.
    """
    if len(xy) < 3:
        c = xy.mean(axis=0) if len(xy) else np.zeros(2)
        return c, 0.0, 0.0, 0.0, 0.0
    if len(xy) > 400:  # dedupe on a 1 mm grid: same hull within 1 mm, far fewer points for qhull
        xy = np.unique(np.round(xy, 3), axis=0)
    try:
        hull = ConvexHull(xy)
    except QhullError:
        c = xy.mean(axis=0)
        return c, 0.0, 0.0, 0.0, 0.0
    hp = xy[hull.vertices]
    edges = np.diff(np.vstack([hp, hp[:1]]), axis=0)
    ang = np.arctan2(edges[:, 1], edges[:, 0])
    ca, sa = np.cos(ang), np.sin(ang)
    # Project hull points onto each edge frame.
    u = hp[:, 0][None, :] * ca[:, None] + hp[:, 1][None, :] * sa[:, None]
    v = -hp[:, 0][None, :] * sa[:, None] + hp[:, 1][None, :] * ca[:, None]
    du, dv = u.max(1) - u.min(1), v.max(1) - v.min(1)
    k = int(np.argmin(du * dv))
    cu, cv = (u[k].max() + u[k].min()) / 2, (v[k].max() + v[k].min()) / 2
    centre = np.array([cu * ca[k] - cv * sa[k], cu * sa[k] + cv * ca[k]])
    length, width, yaw = du[k], dv[k], ang[k]
    if width > length:
        length, width, yaw = width, length, yaw + np.pi / 2
    yaw = (yaw + np.pi / 2) % np.pi - np.pi / 2
    return centre, float(yaw), float(length), float(width), float(hull.volume)


def classify_shape(length: float, width: float, height: float, roundness: float, flat_top: float) -> str:
    """Coarse category from shape cues: bar, disc, ball, cylinder, box or irregular.

    roundness = hull area / min-area-rectangle area (1.0 box, π/4 disc); flat_top = share of
    points within 4 mm of the top height (high for flat tops, low for balls and hollow mugs).
    """
    if width <= 0:
        return "irregular"
    if length / width > 2.2:
        return "bar"
    if roundness < 0.70:
        return "irregular"
    round_ = roundness < 0.84
    if round_ and flat_top < 0.45 and 0.6 < height / max(width, 1e-6) < 1.4:
        return "ball"
    if height < 0.5 * width and height < 0.03:
        return "disc" if round_ else "box"
    if round_:
        return "cylinder" if flat_top >= 0.3 else "irregular"
    return "box"


def size_label(category: str, length: float, width: float, height: float) -> str:
    """small | medium | large from the geometric mean of the footprint and height."""
    g = float(np.cbrt(max(length * width * height, 0.0)))
    lo, hi = _SIZE_THRESHOLDS.get(category, _SIZE_THRESHOLDS["default"])
    return "small" if g < lo else ("large" if g > hi else "medium")


def interior_point(mask: np.ndarray) -> tuple[float, float]:
    """(u, v) of the mask pixel nearest its centroid (inside even for concave or ring shapes)."""
    v, u = np.nonzero(mask)
    if len(u) == 0:
        return 0.0, 0.0
    cu, cv = u.mean(), v.mean()
    k = int(np.argmin((u - cu) ** 2 + (v - cv) ** 2))
    return float(u[k]), float(v[k])


def measure(mask: np.ndarray, P: np.ndarray, heights: np.ndarray, rgb: np.ndarray,
            window: tuple[slice, slice] | None = None) -> dict[str, Any]:
    """Geometry, colour and shape attributes of one segment (JSON-friendly values).

    P: HxWx3 base-frame pointmap (NaN unknown); heights: HxW height above the table plane;
    window: optional (rows, cols) slices bounding the mask, to work on a crop (speed).
    """
    hgt, wid = mask.shape
    v0 = u0 = 0
    if window is not None:
        mask, P, heights, rgb = mask[window], P[window], heights[window], rgb[window]
        v0, u0 = window[0].start or 0, window[1].start or 0
    m = mask & np.isfinite(heights)
    pts = P[m]
    h = heights[m]
    u, v = interior_point(mask)
    u, v = u + u0, v + v0
    out: dict[str, Any] = {"pixels": int(mask.sum()), "point2d": (u / max(wid - 1, 1), v / max(hgt - 1, 1))}
    colour, cconf = name_colour(rgb[mask])
    out.update(colour=colour, colour_confidence=round(cconf, 3))
    if len(pts) < 3:
        out.update(category="irregular", size="small", centroid_base=[float("nan")] * 3, top_height=0.0,
                   bottom_height=0.0, extent=[0.0, 0.0, 0.0], yaw=0.0, roundness=0.0, flat_top=0.0,
                   graspable=False)
        return out
    top = float(np.quantile(h, 0.95))
    bottom = float(np.quantile(h, 0.05))
    centre, yaw, length, width, hull_area = min_area_rect(pts[:, :2])
    rect_area = length * width
    roundness = hull_area / rect_area if rect_area > 0 else 0.0
    flat_top = float(np.mean(h > top - 0.004))
    category = classify_shape(length, width, top, roundness, flat_top)
    out.update(category=category, size=size_label(category, length, width, top),
               centroid_base=[float(x) for x in pts.mean(axis=0)],
               footprint_centre=[float(centre[0]), float(centre[1])],
               top_height=top, bottom_height=bottom, extent=[length, width, top], yaw=yaw,
               roundness=round(roundness, 3), flat_top=round(flat_top, 3),
               graspable=bool(width <= GRASPABLE_WIDTH and length <= 0.25))
    return out
