"""Geometry shared by every perception module: back-projection, projection, table plane, and the
minimum-area rectangle of a footprint.

Conventions: the camera frame is OpenCV (x right, y down, z forward); `T_cam_base` is the pose of
the camera in the robot base frame (it maps camera coordinates to base coordinates); the base
frame has z up, so a horizontal table has normal ≈ +z. Depth is the camera-frame z in metres,
0 (or non-finite) where unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def cross3(u: np.ndarray | Sequence[float], v: np.ndarray | Sequence[float]) -> np.ndarray:
    """np.cross of 3-vectors (...x3), by the same products and differences, without its
    general-axis overhead (it is called on small arrays in per-segment loops)."""
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    u0, u1, u2 = u[..., 0], u[..., 1], u[..., 2]
    v0, v1, v2 = v[..., 0], v[..., 1], v[..., 2]
    return np.stack([u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0], axis=-1)


def finite_rows(a: np.ndarray) -> np.ndarray:
    """np.isfinite(a).all(axis=-1), by one isfinite per component: numpy reduces a short last
    axis slowly, and this runs on pointmap windows of ~10⁵ pixels per segment."""
    ok = np.isfinite(a[..., 0])
    for k in range(1, a.shape[-1]):
        ok &= np.isfinite(a[..., k])
    return ok


def row_norms(a: np.ndarray) -> np.ndarray:
    """np.linalg.norm(a, axis=-1) of real vectors, the squares summed in the order numpy sums
    them, without norm's overhead or numpy's slow reduction over a short last axis."""
    s = a[..., 0] * a[..., 0]
    for k in range(1, a.shape[-1]):
        s = s + a[..., k] * a[..., k]
    return np.sqrt(s)


def unique_rows(rows: np.ndarray, return_index: bool = False, return_counts: bool = False) -> Any:
    """np.unique(rows, axis=0, ...) for integer rows: the same rows, order, first indices and
    counts, through one int64 key per row (offset per column, mixed radix: lexicographic order
    is kept) when the columns' spans fit, because a 1-D unique is far faster than axis=0."""
    rows = np.asarray(rows, dtype=np.int64)
    lo: Any = rows.min(axis=0) if len(rows) else None  # not None wherever span is not
    span = rows.max(axis=0) - lo + 1 if lo is not None else None
    if span is None or float(np.prod(span.astype(np.float64))) >= 2.0 ** 62:
        # numpy's stubs type np.unique only for literal True/False flags, not a bool variable
        return np.unique(rows, axis=0, return_index=return_index,  # type: ignore[call-overload]
                         return_counts=return_counts)
    key = np.zeros(len(rows), dtype=np.int64)
    for j in range(rows.shape[1]):
        key = key * span[j] + (rows[:, j] - lo[j])
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    out = [rows[first], *([first] if return_index else []), *([counts] if return_counts else [])]
    return tuple(out) if len(out) > 1 else out[0]


def min_area_rect(xy: np.ndarray) -> tuple[np.ndarray, float, float, float, float]:
    """(centre, yaw, length, width, hull_area) of the minimum-area rectangle around 2D points.

    Rotating calipers over the convex hull's edge directions; length ≥ width, yaw of the long side.
    """
    from scipy.spatial import ConvexHull, QhullError  # here, not at import: scipy loads slowly

    if len(xy) < 3:
        c = xy.mean(axis=0) if len(xy) else np.zeros(2)
        return c, 0.0, 0.0, 0.0, 0.0
    if len(xy) > 400:  # dedupe on a 1 mm grid: same hull within 1 mm, far fewer points for qhull
        xy = np.round(xy, 3)
        cell = np.round(xy * 1000.0).astype(np.int64)
        # One integer key per cell: a 1-D unique is ~10x faster than np.unique(axis=0).
        _, first = np.unique((cell[:, 0] << 32) + cell[:, 1], return_index=True)
        xy = xy[first]
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


