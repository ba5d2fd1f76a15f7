"""Antipodal grasp candidates on an object's point cloud, collision-checked with a gripper model.

Contacts come from two sources: surface points whose local-PCA normal (cKDTree neighbourhood) is
roughly horizontal (visible side faces), and the boundary of the object's footprint on the table
plane with 2D outward normals (the sides a single overhead view cannot see; this assumes objects
are roughly prisms from above — the simplification that makes top-down grasping work from one
view). Pairs whose connecting line lies inside both friction cones and whose distance fits the
aperture become grasps. Each candidate is checked against the scene cloud with a gripper of two
finger boxes and a palm box, swept back along the approach (so the approach path is checked too),
plus the table. Top-down grasps (yaw only) are tried first; tilted approaches (rotated about the
closing axis) only when every top-down candidate collides.

GraspPose convention: position = the grasp point between the finger pads, orientation quaternion
(x, y, z, w) of the gripper frame whose z axis is the approach direction and x the closing direction.

Simplified: the finger boxes end at the grasp point, though a driver's fingertips may reach
beyond it (the arm's by 15 mm); the driver's own collision check covers that part. Modelling the
tips here made the planner choose shallower grasps near lower neighbours, which held less often.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bt_grasp.drivers.base import GraspPose, Observation

from .geometry import (
    Plane,
    backproject,
    finite_rows,
    fit_table_plane,
    frame_pointmap,
    quat_from_matrix,
    unique_rows,
)
from .types import Located


@dataclass(frozen=True)
class GripperModel:
    """Box model of a parallel gripper (Robotiq 2F-85-like), metres, in the gripper frame."""

    max_aperture: float = 0.085
    max_object_width: float = 0.075  # leaves 5 mm per side to close onto
    finger_thickness: float = 0.010  # along x (closing)
    finger_depth: float = 0.022  # along y
    finger_length: float = 0.045  # along z, fingertip to palm
    palm_depth: float = 0.040  # along y
    palm_height: float = 0.030  # along z
    approach: float = 0.10  # swept length behind the gripper checked for the approach path
    margin: float = 0.003  # inflation of every box
    table_clearance: float = 0.004  # fingertips stay this far above the table
    open_extra: float = 0.02  # opening beyond the object width


@dataclass
class _Contact:
    points: np.ndarray  # Nx3
    normals: np.ndarray  # Nx2 outward, unit


def _kdtree(points: np.ndarray) -> Any:
    """A scipy cKDTree over `points`."""
    from scipy.spatial import cKDTree  # here, not at import: scipy loads slowly, only planning uses it

    return cKDTree(points)


def estimate_normals(points: np.ndarray, k: int = 12) -> np.ndarray:
    """Unit normals by local PCA (smallest eigenvector of each k-neighbourhood), oriented away
    from the cloud's centroid."""
    if len(points) < 4:
        return np.tile([0.0, 0.0, 1.0], (len(points), 1))
    k = min(k, len(points))
    _, nn = _kdtree(points).query(points, k=k)
    nb = points[nn] - points[nn].mean(axis=1, keepdims=True)
    cov = np.einsum("nki,nkj->nij", nb, nb)
    _, vecs = np.linalg.eigh(cov)
    n = vecs[:, :, 0]
    out = points - points.mean(axis=0)
    flip = np.einsum("ij,ij->i", n, out) < 0
    n[flip] *= -1
    return n


