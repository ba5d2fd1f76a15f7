"""Push planning: an image direction -> a straight push on the table that starts in free space.

The direction (left/right/up/down as the camera sees it) is mapped to the table plane by casting
the rays through the object's pixel and a pixel a few steps away in that direction onto the
plane, so any camera pose works. The start point is found by walking from the object's centroid
against the push direction across an occupancy map of every detected object (their points on the
table plane) until a disc the size of the closed gripper fits; if no such gap exists within
`max_search` beyond the object, the push fails with "clutter too dense". The push runs at half
the object's visible height (clamped), so the fingers hit its side rather than its top.

Simplified: the table is treated as horizontal in the base frame for the walk; space the camera
cannot see (behind tall objects, depth holes) counts as free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Observation

from .geometry import Plane, finite_rows, fit_table_plane, frame_pointmap, pixel_ray_base
from .types import Located, SceneGraph

DIRECTIONS = {"left": (-1.0, 0.0), "right": (1.0, 0.0), "up": (0.0, -1.0), "down": (0.0, 1.0)}
TOO_DENSE = "clutter too dense"


@dataclass
class PushPlan:
    """A planned push; ok False carries the reason (e.g. "clutter too dense") for the tree.

    start/end are base-frame 3D points at the push height; `height` is that base-frame z (what
    Driver.push(start, end, height) takes); metadata["height_above_table"] is relative to the table.
    """

    ok: bool
    start: np.ndarray | None
    end: np.ndarray | None
    height: float
    direction: tuple[float, float, float]  # unit base-frame push direction (a tuple: JSON-friendly)
    reason: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


def image_direction_to_base(direction: str, uv: tuple[float, float], K: np.ndarray, T_cam_base: np.ndarray,
                            plane: Plane, at_height: float = 0.0, step_px: float = 10.0) -> np.ndarray:
    """Unit base-frame vector on the table plane that moves pixel `uv` in the image `direction`."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {sorted(DIRECTIONS)}, got {direction!r}")
    du, dv = DIRECTIONS[direction]
    hits = []
    for u, v in ((uv[0], uv[1]), (uv[0] + du * step_px, uv[1] + dv * step_px)):
        o, d = pixel_ray_base(u, v, K, T_cam_base)
        denom = float(plane.normal @ d)
        if abs(denom) < 1e-9:
            raise ValueError("camera ray parallel to the table")
        t = (at_height - plane.offset - plane.normal @ o) / denom
        hits.append(o + t * d)
    vec = hits[1] - hits[0]
    vec -= plane.normal * (plane.normal @ vec)
    return vec / np.linalg.norm(vec)


def find_start(centroid_xy: np.ndarray, direction_xy: np.ndarray, occupied_xy: np.ndarray,
               object_xy: np.ndarray, gripper_radius: float = 0.02, max_search: float = 0.08,
               step: float = 0.005) -> tuple[np.ndarray | None, float]:
    """First point behind the object (against the push) where a disc of gripper_radius is free.

    Returns (xy or None, distance walked). The walk may cross the object itself and then at most
    `max_search` beyond its far edge (measured along the ray).
    """
    from scipy.spatial import cKDTree  # here, not at import: scipy loads slowly, only pushes use it

    d = direction_xy / np.linalg.norm(direction_xy)
    behind = (object_xy - centroid_xy) @ -d
    extent = float(behind.max()) if len(behind) else 0.0
    tree = cKDTree(occupied_xy) if len(occupied_xy) else None
    s = 0.0
    while s <= extent + gripper_radius + max_search:
        q = centroid_xy - s * d
        if tree is None or not tree.query_ball_point(q, r=gripper_radius, return_length=True):
            return q, s
        s += step
    return None, s


def plan_push(obs: Observation, located: Located, scene: SceneGraph | None, direction: str,
              distance: float = 0.10, gripper_radius: float = 0.02, max_search: float = 0.08,
              min_height: float = 0.007) -> PushPlan:
    """Plan a push of the located object `distance` metres (clamped to 0.03–0.20) in an image direction.

    Occupancy comes from the masks of the scene's detected objects when a scene of this frame is
    given, else from every point above the table.
    """
    distance = float(np.clip(distance, 0.03, 0.20))
    P = frame_pointmap(obs)
    flat = P.reshape(-1, 3)
    finite = finite_rows(flat)
    plane = fit_table_plane(flat[finite]) or Plane(np.array([0.0, 0.0, 1.0]), 0.0)
    heights = plane.height(P)
    if scene is not None and all(o.mask is not None and o.mask.shape == heights.shape for o in scene.objects):
        occ_mask = np.zeros(heights.shape, dtype=bool)
        for o in scene.objects:
            occ_mask |= o.mask  # type: ignore[arg-type]
        occ_mask |= located.mask
    else:
        occ_mask = np.isfinite(heights) & (heights > min_height)
    occ_mask &= np.isfinite(heights)
    occupied = P[occ_mask][:, :2]
    obj = located.points_base[finite_rows(located.points_base)]
    if len(obj) == 0:
        return PushPlan(False, None, None, 0.0, (0.0, 0.0, 0.0), reason="no object points")
    oh = plane.height(obj)
    top = float(np.quantile(oh, 0.95))
    push_h = float(np.clip(0.5 * top, 0.008, 0.04))
    v, u = np.nonzero(located.mask)
    uv = (float(u.mean()), float(v.mean()))
    dvec = image_direction_to_base(direction, uv, obs.K, obs.T_cam_base, plane, at_height=push_h)
    c = obj[:, :2].mean(axis=0)
    start_xy, walked = find_start(c, dvec[:2], occupied, obj[:, :2], gripper_radius, max_search)
    meta = {"direction_image": direction, "walked": walked, "object_top": top}
    dtuple = (float(dvec[0]), float(dvec[1]), float(dvec[2]))
    if start_xy is None:
        return PushPlan(False, None, None, push_h, dtuple, reason=TOO_DENSE, metadata=meta)
    z0 = plane.z_at(float(start_xy[0]), float(start_xy[1])) + push_h
    start = np.array([start_xy[0], start_xy[1], z0])
    end_xy = start_xy + distance * dvec[:2] / np.linalg.norm(dvec[:2])
    end = np.array([end_xy[0], end_xy[1], plane.z_at(float(end_xy[0]), float(end_xy[1])) + push_h])
    meta["height_above_table"] = push_h
    return PushPlan(True, start, end, float(start[2]), dtuple, metadata=meta)