def pixel_rays(shape: tuple[int, int], K: np.ndarray) -> np.ndarray:
    """HxWx3 array K⁻¹[u, v, 1]ᵀ per pixel (camera frame, z = 1); cached per (shape, K), read-only."""
    key = (int(shape[0]), int(shape[1]), tuple(np.round(np.asarray(K, dtype=np.float64).ravel(), 9)))
    rays = _RAYS.get(key)
    if rays is None:
        h, w = shape
        uu, vv = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        pix = np.stack([uu, vv, np.ones_like(uu)], axis=-1)
        rays = pix @ np.linalg.inv(np.asarray(K, dtype=np.float64)).T
        rays.setflags(write=False)
        if len(_RAYS) > 8:
            _RAYS.clear()
        _RAYS[key] = rays
    return rays


_RAYS: dict[tuple, np.ndarray] = {}


def pointmap(depth: np.ndarray, K: np.ndarray, T_cam_base: np.ndarray) -> np.ndarray:
    """HxWx3 base-frame points P = T_cam→base · (D·K⁻¹[u, v, 1]ᵀ); NaN where depth is unknown."""
    d = np.asarray(depth, dtype=np.float64)
    d = np.where(np.isfinite(d) & (d > 0), d, np.nan)
    T = np.asarray(T_cam_base, dtype=np.float64)
    # (rays · R^T) · d + t: rotate the cached rays once, then scale by depth.
    dirs = pixel_rays(d.shape, K) @ T[:3, :3].T
    dirs *= d[..., None]  # in place: the same values as dirs * d + t, one HxWx3 temporary less
    dirs += T[:3, 3]
    return dirs


def frame_pointmap(obs: Any) -> np.ndarray:
    """pointmap of an observation, computed once per frame (read-only: it is shared).

    A frame is surveyed, then planned on and compared by the evidence checks and the watchdog,
    each needing its pointmap (~12 ms at 512²). Observations are not modified once taken, so the
    latest few frames are matched by identity (the frame and its depth, K and pose arrays).
    """
    key = (obs, obs.depth, obs.K, obs.T_cam_base)
    for entry, P in _FRAMES:
        if all(a is b for a, b in zip(entry, key, strict=True)):
            return P
    P = pointmap(obs.depth, obs.K, obs.T_cam_base)
    P.setflags(write=False)
    _FRAMES.insert(0, (key, P))
    del _FRAMES[_FRAMES_KEPT:]
    return P


_FRAMES_KEPT = 4  # the frame surveyed, the one before an action and the one after, with room to spare
_FRAMES: list[tuple[tuple[Any, ...], np.ndarray]] = []


def backproject(depth: np.ndarray, K: np.ndarray, T_cam_base: np.ndarray,
                mask: np.ndarray | None = None) -> np.ndarray:
    """Nx3 base-frame points of the pixels in `mask` (all pixels if None) with known depth."""
    d = np.asarray(depth, dtype=np.float64)
    valid = np.isfinite(d) & (d > 0)
    if mask is not None:
        valid &= mask.astype(bool)
    v, u = np.nonzero(valid)
    if v.size == 0:
        return np.zeros((0, 3))
    Kinv = np.linalg.inv(np.asarray(K, dtype=np.float64))
    pix = np.stack([u, v, np.ones_like(u)], axis=0).astype(np.float64)
    cam = (Kinv @ pix) * d[v, u]
    T = np.asarray(T_cam_base, dtype=np.float64)
    return (T[:3, :3] @ cam).T + T[:3, 3]


