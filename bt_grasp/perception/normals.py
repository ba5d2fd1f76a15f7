"""Surface normals, a depth-edge map and a face test from one depth image, for segmentation.

Why: touching objects of one colour leave no colour edge, and where their surfaces meet there is
often no valley either (a box beside a lower box, a can's tilted top against a box's flat one).
What does change there is the surface itself: its height jumps by more than one surface explains
(a step), or its orientation turns abruptly (a crease). Both are measured from the pointmap,
which the camera intrinsics and pose already give, so the cue needs no learned model.

- Normals: the cross product of the pointmap's differences k pixels to either side, across
  and down the image (central differences at one scale); undefined where either span crosses a
  depth jump or leaves the foreground.
- Steps: the pointmap's second difference along a line (the mean of the points k pixels to
  either side against the point here), along the normal, above `step` metres: a plane, tilted or
  not, gives 0; at a jump between two surfaces the lower side gives half the jump.
- Creases: the normals k pixels to either side of a pixel differ by more than `angle` degrees.
- Only inward folds count (the neighbours above the surface; the normals turning towards each
  other), as where two objects meet: an object's own rims and edges fold outwards. Cutting at
  both kinds split boxes at their rims and the basket at its walls, pieces no merge joined again.
- Faces apart: two pieces whose main flat faces are parallel and face one way but lie at two
  heights are two objects, since a convex object shows each of its faces once (a veto on the
  merge-back of split_merge.py).

Both off by default (GeometricPerceiver(depth_edges=True, face_veto=True)). The edges do cut
touching objects apart where valleys do not, but most joined objects had already been cut apart
by valleys and were merged back because one catalogue object explains their union; the edges'
extra cuts leave some pieces apart that belong together, and add no recall. The face veto rarely
applies: the pieces of two joined objects seldom each show a flat face (docs/perception.md).

Simplified: one scale, four image directions, one threshold for every depth (a fixed step
in metres, not in pixel footprints).
"""

from __future__ import annotations

import numpy as np

from .calibration import value

# A 4 mm second difference is an 8 mm step, under the 12 mm that breaks a pixel link and the
# 12 mm a valley needs; 40 degrees is far above the few degrees depth noise turns a normal.
EDGE_STEP_M = value("EDGE_STEP_M")
EDGE_ANGLE_DEG = value("EDGE_ANGLE_DEG")
# Two faces more than this apart in height are two objects: above a brick's studs (2 mm).
FACE_STEP_M = value("FACE_STEP_M")
FACE_MIN_PX = 60  # a face smaller than ~2 cm² (at 0.8 m, 512²) is too noisy a plane
FACE_FLAT_DEG = 15.0  # normals within this of the face's are on it (depth noise tilts a few degrees)
_DIRS = ((1, 0), (0, 1), (1, 1), (1, -1))


def _shifted(a: np.ndarray, k: int, du: int, dv: int) -> tuple[np.ndarray, np.ndarray]:
    """(a at u - k·du, v - k·dv; a at u + k·du, v + k·dv) for every pixel, NaN outside the image."""
    H, W = a.shape[:2]
    pad = ((k, k), (k, k)) + ((0, 0),) * (a.ndim - 2)
    ap = np.pad(a, pad, constant_values=np.nan)
    lo = ap[k - k * dv:k - k * dv + H, k - k * du:k - k * du + W]
    hi = ap[k + k * dv:k + k * dv + H, k + k * du:k + k * du + W]
    return lo, hi


def surface_normals(P: np.ndarray, fg: np.ndarray, k: int = 2, max_gap: float = 0.01) -> np.ndarray:
    """HxWx3 unit normals (base frame, pointing up towards the camera side) of the pointmap `P`
    on the foreground `fg`; NaN where a difference span leaves `fg` or is longer than
    `max_gap` metres per pixel of span (it crosses a depth jump)."""
    Q = np.where(fg[..., None], P, np.nan)
    left, right = _shifted(Q, k, 1, 0)
    up, down = _shifted(Q, k, 0, 1)
    du, dv = right - left, down - up
    with np.errstate(invalid="ignore"):
        bad = (np.linalg.norm(du, axis=-1) > 2 * k * max_gap) | (np.linalg.norm(dv, axis=-1) > 2 * k * max_gap)
    n = np.cross(du, dv)
    with np.errstate(invalid="ignore", divide="ignore"):
        n /= np.linalg.norm(n, axis=-1, keepdims=True)
        n = np.where((n[..., 2:3] < 0), -n, n)  # seen from above: the normal faces up
    n[bad] = np.nan
    return n


def depth_edges(P: np.ndarray, fg: np.ndarray, *, k: int = 2, step: float = EDGE_STEP_M, angle: float = EDGE_ANGLE_DEG,
                normals: np.ndarray | None = None) -> np.ndarray:
    """HxW bool: foreground pixels where the surface folds inwards, at a step (the mean of the
    points k pixels to either side lies more than `step` m above the surface here, along the
    normal) or a crease (the normals k pixels to either side differ by more than `angle` degrees
    and turn towards each other), along one of four image directions."""
    Q = np.where(fg[..., None], P, np.nan)
    n = surface_normals(P, fg, k) if normals is None else normals
    up = np.where(np.isfinite(n), n, np.array([0.0, 0.0, 1.0]))  # across a jump: the table's normal
    cos_max = np.cos(np.deg2rad(angle))
    edge = np.zeros(fg.shape, dtype=bool)
    for du, dv in _DIRS:
        a, b = _shifted(Q, k, du, dv)
        na, nb = _shifted(n, k, du, dv)
        with np.errstate(invalid="ignore"):
            second = np.einsum("...i,...i", 0.5 * (a + b) - Q, up)
            crease = (np.einsum("...i,...i", na, nb) < cos_max) & (np.einsum("...i,...i", na - nb, a - b) < 0)
            edge |= (second > step) | (crease & (np.abs(second) <= step))
    return edge & fg


def _main_face(mask: np.ndarray, normals: np.ndarray, P: np.ndarray, min_px: int,
               flat_deg: float) -> tuple[np.ndarray, float] | None:
    """(unit normal, offset n·x) of the mask's main flat face: the pixels whose normal lies
    within `flat_deg` of the mask's median normal; None with fewer than `min_px` such pixels."""
    n = normals[mask]
    ok = np.isfinite(n).all(axis=1)
    if ok.sum() < min_px:
        return None
    n, x = n[ok], P[mask][ok]
    n0 = np.median(n, axis=0)
    n0 /= max(float(np.linalg.norm(n0)), 1e-9)
    flat = n @ n0 > np.cos(np.deg2rad(flat_deg))
    if flat.sum() < min_px:
        return None
    return n0, float(np.median(x[flat] @ n0))


def faces_apart(a: np.ndarray, b: np.ndarray, normals: np.ndarray, P: np.ndarray, min_px: int = FACE_MIN_PX,
                step: float = FACE_STEP_M, flat_deg: float = FACE_FLAT_DEG) -> bool:
    """Whether masks `a` and `b` show two parallel flat faces facing one way at offsets more than
    `step` m apart: a convex object shows each of its faces once, so such faces are two objects."""
    fa = _main_face(a, normals, P, min_px, flat_deg)
    fb = _main_face(b, normals, P, min_px, flat_deg)
    if fa is None or fb is None or fa[0] @ fb[0] < np.cos(np.deg2rad(flat_deg)):
        return False
    return abs(fa[1] - fb[1]) > step
