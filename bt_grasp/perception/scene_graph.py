"""Binary relations between perceived objects (the scene graph's edges).

Conventions (documented because "left" depends on the viewer):
- left_of / right_of / in_front_of / behind are in the IMAGE as the camera sees it: A left_of B
  when A's interior point is further left (smaller u); A in_front_of B when A is lower in the
  image (larger v), i.e. nearer the camera's bottom edge — for a camera looking over the robot's
  shoulder that is nearer the robot. Only the dominant axis of the offset is used, and offsets
  under 2 % of the image are not related.
- on_top_of(A, B): A is off the table (its lowest visible point > 1.5 cm), its lowest visible
  height is within 1.5 cm of B's top, and the two touch in the base-frame xy plane.
- partially_occluded_by(A, B): along the shared image boundary B is nearer the camera than A by
  > 1 cm on enough pixels (depth adjacency), or B lies on top of A.
- next_to(A, B): smallest 3D distance between the visible points < 3 cm and neither is on top of
  the other (symmetric).
"""

from __future__ import annotations

import numpy as np

from .geometry import unique_rows
from .types import SceneObject

NEXT_TO_M = 0.03
DIR_MARGIN = 0.02
OCCLUSION_STEP_M = 0.01


def directional(a: SceneObject, b: SceneObject) -> str | None:
    """left_of / right_of / in_front_of / behind of A relative to B in the image, or None."""
    du = a.point2d[0] - b.point2d[0]
    dv = a.point2d[1] - b.point2d[1]
    if max(abs(du), abs(dv)) < DIR_MARGIN:
        return None
    if abs(du) >= abs(dv):
        return "left_of" if du < 0 else "right_of"
    return "in_front_of" if dv > 0 else "behind"


def occlusion_counts(labels: np.ndarray, depth: np.ndarray, step: float = OCCLUSION_STEP_M,
                     reach: int = 2) -> dict[tuple[int, int], int]:
    """{(a, b): n} boundary pixel pairs where label b is nearer the camera than label a by > step.

    Pairs are taken between pixels up to `reach` apart horizontally or vertically, so a one or two
    pixel unlabelled seam between segments does not hide the boundary.
    """
    rows, cols = np.nonzero(labels.any(axis=1))[0], np.nonzero(labels.any(axis=0))[0]
    if len(rows) == 0:
        return {}
    win = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))  # only where labels are
    labels = labels[win]
    d = np.where(depth[win] > 0, depth[win], np.inf).astype(np.float64)
    counts: dict[tuple[int, int], int] = {}
    for k in range(1, reach + 1):
        for la, lb, da, db in ((labels[:, :-k], labels[:, k:], d[:, :-k], d[:, k:]),
                               (labels[:-k, :], labels[k:, :], d[:-k, :], d[k:, :])):
            sel = (la != lb) & (la > 0) & (lb > 0)
            if not sel.any():
                continue
            a, b, x, y = la[sel], lb[sel], da[sel], db[sel]
            # b nearer than a -> b occludes a; and symmetric case.
            for occluded, occluder, dz in ((a, b, x - y), (b, a, y - x)):
                hit = dz > step
                if hit.any():
                    pairs, n = unique_rows(np.stack([occluded[hit], occluder[hit]], 1), return_counts=True)
                    for (p, q), c in zip(pairs.tolist(), n.tolist(), strict=True):
                        counts[(p, q)] = counts.get((p, q), 0) + c
    return counts


def _apart(box_a: tuple[np.ndarray, np.ndarray], box_b: tuple[np.ndarray, np.ndarray], reach: float) -> bool:
    """Are two point sets' bounding boxes more than `reach` apart (so no two points are within it)?"""
    gap = np.maximum(np.maximum(box_b[0] - box_a[1], box_a[0] - box_b[1]), 0.0)
    return float(np.sqrt(gap @ gap)) > reach + 1e-6  # the margin covers the rounding of the bound


def build_relations(objects: list[SceneObject], labels: np.ndarray, depth: np.ndarray,
                    points: dict[int, np.ndarray], heights: dict[int, np.ndarray],
                    min_occlusion_px: int | None = None,
                    counts: dict[tuple[int, int], int] | None = None) -> list[tuple[int, str, int]]:
    """All relations between `objects`.

    labels: HxW object ids (0 = none); points: id -> Nx3 base-frame points (may be subsampled);
    heights: id -> N heights above the table for the same points; counts: occlusion_counts(labels,
    depth) when already counted (labels is then read for its size only).
    """
    from scipy.spatial import cKDTree  # here, not at import: scipy loads slowly, only surveys use it

    rel: list[tuple[int, str, int]] = []
    ids = [o.id for o in objects]
    for obj_a in objects:
        for obj_b in objects:
            if obj_a.id != obj_b.id and (r := directional(obj_a, obj_b)):
                rel.append((obj_a.id, r, obj_b.id))
    trees = {i: cKDTree(points[i][:, :2]) for i in ids if len(points[i])}
    trees3 = {i: cKDTree(points[i]) for i in ids if len(points[i])}
    # Bounding boxes: pairs farther apart than a query's reach need no tree query (it finds nothing).
    box = {i: (points[i].min(axis=0), points[i].max(axis=0)) for i in trees3}
    box2 = {i: (lo[:2], hi[:2]) for i, (lo, hi) in box.items()}
    on_top: set[tuple[int, int]] = set()
    # Each object's low and top height once (not once per pair).
    low = {i: float(np.quantile(heights[i], 0.05)) for i in ids if i in trees and len(heights[i])}
    top = {i: float(np.quantile(heights[i], 0.95)) for i in low}
    for a in ids:
        if a not in low:
            continue
        a_low = low[a]
        if a_low < 0.015:
            continue
        for b in ids:
            if b == a or b not in top:
                continue
            b_top = top[b]
            if abs(a_low - b_top) > 0.015 or b_top < 0.01 or _apart(box2[a], box2[b], 0.01):
                continue
            dist, _ = trees[b].query(points[a][:, :2], k=1, distance_upper_bound=0.01)
            if np.isfinite(dist).any():
                on_top.add((a, b))
                rel.append((a, "on_top_of", b))
    h = labels.shape[0]
    min_px = min_occlusion_px if min_occlusion_px is not None else max(3, h // 128)
    counts = occlusion_counts(labels, depth) if counts is None else counts
    occluded = {k for k, n in counts.items() if n >= min_px}
    occluded |= {(b, a) for a, b in on_top}
    rel.extend((a, "partially_occluded_by", b) for a, b in sorted(occluded) if a in trees3 and b in trees3)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            if a not in trees3 or b not in trees3 or (a, b) in on_top or (b, a) in on_top \
                    or _apart(box[a], box[b], NEXT_TO_M):
                continue
            dist, _ = trees3[b].query(points[a], k=1, distance_upper_bound=NEXT_TO_M)
            if np.isfinite(dist).any():
                rel.extend([(a, "next_to", b), (b, "next_to", a)])
    return rel