def project(points_base: np.ndarray, K: np.ndarray, T_cam_base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Base-frame Nx3 points -> (Nx2 pixel (u, v), N camera depths)."""
    T = np.asarray(T_cam_base, dtype=np.float64)
    R, t = T[:3, :3], T[:3, 3]
    cam = (np.asarray(points_base, dtype=np.float64) - t) @ R
    z = cam[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        uvw = cam @ np.asarray(K, dtype=np.float64).T
        uv = uvw[:, :2] / uvw[:, 2:3]
    return uv, z


def pixel_ray_base(u: float, v: float, K: np.ndarray, T_cam_base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(origin, unit direction) of the viewing ray through pixel (u, v), in the base frame."""
    T = np.asarray(T_cam_base, dtype=np.float64)
    d = T[:3, :3] @ (np.linalg.inv(np.asarray(K, dtype=np.float64)) @ np.array([u, v, 1.0]))
    return T[:3, 3].copy(), d / np.linalg.norm(d)


@dataclass(frozen=True)
class Plane:
    """n·p + d = 0 with |n| = 1 and n pointing up (n_z > 0): the signed height of p is n·p + d."""

    normal: np.ndarray
    offset: float

    def height(self, points: np.ndarray) -> np.ndarray:
        """Signed distance above the plane (works on ...x3 arrays, NaN propagates)."""
        return points @ self.normal + self.offset

    def z_at(self, x: float, y: float) -> float:
        """Base-frame z of the plane at (x, y)."""
        n = self.normal
        return float(-(self.offset + n[0] * x + n[1] * y) / n[2])


def _plane_from(points: np.ndarray) -> Plane:
    """Least-squares plane through points (smallest eigenvector of the 3x3 scatter), normal up."""
    c = points.mean(axis=0)
    q = points - c
    _, vecs = np.linalg.eigh(q.T @ q)
    n = vecs[:, 0]
    if n[2] < 0:
        n = -n
    return Plane(n, float(-n @ c))


def fit_table_plane(points: np.ndarray, *, threshold: float = 0.006, iterations: int = 150,
                    max_tilt_deg: float = 25.0, sample: int = 3000,
                    rng: np.random.Generator | None = None) -> Plane | None:
    """RANSAC plane with a 'roughly horizontal in the base frame' prior, refined by least squares.

    Why the prior: the table is the dominant horizontal surface; object tops are horizontal too
    but smaller, and walls/object sides are rejected by the tilt limit. Simplification: if the
    floor is visible and larger than the table, the floor wins (pass a cropped cloud then).
    """
    rng = rng or np.random.default_rng(0)
    pts = np.asarray(points, dtype=np.float64)
    if len(pts) > 40000:  # a random 40k subset fits the same plane, several times faster
        pts = pts[rng.integers(0, len(pts), size=40000)]
    pts = pts[finite_rows(pts)]
    if len(pts) < 50:
        return None
    sub = pts if len(pts) <= sample else pts[rng.integers(0, len(pts), size=sample)]
    cos_max = np.cos(np.deg2rad(max_tilt_deg))
    idx = rng.integers(0, len(sub), size=(iterations, 3))
    a, b, c = sub[idx[:, 0]], sub[idx[:, 1]], sub[idx[:, 2]]
    n = cross3(b - a, c - a)
    norm = row_norms(n)
    ok = norm > 1e-9
    n[ok] /= norm[ok, None]
    n[n[:, 2] < 0] *= -1
    ok &= n[:, 2] >= cos_max
    if not ok.any():
        return None
    n, a = n[ok], a[ok]
    d = -np.einsum("ij,ij->i", n, a)
    counts = (np.abs(sub @ n.T + d) < threshold).sum(axis=0)
    best = int(np.argmax(counts))
    plane = Plane(n[best], float(d[best]))
    refine = pts if len(pts) <= 20000 else pts[rng.integers(0, len(pts), size=20000)]
    for _ in range(2):
        inl = refine[np.abs(plane.height(refine)) < threshold]
        if len(inl) < 30:
            break
        plane = _plane_from(inl)
    return plane


def quat_from_matrix(R: np.ndarray) -> np.ndarray:
    """Quaternion (x, y, z, w) of a rotation matrix (columns = frame axes in the base frame)."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(np.asarray(R, dtype=np.float64)).as_quat()
