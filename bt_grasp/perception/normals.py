"""Surface normals, a depth-edge map and a face test from one depth image, for segmentation.

Why: touching objects of one colour leave no colour edge, and where their surfaces meet there is
often no valley either (a box beside a lower box, a can's tilted top against a box's flat one).
What does change there is the surface itself: its height jumps by more than one surface explains
(a step), or its orientation turns abruptly (a crease). Both are measured from the pointmap,
which the camera intrinsics and pose already give, so the cue needs no learned model.

- Normals: the cross product of the pointmap's differences k pixels to either side, across
  and down the image (central differences at one scale); undefined where either span crosses a
  depth jump or leaves the foreground.
- Steps: the pointmap's second difference along a line (the point here against the mean of the
  points k pixels to either side) longer than `step` metres. A plane, tilted or not, gives 0; a
  ball's curvature a few millimetres at this scale; a jump between two surfaces half the jump.
- Creases: the angle between the normals k pixels to either side of a pixel, along a line,
  above `angle` degrees, on a line where the surface is continuous (no step).
- Faces apart: two pieces whose largest flat faces are parallel and face one way but lie at two
  heights are two objects, since a convex object shows each of its faces once (a veto on the
  merge-back of split_merge.py).

Both off by default (GeometricPerceiver(depth_edges=True, face_veto=True)). The edges do cut
touching objects apart where valleys do not, but most joined objects were already cut apart by
valleys and merged back because one catalogue object explains their union; the edges' extra
cuts at a single object's own steps and rims (a brick's or box's rim, the basket's walls) leave
pieces no merge joins again, so precision falls and recall does not rise. The face veto rarely
applies: the pieces of two joined objects seldom each show a flat face (docs/perception.md).

Simplified: one scale, four image directions; the curvature of small objects (a 2 cm ball at a
few pixels) can reach the crease angle, and a box's own rim is a crease.
"""

from __future__ import annotations

import numpy as np

from .calibration import value

# A 4 mm second difference is an 8 mm step, under the 12 mm that breaks a pixel link and the
# 12 mm a valley needs; 40 degrees is sharper than a catalogue ball's or can's curvature at k.
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
    """HxW bool: foreground pixels on a surface step (second difference > `step` m along one of four
    image directions at `k` pixels) or a crease (normals k pixels to either side differ by more than
    `angle` degrees, the surface continuous between them)."""
    Q = np.where(fg[..., None], P, np.nan)
    n = surface_normals(P, fg, k) if normals is None else normals
    cos_max = np.cos(np.deg2rad(angle))
    edge = np.zeros(fg.shape, dtype=bool)
    for du, dv in _DIRS:
        a, b = _shifted(Q, k, du, dv)
        with np.errstate(invalid="ignore"):
            second = np.linalg.norm(0.5 * (a + b) - Q, axis=-1)
            edge |= second > step
            na, nb = _shifted(n, k, du, dv)
            cos = np.einsum("...i,...i", na, nb)
            edge |= (cos < cos_max) & (second <= step)
    return edge & fg




def _main_face(mask: np.ndarray, normals: np.ndarray, P: np.ndarray, min_px: int,
               flat_deg: float) -> tuple[np.ndarray, float] | None:
    """(unit normal, offset n·x) of the mask's largest flat face: the pixels whose normal lies
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