def _contacts(obj: np.ndarray, k: int = 12, cut: np.ndarray | None = None, cut_m: float = 0.006) -> _Contact:
    """Side-face points and footprint-boundary points with horizontal outward normals.

    `cut`: Kx2 xy points where the camera's frame cuts the object off. The footprint's boundary
    there is the frame's edge, not the object's: boundary points within `cut_m` of it are no
    contacts (pairing them would centre a grasp on the seen part, a finger inside the rest)."""
    n3 = estimate_normals(obj, k)
    side = np.abs(n3[:, 2]) < 0.6
    pts = [obj[side]]
    nrm = [n3[side, :2] / np.linalg.norm(n3[side, :2], axis=1, keepdims=True).clip(1e-9)]
    xy = obj[:, :2]
    if len(xy) >= 8:
        kk = min(16, len(xy))
        dist, nn = _kdtree(xy).query(xy, k=kk)
        off = xy - xy[nn].mean(axis=1)
        mag = np.linalg.norm(off, axis=1)
        spread = dist[:, 1:].mean(axis=1)
        edge = mag > 0.35 * spread
        e_xy, e_off = xy[edge], off[edge]
        if len(e_xy) >= 5:
            # Refine: the normal is perpendicular to the boundary's local tangent (PCA over nearby
            # boundary points), signed like the outward offset; the raw offset is biased at corners.
            _, enn = _kdtree(e_xy).query(e_xy, k=min(7, len(e_xy)))
            nb = e_xy[enn] - e_xy[enn].mean(axis=1, keepdims=True)
            _, vecs = np.linalg.eigh(np.einsum("nki,nkj->nij", nb, nb))
            en = vecs[:, :, 0]
            en[np.einsum("ij,ij->i", en, e_off) < 0] *= -1
        else:
            en = e_off / np.linalg.norm(e_off, axis=1, keepdims=True).clip(1e-12)
        if cut is not None and len(cut):
            real = _kdtree(np.asarray(cut, float)[:, :2]).query(e_xy, k=1)[0] > cut_m
            en, edge = en[real], np.flatnonzero(edge)[real]
        pts.append(obj[edge])
        nrm.append(en)
    return _Contact(np.vstack(pts), np.vstack(nrm))


def _frames(closing: np.ndarray, tilt: float) -> np.ndarray:
    """Nx3x3 rotation matrices (columns x, y, z) for horizontal closing axes and one tilt angle."""
    x = np.column_stack([closing, np.zeros(len(closing))])
    z0 = np.tile([0.0, 0.0, -1.0], (len(closing), 1))
    y0 = np.cross(z0, x)
    z = np.cos(tilt) * z0 + np.sin(tilt) * y0
    y = np.cross(z, x)
    return np.stack([x, y, z], axis=2)


