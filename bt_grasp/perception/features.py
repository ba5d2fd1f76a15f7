"""Per-segment geometry: centroid, footprint rectangle, height, shape cues, size and category.

Why from the visible points only: the same code must run on the simulator's masks and on a real
camera's segments. Simplified: a single view sees tops and some sides, so occluded objects look
smaller; the footprint is the minimum-area rectangle of the visible points projected on the
base xy plane (the table is assumed horizontal in the base frame for the footprint, heights come
from the fitted plane).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .amodal import footprint_room
from .calibration import value
from .colour import name_colour
from .geometry import cross3, min_area_rect, row_norms
from .lexicon import Vocabulary
from .outline import edge_roundness
from .types import Measured
from .vocabulary import belief, best_name, catalogue_colour, name_scores

# How sharply the free edge's circle-vs-lines margin (outline.edge_roundness) turns into p_round.
EDGE_SCALE = value("EDGE_SCALE")
# A lying cylinder keeps at least about this share of its points on one circle; other nouns do not.
LYING_CYLINDER_SHARE = value("LYING_CYLINDER_SHARE")
MIN_CYLINDER_R = 0.015  # the thinnest catalogue can is 4 cm across
GRASPABLE_WIDTH = 0.08  # narrowest footprint side an 85 mm gripper can still close across (+noise)


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


def interior_point(mask: np.ndarray) -> tuple[float, float]:
    """(u, v) of the mask pixel nearest its centroid (inside even for concave or ring shapes)."""
    v, u = np.nonzero(mask)
    if len(u) == 0:
        return 0.0, 0.0
    cu, cv = u.mean(), v.mean()
    k = int(np.argmin((u - cu) ** 2 + (v - cv) ** 2))
    return float(u[k]), float(v[k])


def _pad(window: tuple[slice, slice], shape: tuple[int, ...], pad: int) -> tuple[slice, slice]:
    r, c = window
    return (slice(max((r.start or 0) - pad, 0), min((r.stop or shape[0]) + pad, shape[0])),
            slice(max((c.start or 0) - pad, 0), min((c.stop or shape[1]) + pad, shape[1])))


def support_heights(mask: np.ndarray, heights: np.ndarray, ring_px: int = 4) -> tuple[float, float]:
    """(low, high) estimate of the height the object rests on, from a ring just outside its mask.

    Why a ring: from above, the support is hidden under the object, but around an object lying
    on another the supporter's top shows; where the table shows too the support is uncertain,
    so both a low (10 %) and a typical (60 %) ring height are returned.
    """
    from scipy import ndimage  # here, not at import: scipy loads slowly, only surveys use it

    ring = ndimage.binary_dilation(mask, iterations=ring_px) & ~mask
    h = heights[ring]
    h = h[np.isfinite(h)]
    if len(h) == 0:
        return 0.0, 0.0
    lo, hi = np.quantile(h, [0.10, 0.60])
    return max(float(lo), 0.0), max(float(hi), 0.0)


def shape_beliefs(roundness: float, flat_top: float) -> tuple[float, float]:
    """(p_round, p_flat): soft beliefs from the outline and top-face cues.

    Boxes and lying cylinders fill their rectangle (roundness ≥ 0.9), discs and balls fill π/4
    of it (≈ 0.8); flat tops put most points within 4 mm of the top (≥ 0.8), balls and lying
    cylinders about a third.
    """
    return belief(roundness, 0.865, -0.02), belief(flat_top, 0.6, 0.08)


def fit_sphere(pts: np.ndarray, max_points: int = 400) -> tuple[float, float]:
    """(radius, rms residual) of the least-squares sphere through 3D points (0, inf if degenerate).

    Algebraic fit |p|² = 2c·p + k, solved linearly; a ball's visible cap fits to ~1 mm, a box or
    duck does not.
    """
    if len(pts) < 20:
        return 0.0, float("inf")
    if len(pts) > max_points:
        pts = pts[np.linspace(0, len(pts) - 1, max_points).astype(int)]
    A = np.hstack([2 * pts, np.ones((len(pts), 1))])
    b = (pts ** 2).sum(1)
    sol, *_ = np.linalg.lstsq(A, b, rcond=None)
    c, k = sol[:3], sol[3]
    r2 = k + c @ c
    if r2 <= 0:
        return 0.0, float("inf")
    r = float(np.sqrt(r2))
    rms = float(np.sqrt(np.mean((row_norms(pts - c) - r) ** 2)))
    return r, rms


def planar_faces(pts: np.ndarray, tol: float = 0.002, iterations: int = 60, max_points: int = 300,
                 seed: int = 0, planes: int = 3, rectangles: bool = True
                 ) -> tuple[float, list[list[float]], list[float]]:
    """(share of points on the best `planes` planes, [[share, long, short, fill] per plane],
    extents of all points in the first face's frame, longest first).

    Why: boxes and leaning blocks show one to three flat faces (three planes cover most points;
    each face's in-plane rectangle is two of the object's dimensions whatever its tilt), while
    balls, ducks and bears are curved all over. A block's own axes are its first face's rectangle
    sides and normal, so the extents in that frame are its dimensions (where seen); principal
    axes are not (a leaning cube showing two faces spreads along a face diagonal: 6 cm for 4.5).
    """
    if len(pts) < 20:
        return 0.0, [], []
    sub = pts[np.linspace(0, len(pts) - 1, max_points).astype(int)] if len(pts) > max_points else pts
    rng = np.random.default_rng(seed)
    covered = np.zeros(len(sub), dtype=bool)
    faces: list[list[float]] = []
    frame_extents: list[float] = []
    for _ in range(planes):
        rest = np.flatnonzero(~covered)
        if len(rest) < 10:
            break
        idx = rest[rng.integers(0, len(rest), size=(iterations, 3))]
        a, b, c = sub[idx[:, 0]], sub[idx[:, 1]], sub[idx[:, 2]]
        n = cross3(b - a, c - a)
        norm = row_norms(n)
        ok = norm > 1e-9
        if not ok.any():
            break
        n, a = n[ok] / norm[ok, None], a[ok]
        d = np.abs(sub[rest] @ n.T - np.einsum("ik,ik->i", a, n)[None, :]) < tol
        best = int(np.argmax(d.sum(axis=0)))
        covered[rest[d[:, best]]] = True
        if not rectangles:
            continue
        on = np.abs((pts - a[best]) @ n[best]) < tol  # the face's points among all points
        if on.sum() >= 10:
            e1 = cross3(n[best], [1.0, 0.0, 0.0] if abs(n[best][0]) < 0.9 else [0.0, 1.0, 0.0])
            e1 /= np.linalg.norm(e1)
            e2 = cross3(n[best], e1)
            q = pts[on][:: max(1, int(on.sum()) // 400)] - a[best]
            _, yaw, length, width, hull = min_area_rect(np.stack([q @ e1, q @ e2], axis=1))
            fill = hull / (length * width) if length * width > 0 else 0.0  # 1 rectangle, π/4 disc
            faces.append([float(on.mean()), length, width, fill])
            if not frame_extents:
                r1 = np.cos(yaw) * e1 + np.sin(yaw) * e2
                frame_extents = extents_along(pts, np.stack([r1, cross3(n[best], r1), n[best]], axis=1))
    return float(covered.mean()), faces, frame_extents


def cross_curvature(pts: np.ndarray, yaw: float, width: float, max_points: int = 400,
                    tol: float = 0.0015) -> float:
    """Belief (0..1) that the top is a lying cylinder: most cross-sections are one circle.

    The points, seen along the footprint's long axis, are fitted by one circle (linear algebraic
    fit in the across/height plane), refitted on its inliers (within `tol`) a few times, because
    an oblique view also shows an end cap, whose points fill the circle rather than lie on it.
    A lying can keeps most points on a circle of radius near half the footprint width (share:
    LYING_CYLINDER_SHARE); a box
    needs a huge or ill-fitting circle, and a ball's cross-sections differ along its length.
    """
    if len(pts) < 30 or width <= 0:
        return 0.0
    if len(pts) > max_points:
        pts = pts[np.linspace(0, len(pts) - 1, max_points).astype(int)]
    c, s_ = np.cos(yaw), np.sin(yaw)
    xy = pts[:, :2] - pts[:, :2].mean(axis=0)
    ss = -xy[:, 0] * s_ + xy[:, 1] * c
    hh = pts[:, 2] - pts[:, 2].mean()
    keep = np.ones(len(ss), dtype=bool)
    r = 0.0
    for _ in range(4):
        A = np.stack([2 * ss[keep], 2 * hh[keep], np.ones(int(keep.sum()))], axis=1)
        sol, *_ = np.linalg.lstsq(A, ss[keep] ** 2 + hh[keep] ** 2, rcond=None)
        s0, z0, k = sol
        r2 = k + s0 ** 2 + z0 ** 2
        if r2 <= 0 or z0 > 0:  # the centre must lie below the visible surface
            return 0.0
        r = float(np.sqrt(r2))
        keep = np.abs(np.hypot(ss - s0, hh - z0) - r) < tol
        if keep.sum() < 20:
            return 0.0
    share = float(keep.mean())
    if r < MIN_CYLINDER_R:  # no catalogue cylinder is this thin: a narrow strip's rounded edge
        return 0.0
    ratio = r / (width / 2.0)
    return float(np.exp(-0.5 * (np.log(ratio) / 0.3) ** 2)) * belief(share, LYING_CYLINDER_SHARE, 0.05)


def principal_extents(pts: np.ndarray, max_points: int = 600) -> list[float]:
    """Extents (2nd-98th percentile) of 3D points along their principal axes, longest first."""
    if len(pts) < 10:
        return []
    if len(pts) > max_points:
        pts = pts[np.linspace(0, len(pts) - 1, max_points).astype(int)]
    q = pts - pts.mean(axis=0)
    _, vecs = np.linalg.eigh(q.T @ q)
    return extents_along(pts, vecs)


def extents_along(pts: np.ndarray, axes: np.ndarray) -> list[float]:
    """Extents (2nd-98th percentile) of 3D points along the columns of `axes`, longest first."""
    lo, hi = np.quantile(pts @ axes, [0.02, 0.98], axis=0)
    return sorted((float(e) for e in hi - lo), reverse=True)


class _Shape(NamedTuple):
    """What measure derives from a segment's pixels alone (not from its colour or occlusion)."""

    bottom: float
    top: float
    rect: tuple[np.ndarray, float, float, float, float]  # min_area_rect of the outline
    roundness: float  # hull / rectangle area
    flat_top: float
    support: tuple[float, float]  # support_heights
    planes: tuple[float, list[list[float]], list[float]]  # planar_faces
    p_cyl: float
    sphere: tuple[float, float]  # fit_sphere
    obb: list[float]
    centroid: list[float]


