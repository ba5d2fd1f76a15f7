"""Splitting touching objects of one colour, and merging the pieces of one object back.

Why two steps: touching objects of the same colour leave no colour edge and often no depth
jump, but where two convex objects meet the surface folds inwards (a valley: a ball against a
bar, a can leaning on a box). Cutting every valley also cuts objects that have valleys of their
own (a mug's inside, a duck's neck, a lego brick's studs), so the pieces are merged back when
one catalogue object explains their union about as well as the better piece is explained alone
(the catalogue is the robot's known vocabulary, see vocabulary.py). Two real objects merged
explain each other badly (a ball plus a bar is no catalogue object); two halves of a mug
explain a mug better than either half explains anything.

Simplified: a valley is measured on the height map along four image directions at two scales;
pieces are merged greedily, best pair first; only pieces of one original connected component
(no depth or colour break between them) are ever merged here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from .calibration import value
from .types import SceneObject

VALLEY_M = 0.006  # a point this far below the chord between neighbours on both sides is a fold
VALLEY_SCALES = (3, 6)  # chord half-lengths in pixels (~4 and ~9 mm at 512², 0.8 m)
# Merge when the union fits at least this share of the better piece's fit: low enough to join
# the halves of one object (a large duck's halves each look like a small duck), high enough to
# keep two objects of one colour apart.
MERGE_KEEP = value("MERGE_KEEP")


def valley_map(heights: np.ndarray, fg: np.ndarray, scales: tuple[int, ...] = VALLEY_SCALES,
               min_depth: float = VALLEY_M) -> np.ndarray:
    """HxW bool: foreground pixels in an inward fold or corner of the surface.

    The test is the second difference of the height along a line: the mean of the heights k
    pixels to either side minus the height here. Flat and sloped surfaces give 0, convex ones
    (balls, box edges) a negative value; the foot of a taller neighbour or the crease between
    two touching objects a positive one.
    """
    out = np.zeros(fg.shape, dtype=bool)
    rows, cols = np.flatnonzero(fg.any(axis=1)), np.flatnonzero(fg.any(axis=0))
    if len(rows) == 0:
        return out
    # Only the foreground's bounding box: beyond it the heights are NaN, as is the padding.
    win = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))
    h = np.where(fg[win], heights[win], np.nan)
    H, W = h.shape
    best = np.zeros((H, W))
    pad = max(scales)
    hp = np.pad(h, pad, constant_values=np.nan)
    for k in scales:
        for du, dv in ((1, 0), (0, 1), (1, 1), (1, -1)):
            a = hp[pad - k * dv:pad - k * dv + H, pad - k * du:pad - k * du + W]
            b = hp[pad + k * dv:pad + k * dv + H, pad + k * du:pad + k * du + W]
            depth = 0.5 * (a + b) - h
            np.fmax(best, depth, out=best)  # fmax skips NaN (no neighbour): best stays >= 0 there
    out[win] = fg[win] & (best > min_depth)
    return out


def split_at_valleys(labels: np.ndarray, fg: np.ndarray, valley: np.ndarray, min_pixels: int) -> np.ndarray:
    """Cut each segment along its valley pixels; return finer labels covering the same pixels.

    Valley pixels (and pieces too small to stand alone) go to the nearest piece of the same
    original segment, so the cut removes no pixels.
    """
    rows, cols = np.nonzero(labels.any(axis=1))[0], np.nonzero(labels.any(axis=0))[0]
    if len(rows) == 0:
        return labels
    win = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))  # only where segments are
    out = np.zeros_like(labels)
    out[win] = _split_window(labels[win], fg[win], valley[win], min_pixels)
    return out


def _split_window(labels: np.ndarray, fg: np.ndarray, valley: np.ndarray, min_pixels: int) -> np.ndarray:
    from scipy import ndimage  # here, not at import: scipy loads slowly, only surveys use it

    core = fg & ~valley & (labels > 0)
    pieces, n = ndimage.label(core)
    if n == 0:
        return labels
    # A piece belongs to one original segment (cores never cross a segment border: the original
    # segments are separated by unlabelled pixels or by different labels, so check and cut).
    pieces = pieces.astype(np.int64) * (int(labels.max()) + 1) + labels
    pieces[~core] = 0
    pieces = _compact(pieces)
    counts = np.bincount(pieces.ravel())
    small = counts < min_pixels
    small[0] = True
    pieces[small[pieces]] = 0
    # Fill unassigned foreground from the nearest piece of the same original segment.
    if (pieces == 0).any() and (pieces > 0).any():
        _, (iv, iu) = ndimage.distance_transform_edt(pieces == 0, return_indices=True)
        nearest = pieces[iv, iu]
        fill = (labels > 0) & (pieces == 0) & (labels[iv, iu] == labels)
        pieces[fill] = nearest[fill]
        orphan = (labels > 0) & (pieces == 0)  # no piece of its own segment nearby: keep as was
        if orphan.any():
            pieces[orphan] = labels[orphan] + int(pieces.max())
    return _compact(pieces)


def _compact(a: np.ndarray) -> np.ndarray:
    """Relabel to 1..n in order of value, keeping 0 as 0 (background)."""
    top = int(a.max()) if a.size else 0
    if a.size and int(a.min()) >= 0 and top <= 4 * a.size:
        # Each value's rank among the values present, from a table: no sort of the whole image.
        present = np.zeros(top + 1, dtype=bool)
        present[a.ravel()] = True
        rank = np.cumsum(present, dtype=np.int64) - (1 if present[0] else 0)
        return rank[a].astype(np.int32)
    uniq, inv = np.unique(a, return_inverse=True)
    out = inv.reshape(a.shape).astype(np.int32)
    return out if uniq[0] == 0 else out + 1


def adjacent_pairs(labels: np.ndarray, reach: int = 2) -> set[tuple[int, int]]:
    """Pairs (a < b) of labels that touch in the image (within `reach` pixels)."""
    pairs: set[tuple[int, int]] = set()
    for k in range(1, reach + 1):
        for a, b in ((labels[:, :-k], labels[:, k:]), (labels[:-k, :], labels[k:, :])):
            sel = (a != b) & (a > 0) & (b > 0)
            if sel.any():
                pa, pb = a[sel], b[sel]
                lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
                for x, y in np.unique(np.stack([lo, hi], 1), axis=0).tolist():
                    pairs.add((int(x), int(y)))
    return pairs


def _merge_within(sub: np.ndarray, ids: list[int], fit: Callable[[np.ndarray], float], keep: float,
                  apart: Callable[[np.ndarray, np.ndarray], bool] | None = None) -> None:
    """Greedy best-first merging of the pieces `ids` of one window, in place."""
    cache: dict[frozenset[int], float] = {}

    def score(group: frozenset[int]) -> float:
        if group not in cache:
            cache[group] = fit(np.isin(sub, list(group)))
        return cache[group]

    groups = {i: frozenset([i]) for i in ids}
    while True:
        best: tuple[float, int, int] | None = None
        for a, b in adjacent_pairs(sub):
            sa, sb = score(groups[a]), score(groups[b])
            gain = score(groups[a] | groups[b]) / max(max(sa, sb), 1e-6)
            if gain >= keep and (best is None or gain > best[0]) and not (apart and apart(sub == a, sub == b)):
                best = (gain, a, b)
        if best is None:
            return
        _, a, b = best
        sub[sub == b] = a
        groups[a] = groups[a] | groups[b]
        del groups[b]


def merge_by_fit(pieces: np.ndarray, parent: np.ndarray, fit: Callable[[np.ndarray, tuple[slice, slice]], float],
                 keep: float = MERGE_KEEP,
                 apart: Callable[[np.ndarray, np.ndarray, tuple[slice, slice]], bool] | None = None) -> np.ndarray:
    """Greedily merge touching pieces of one parent segment while a catalogue object explains the
    union at least `keep` × as well as the better piece alone; best merge first.

    fit(mask_in_window, window) -> 0..1 is the best catalogue fit of a mask given on the parent
    segment's bounding window (vocabulary.name_scores via features.measure).
    apart(mask_a, mask_b, window) -> True keeps two pieces apart whatever their fit (e.g.
    normals.faces_apart); None: fit alone decides.
    """
    from scipy import ndimage  # here, not at import: scipy loads slowly, only surveys use it

    labels = pieces.copy()
    H, W = parent.shape
    for k, box in enumerate(ndimage.find_objects(parent)):
        if box is None:
            continue
        win = (slice(max(box[0].start - 6, 0), min(box[0].stop + 6, H)),
               slice(max(box[1].start - 6, 0), min(box[1].stop + 6, W)))  # room for the support ring
        sub = np.where(parent[win] == k + 1, labels[win], 0)
        ids = [int(i) for i in np.unique(sub) if i > 0]
        if len(ids) < 2:
            continue
        def fit_in(mask: np.ndarray, win: tuple[slice, slice] = win) -> float:
            return fit(mask, win)

        def apart_in(ma: np.ndarray, mb: np.ndarray, win: tuple[slice, slice] = win) -> bool:
            return apart is not None and apart(ma, mb, win)

        _merge_within(sub, ids, fit_in, keep, apart_in if apart is not None else None)
        region = parent[win] == k + 1
        labels[win][region] = sub[region]
    return _compact(labels)


def same_object(a: SceneObject, b: SceneObject) -> bool:
    """Two touching segments with one catalogue name and one seen colour are pieces of one
    object cut at a fold (scene names are unique, and a real pair of twins touching is grasped
    as one region at worst); asking "A or A?" would not help."""
    if a.mask is None or b.mask is None or a.name != b.name or not a.attributes.get("name_scores"):
        return False
    if a.attributes.get("seen_colour", a.attributes.get("colour")) != \
            b.attributes.get("seen_colour", b.attributes.get("colour")):
        return False
    from scipy import ndimage  # here, not at import: the node catalogue (and verify) loads this module

    return bool((ndimage.binary_dilation(a.mask, iterations=2) & b.mask).any())


def joined(obj: SceneObject, pieces: list[SceneObject]) -> SceneObject:
    """`obj` with the pieces' masks added (same id, so relations and tracking still refer to it)."""
    mask = obj.mask.copy() if obj.mask is not None else None
    for p in pieces:
        if mask is not None and p.mask is not None:
            mask |= p.mask
    return replace(obj, mask=mask, attributes={**obj.attributes, "joined": [p.id for p in pieces]})