def _boxes(g: GripperModel, width: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(lo, hi) Nx3 corners of the collision boxes in the gripper frame for N openings `width`.

    Fingers and palm are extended back along −z by `approach`: the swept approach path.
    """
    w2 = np.asarray(width, dtype=np.float64) / 2.0
    t, m = g.finger_thickness, g.margin
    one = np.ones_like(w2)
    zf = -(g.finger_length + g.approach)
    fy = g.finger_depth / 2 + m
    py = g.palm_depth / 2 + m
    zp = -(g.finger_length + g.palm_height + g.approach)
    return [(np.column_stack([w2 - m, -fy * one, zf * one]), np.column_stack([w2 + t + m, fy * one, m * one])),
            (np.column_stack([-w2 - t - m, -fy * one, zf * one]), np.column_stack([-w2 + m, fy * one, m * one])),
            (np.column_stack([-w2 - t - m, -py * one, zp * one]),
             np.column_stack([w2 + t + m, py * one, (-g.finger_length + m) * one]))]


def _collision_free(pos: np.ndarray, R: np.ndarray, width: np.ndarray, g: GripperModel, scene: np.ndarray,
                    others: np.ndarray, table: Plane, chunk: int = 64) -> np.ndarray:
    """N bools: gripper poses (pos Nx3, R Nx3x3, width N) clear of the scene cloud and the table.

    Also rejects poses with another object's points between the fingers (it would be grasped too).
    """
    n = len(pos)
    free = np.ones(n, dtype=bool)
    boxes = _boxes(g, width)
    # Fingertip corners must stay above the table.
    for lo, hi in boxes[:2]:
        for cx in (lo[:, 0], hi[:, 0]):
            for cy in (lo[:, 1], hi[:, 1]):
                corner = np.column_stack([cx, cy, hi[:, 2]])
                world = np.einsum("nij,nj->ni", R, corner) + pos
                free &= table.height(world) >= g.table_clearance
    if len(scene) == 0:
        return free
    half_depth = g.finger_depth / 2
    for s in range(0, n, chunk):
        rows = s + np.flatnonzero(free[s:s + chunk])  # poses already off the table stay rejected
        if len(rows) == 0:
            continue
        x, y, z = _into_frames(scene, pos[rows], R[rows])
        hit = (np.abs(x) < width[rows, None] / 2.0) & (np.abs(y) < half_depth) \
            & (z > -g.finger_length) & (z < 0.0) & others[None, :]  # another object between the fingers
        for lo, hi in boxes:
            lo, hi = lo[rows, None, :], hi[rows, None, :]
            hit |= (x >= lo[..., 0]) & (x <= hi[..., 0]) & (y >= lo[..., 1]) & (y <= hi[..., 1]) \
                & (z >= lo[..., 2]) & (z <= hi[..., 2])
        free[rows] = ~hit.any(axis=1)
    return free


def _into_frames(points: np.ndarray, pos: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, z) NxM: M points in each of N frames (origin pos, axes the columns of R).

    Written out per axis, (d·R[:, 0, j] + d·R[:, 1, j]) + d·R[:, 2, j] — the sum einsum forms,
    in the same order — three times faster than einsum on a NxMx3 array.
    """
    d = points[None, :, :] - pos[:, None, :]
    d0, d1, d2 = d[..., 0], d[..., 1], d[..., 2]
    return tuple(d0 * R[:, None, 0, j] + d1 * R[:, None, 1, j] + d2 * R[:, None, 2, j]  # type: ignore[return-value]
                 for j in range(3))


def _voxel_down(points: np.ndarray, voxel: float) -> np.ndarray:
    """One point per occupied voxel (the first): keeps the geometry, bounds the collision cost."""
    if len(points) == 0:
        return points
    _, first = unique_rows(np.floor(points / voxel).astype(np.int64), return_index=True)
    return points[np.sort(first)]


def grasp_candidates(object_points: np.ndarray, scene_points: np.ndarray, table: Plane | float = 0.0,
                     gripper: GripperModel | None = None, max_candidates: int = 10,
                     tilts_deg: tuple[float, ...] = (30.0, 45.0, 60.0), friction_deg: float = 20.0,
                     max_contacts: int = 300, max_pairs: int = 120, voxel: float = 0.004,
                     rng: np.random.Generator | None = None, cut: np.ndarray | None = None) -> list[GraspPose]:
    """Ranked collision-free grasps (best first) on one object; [] when none is found.

    object_points: Nx3 base-frame points of the object; scene_points: Mx3 base-frame non-table
    points of the whole scene (may include the object's own points); table: the table plane or
    its height (horizontal table); cut: Kx3 points of the object at the frame's edge (_contacts).
    """
    g = gripper or GripperModel()
    rng = rng or np.random.default_rng(0)
    plane = table if isinstance(table, Plane) else Plane(np.array([0.0, 0.0, 1.0]), -float(table))
    obj = np.asarray(object_points, dtype=np.float64)
    obj = obj[finite_rows(obj)]
    if len(obj) < 10:
        return []
    if len(obj) > 2000:
        obj = obj[rng.choice(len(obj), 2000, replace=False)]
    c = _contacts(obj, cut=cut)
    if len(c.points) > max_contacts:
        sel = rng.choice(len(c.points), max_contacts, replace=False)
        c = _Contact(c.points[sel], c.normals[sel])
    if len(c.points) < 2:
        return []
    # Boundary points are pixel centres, half a sample inside the true edge on each side.
    spacing = float(np.median(_kdtree(obj[:, :2]).query(obj[:, :2], k=2)[0][:, 1]))
    d = c.points[None, :, :2] - c.points[:, None, :2]  # i -> j
    L = np.linalg.norm(d, axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        dh = d / L[..., None]
    L = L + spacing
    cos_i = -np.einsum("ijk,ik->ij", dh, c.normals)
    cos_j = np.einsum("ijk,jk->ij", dh, c.normals)
    cmin = np.cos(np.deg2rad(friction_deg))
    ok = (L > 0.005 + spacing) & (L <= g.max_object_width) & (cos_i > cmin) & (cos_j > cmin)
    ok &= np.triu(np.ones_like(ok), 1).astype(bool)
    ii, jj = np.nonzero(ok)
    if len(ii) == 0:
        return []
    quality = (cos_i[ii, jj] + cos_j[ii, jj]) / 2
    mid = (c.points[ii, :2] + c.points[jj, :2]) / 2
    axis = dh[ii, jj]
    yaw = np.arctan2(axis[:, 1], axis[:, 0]) % np.pi
    # One candidate per (5 mm, 10°) bin, the best quality in each.
    key = np.column_stack([np.round(mid / 0.005), np.round(yaw / np.deg2rad(10)) % 18]).astype(np.int64)
    order = np.argsort(-quality)
    _, first = np.unique(key[order], axis=0, return_index=True)
    pick = order[first]
    pick = pick[np.argsort(-quality[pick])][:max_pairs]
    h_obj = plane.height(obj)
    top = float(np.quantile(h_obj, 0.95))
    own_h = top - max(float(np.quantile(h_obj, 0.02)), 0.0)  # the object's own height (it may rest on others)
    # Deepest first: half the object's height, then shallower, which clears lower neighbours.
    d_max = max(min(0.5 * own_h, g.finger_length - 0.01), 0.008)
    depths = sorted({round(d, 4) for d in (d_max, 0.6 * d_max, 0.35 * d_max) if d >= 0.008} | {d_max},
                    reverse=True)
    # The lowest fingertip height the table test below accepts (its boxes are inflated by the
    # margin), plus 1 mm: a lower floor would reject every grasp on an object under ~15 mm tall.
    tip_floor = g.table_clearance + g.margin + 0.001
    centre = obj[:, :2].mean(axis=0)
    scene = np.asarray(scene_points, dtype=np.float64)
    scene = scene[finite_rows(scene)]
    reach = g.finger_length + g.palm_height + g.approach + g.max_aperture
    scene = scene[np.linalg.norm(scene[:, :2] - centre, axis=1) < reach + np.ptp(obj[:, 0]) + np.ptp(obj[:, 1])]
    own = _kdtree(obj).query(scene, k=1, distance_upper_bound=0.004)[0] if len(scene) else np.zeros(0)
    obj_down = _voxel_down(obj, voxel)
    scene_all = np.vstack([_voxel_down(scene[~np.isfinite(own)], voxel), obj_down])
    n_other = len(scene_all) - len(obj_down)
    others = np.arange(len(scene_all)) < n_other
    widths = np.minimum(g.max_aperture, L[ii[pick], jj[pick]] + g.open_extra)
    pos = np.column_stack([mid[pick], np.zeros(len(pick))])
    table_z = np.array([plane.z_at(float(x), float(y)) for x, y in mid[pick]])
    off = np.linalg.norm(mid[pick] - centre, axis=1)
    # Sharp antipodality, near the centroid (less torque), narrow (more closing margin).
    base_score = quality[pick] ** 4 * (0.5 + 0.5 * np.exp(-off / 0.015)) \
        * (1.0 - 0.3 * L[ii[pick], jj[pick]] / g.max_object_width)
    out: list[GraspPose] = []
    for tilt in (0.0, *np.deg2rad(tilts_deg), *(-np.deg2rad(t) for t in tilts_deg)):
        Rs = _frames(axis[pick], tilt)
        # Only points the tilted, swept gripper can reach in xy matter.
        r_xy = float(np.max(np.linalg.norm(obj[:, :2] - centre, axis=1))) + g.max_aperture / 2 \
            + g.finger_thickness + g.palm_depth + abs(np.sin(tilt)) * reach + 0.01
        near = np.linalg.norm(scene_all[:, :2] - centre, axis=1) < r_xy
        for depth in depths:
            pos[:, 2] = table_z + max(top - depth, tip_floor)
            free = _collision_free(pos, Rs, widths, g, scene_all[near], others[near], plane)
            for n in np.flatnonzero(free):
                k = pick[n]
                score = base_score[n] * (1.0 - 0.5 * abs(tilt) / np.pi) * (0.7 + 0.3 * depth / d_max)
                out.append(GraspPose(position=pos[n].copy(), orientation=quat_from_matrix(Rs[n]),
                                     width=float(widths[n]), score=float(score),
                                     metadata={"approach": "top_down" if tilt == 0 else "tilted",
                                               "tilt_deg": float(np.rad2deg(tilt)), "yaw": float(yaw[k]),
                                               "depth": depth, "object_width": float(L[ii[k], jj[k]]),
                                               # the object's top (base z): how much side the pads meet
                                               "object_top_z": float(table_z[n] + top),
                                               "contacts": [c.points[ii[k]].tolist(),
                                                            c.points[jj[k]].tolist()]}))
            if len(out) >= max_candidates:
                break
        if out:  # tilted approaches only when every top-down candidate collides
            break
    out.sort(key=lambda p: -p.score)
    return out[:max_candidates]


_LAST_FRAME: list[tuple[Observation, float, Plane, np.ndarray]] = []


def scene_cloud(obs: Observation, min_height: float = 0.005) -> tuple[Plane, np.ndarray]:
    """The frame's table plane and its non-table points (at most 30k), computed once per frame.

    Planning grasps for several objects of one frame (locate_any, then the grasp itself) would
    otherwise back-project and fit the same 512x512 frame each time (~25 ms). The cache holds
    only the latest frame and matches it by identity: observations are not modified once taken.
    """
    if _LAST_FRAME and _LAST_FRAME[0][0] is obs and _LAST_FRAME[0][1] == min_height:
        return _LAST_FRAME[0][2], _LAST_FRAME[0][3]
    P = frame_pointmap(obs).reshape(-1, 3)
    P = P[finite_rows(P)]
    plane = fit_table_plane(P) or Plane(np.array([0.0, 0.0, 1.0]), 0.0)
    scene = P[plane.height(P) > min_height]
    if len(scene) > 30000:
        scene = scene[np.random.default_rng(0).choice(len(scene), 30000, replace=False)]
    _LAST_FRAME[:] = [(obs, min_height, plane, scene)]
    return plane, scene


def plan_grasps(obs: Observation, located: Located, gripper: GripperModel | None = None,
                min_height: float = 0.005, **kwargs: object) -> list[GraspPose]:
    """Grasps for a located object, with the scene cloud and table taken from the same frame."""
    plane, scene = scene_cloud(obs, min_height)
    obj = located.points_base if len(located.points_base) else backproject(obs.depth, obs.K, obs.T_cam_base,
                                                                           located.mask)
    obj = obj[plane.height(obj) > min_height]
    cut = frame_cut(obs, located.mask)
    return grasp_candidates(obj, scene, plane, gripper, cut=cut, **kwargs)  # type: ignore[arg-type]


def frame_cut(obs: Observation, mask: np.ndarray, band_px: int = 2) -> np.ndarray | None:
    """Base-frame points of the mask's pixels within `band_px` of the image's edge (the object may
    go on beyond the frame there); None when the mask does not reach the edge."""
    m = np.asarray(mask, bool)
    if m.ndim != 2 or not m.any():
        return None
    band = np.zeros_like(m)
    band[:band_px, :] = band[-band_px:, :] = True
    band[:, :band_px] = band[:, -band_px:] = True
    edge = m & band
    if not edge.any():
        return None
    pts = backproject(obs.depth, obs.K, obs.T_cam_base, edge)
    pts = pts[finite_rows(pts)]
    return pts if len(pts) else None