# Segment geometry by pixel set, for one frame's pointmap and heights. Why: a survey measures
# the same pixels several times (a piece while splitting, again while re-joining fragments, and
# as a final segment), with another colour or occlusion flag but the same points.
ShapeMemo = dict[tuple[Any, ...], Any]


def _mask_key(mask: np.ndarray, v0: int, u0: int) -> tuple[Any, ...]:
    """The mask's pixel set in image coordinates, whatever window it was cut from."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    tight = mask[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    return v0 + int(rows[0]), u0 + int(cols[0]), tight.shape, np.packbits(tight).tobytes()


def _shape(mask: np.ndarray, m: np.ndarray, P: np.ndarray, heights: np.ndarray, pts: np.ndarray) -> _Shape:
    """_Shape of a cropped mask; m: its pixels with a height, pts: their points."""
    from scipy import ndimage  # here, not at import: scipy loads slowly, only surveys use it

    h = heights[m]
    bottom, top = (float(x) for x in np.quantile(h, [0.05, 0.95]))
    # The outline's hull only needs the outline: boundary pixels of large segments (speed).
    rim = m & ~ndimage.binary_erosion(m) if len(pts) > 400 else m
    rect = min_area_rect(P[rim][:, :2])
    rect_area = rect[2] * rect[3]
    flat_top = float(np.mean(h > top - 0.004))
    tilted = flat_top < 0.5 and top - bottom > 0.02
    return _Shape(bottom, top, rect, rect[4] / rect_area if rect_area > 0 else 0.0, flat_top,
                  support_heights(mask, heights),
                  planar_faces(pts, rectangles=tilted),  # face rectangles matter for leaning objects
                  cross_curvature(pts, rect[1], rect[3]), fit_sphere(pts),
                  principal_extents(pts) if tilted else [],  # read for leaning segments only
                  [float(x) for x in pts.mean(axis=0)])


def _cues(mask: np.ndarray, P: np.ndarray, heights: np.ndarray, v0: int, u0: int, occluded: bool,
          memo: ShapeMemo) -> tuple[_Shape, dict[str, Any]] | None:
    """(shape, the measurements name_scores reads) of a mask cut at (v0, u0); None under 3 points."""
    m = mask & np.isfinite(heights)
    if np.count_nonzero(m) < 3:
        return None
    key = _mask_key(mask, v0, u0)
    if key not in memo:
        memo[key] = _shape(mask, m, P, heights, P[m])
    g: _Shape = memo[key]
    bottom, top, (_, _, length, width, _) = g.bottom, g.top, g.rect
    sup_lo, sup_hi = g.support
    sup_hi = max(min(sup_hi, bottom), sup_lo)  # the support cannot be above the lowest visible part
    p_round, p_flat = shape_beliefs(g.roundness, g.flat_top)
    if occluded:  # a cut outline's fill says little about roundness; its own free edge says more
        if ("edge", key) not in memo:
            memo["edge", key] = edge_roundness(mask, heights, P)
        edge = memo["edge", key]
        if edge is None:
            p_round = 0.5 + 0.4 * (p_round - 0.5)
        else:
            p_round = min(max(belief(edge, 0.0, EDGE_SCALE), 0.1), 0.9)
    tilted = g.flat_top < 0.5 and top - bottom > 0.02
    planar, faces, face_frame = g.planes
    radius, rms = g.sphere
    p_sphere = belief(rms, 0.0009, -0.0002) if 0.012 < radius < 0.06 else 0.0
    if p_sphere > 0.5:  # a ball's own height is its diameter, even on a support the ring missed
        sup_hi = max(sup_hi, min(top - 2.0 * radius, bottom))  # (a ball on a hidden post)
    return g, {"long": length, "short": width, "height_lo": max(top - bottom, 0.3 * top),
               "height_firm": top - sup_hi, "height_hi": top - sup_lo, "p_round": p_round, "p_flat": p_flat,
               "p_sphere": p_sphere, "p_planar": belief(planar, 0.93, 0.02), "faces": faces, "p_cyl": g.p_cyl,
               "sphere_r": radius if p_sphere > 0.5 else 0.0, "occluded": float(occluded),
               "face_frame": face_frame, "obb": g.obb, "tilted": float(tilted)}


def _crop(window: tuple[slice, slice] | None, shape: tuple[int, ...]) -> tuple[tuple[slice, slice], int, int]:
    """(padded window, its top row, its left column); the whole image for None."""
    if window is None:
        return (slice(None), slice(None)), 0, 0
    window = _pad(window, shape, 6)
    return window, window[0].start or 0, window[1].start or 0


def measure(mask: np.ndarray, P: np.ndarray, heights: np.ndarray, rgb: np.ndarray,
            window: tuple[slice, slice] | None = None, occluded: bool = False, brightness: float = 1.0,
            colour: str | None = None, amodal: bool = False, vocab: Vocabulary | None = None,
            memo: ShapeMemo | None = None) -> Measured:
    """Geometry, colour, shape and vocabulary names of one segment.

    P: HxWx3 base-frame pointmap (NaN unknown); heights: HxW height above the table plane;
    window: optional (rows, cols) slices bounding the mask, to work on a crop (speed);
    occluded: a nearer object borders the segment, so its footprint may be cut short;
    brightness: the scene's light for colour naming (colour.scene_brightness);
    colour: the palette name when already known (skips colour naming);
    amodal: for an occluded segment, measure how far it could continue out of sight (amodal.py);
    vocab: the words to name it in (lexicon.py; None: the shipped default);
    memo: geometry already measured on this frame's P and heights (ShapeMemo), filled as it goes.
    """
    hgt, wid = mask.shape
    whole = (mask, P, heights)  # the room an occluded object could take is searched beyond its window
    win, v0, u0 = _crop(window, mask.shape)
    mask, P, heights, rgb = mask[win], P[win], heights[win], rgb[win]
    u, v = interior_point(mask)
    u, v = u + u0, v + v0
    pixels, point2d = int(mask.sum()), (u / max(wid - 1, 1), v / max(hgt - 1, 1))
    cconf = 1.0
    if colour is None:
        colour, cconf = name_colour(rgb[mask], brightness)
    cues = _cues(mask, P, heights, v0, u0, occluded, {} if memo is None else memo)
    if cues is None:
        return Measured(pixels, point2d, colour, round(cconf, 3), category="irregular", shape="irregular",
                        size="small", centroid_base=[float("nan")] * 3, top_height=0.0, bottom_height=0.0,
                        extent=[0.0, 0.0, 0.0], yaw=0.0, roundness=0.0, flat_top=0.0, graspable=False)
    g, m_fit = cues
    bottom, top, (centre, yaw, length, width, _) = g.bottom, g.top, g.rect
    scores = name_scores(m_fit, colour, vocab)
    hidden = None
    if occluded and amodal:  # what it could be with the rest out of sight: evidence for grounding only
        room = footprint_room(*whole, top, centre, yaw)
        hidden = name_scores({**m_fit, "room_long": room[0], "room_short": room[1]}, colour, vocab)
    noun, size, _ = best_name(scores)
    radius, rms = g.sphere
    # The colour word is the vocabulary's (a brown-looking duck is "purple"); the camera's is kept.
    return Measured(pixels, point2d, catalogue_colour(noun, colour, vocab), round(cconf, 3), category=noun,
                    shape=classify_shape(length, width, top, g.roundness, g.flat_top), size=size,
                    centroid_base=list(g.centroid), top_height=top, bottom_height=bottom,
                    extent=[length, width, top], yaw=yaw, roundness=round(g.roundness, 3),
                    flat_top=round(g.flat_top, 3), graspable=bool(width <= GRASPABLE_WIDTH and length <= 0.25),
                    name_scores=scores, seen_colour=colour, footprint_centre=[float(centre[0]), float(centre[1])],
                    support_height=round(g.support[0], 4), sphere_fit=[round(radius, 4), round(rms, 5)],
                    planar_share=round(g.planes[0], 3), lying_cylinder=round(g.p_cyl, 3), amodal_scores=hidden)


def best_catalogue_fit(mask: np.ndarray, P: np.ndarray, heights: np.ndarray,
                       occluded: bool, colour: str, window: tuple[slice, slice] | None = None,
                       vocab: Vocabulary | None = None, memo: ShapeMemo | None = None) -> float:
    """How well the best vocabulary entry explains this mask (0..1): the test for joining pieces.

    measure's name_scores, without the rest of its record (the colour is given)."""
    win, v0, u0 = _crop(window, mask.shape)
    cues = _cues(mask[win], P[win], heights[win], v0, u0, occluded, {} if memo is None else memo)
    return 0.0 if cues is None else max(best_name(name_scores(cues[1], colour, vocab))[2], 0.0)
