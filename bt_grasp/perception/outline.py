"""A partly hidden segment's own outline: is it arcs of a circle or straight edges?

Why: a segment cut by a nearer object loses the corners that make a box's outline fill its
rectangle, so the fill ratio (`features.shape_beliefs`) calls a cut box round, and a box
fragment fits "puck" or "can". Only the part of the outline that is the object's own edge (not
where something higher hides it) says what the object is: the share of that edge on one circle
of a catalogue radius, minus its share on two straight lines, is positive for upright cans and
pucks, negative for boxes, cubes and bars (medians in calibration.py, EDGE_SCALE).
"""

from __future__ import annotations

import numpy as np

from .geometry import row_norms

CUT_M = 0.005  # an outside neighbour this much higher hides the segment there: a cut, not an edge
TOL_M = 0.0015  # an edge point within this of the circle or line lies on it
RADII_M = (0.012, 0.045)  # the catalogue's round things, from a small ball to a large can
MIN_POINTS = 15


def free_edge(mask: np.ndarray, heights: np.ndarray) -> np.ndarray:
    """Boundary pixels of `mask` with nothing higher (by CUT_M) within 2 pixels outside it."""
    from scipy import ndimage  # here, not at import: scipy loads slowly, only surveys use it

    rim = mask & ~ndimage.binary_erosion(mask)
    h = np.where(np.isfinite(heights), heights, -1.0)
    around = ndimage.maximum_filter(np.where(mask, -1.0, h), size=5)
    return rim & ~(around > h + CUT_M)


def _circle_share(xy: np.ndarray, rng: np.random.Generator, tries: int) -> float:
    """Largest share of points within TOL_M of a circle through 3 of them, radius in RADII_M."""
    a, b, c = (xy[rng.integers(0, len(xy), tries)] for _ in range(3))
    rows = np.stack([2 * (b - a), 2 * (c - a)], axis=1)  # tries x 2 x 2
    rhs = np.stack([(b * b).sum(1) - (a * a).sum(1), (c * c).sum(1) - (a * a).sum(1)], axis=1)
    ok = np.abs(np.linalg.det(rows)) > 1e-12
    if not ok.any():
        return 0.0
    centre = np.linalg.solve(rows[ok], rhs[ok][:, :, None])[:, :, 0]
    radius = row_norms(a[ok] - centre)
    fits = (radius >= RADII_M[0]) & (radius <= RADII_M[1])
    if not fits.any():
        return 0.0
    # |xy - centre| per (circle, point), by components: numpy reduces a last axis of 2 slowly,
    # and x² + y² summed in that order is the value linalg.norm gives.
    cf = centre[fits]
    dx, dy = xy[None, :, 0] - cf[:, 0, None], xy[None, :, 1] - cf[:, 1, None]
    d = np.sqrt(dx * dx + dy * dy)
    return float((np.abs(d - radius[fits][:, None]) < TOL_M).mean(axis=1).max())


def _lines_share(xy: np.ndarray, rng: np.random.Generator, tries: int, lines: int = 2) -> float:
    """Share of points within TOL_M of `lines` straight lines, found greedily."""
    covered = np.zeros(len(xy), dtype=bool)
    for _ in range(lines):
        rest = np.flatnonzero(~covered)
        if len(rest) < 2:
            break
        a, b = xy[rest[rng.integers(0, len(rest), tries)]], xy[rest[rng.integers(0, len(rest), tries)]]
        d = b - a
        length = row_norms(d)
        ok = length > 1e-6
        if not ok.any():
            break
        normal = np.stack([-d[ok, 1], d[ok, 0]], axis=1) / length[ok, None]
        p, q = xy[rest], a[ok]  # signed distances by components, as in _circle_share
        on = np.abs((p[None, :, 0] - q[:, 0, None]) * normal[:, 0, None]
                    + (p[None, :, 1] - q[:, 1, None]) * normal[:, 1, None]) < TOL_M
        covered[rest[on[int(np.argmax(on.sum(axis=1)))]]] = True
    return float(covered.mean())


def edge_roundness(mask: np.ndarray, heights: np.ndarray, P: np.ndarray, tries: int = 80,
                   max_points: int = 300) -> float | None:
    """Share of the free edge on a circle minus its share on two lines (-1..1; > 0 round), or None
    when under MIN_POINTS edge pixels are free (the outline says nothing)."""
    edge = free_edge(mask, heights) & np.isfinite(P[..., 0])
    xy = P[edge][:, :2]
    if len(xy) < MIN_POINTS:
        return None
    if len(xy) > max_points:
        xy = xy[np.linspace(0, len(xy) - 1, max_points).astype(int)]
    rng = np.random.default_rng(0)  # deterministic: the same frame is always named the same
    return _circle_share(xy, rng, tries) - _lines_share(xy, rng, tries)
