"""A tiny numpy ray caster for RGB-D test frames: a table plane plus boxes, cylinders and spheres.

Why: perception, grasp and push code must be testable in milliseconds and without the simulator.
Simplified on purpose: Lambert shading with one directional light, no shadows, no noise unless
asked, vertical cylinders only, boxes rotated about z only. The frames it makes carry the same
`annotations` a simulator would, so both perception backends can be run on them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bt_grasp.drivers.base import Observation

from .geometry import pixel_rays


@dataclass
class Prim:
    """One primitive. box dims (x, y, z) full extents; cylinder (radius, height); sphere (radius,).

    center is the base-frame centre of the primitive; yaw rotates boxes about z.
    """

    shape: str
    center: tuple[float, float, float]
    dims: tuple[float, ...]
    rgb: tuple[float, float, float]
    yaw: float = 0.0
    name: str = ""
    colour: str = ""
    category: str = ""
    size: str = "medium"


def look_at(eye: np.ndarray, target: np.ndarray, up: tuple[float, float, float] = (1.0, 0.0, 0.0)) -> np.ndarray:
    """T_cam_base (OpenCV camera: z forward, y down) for a camera at `eye` looking at `target`.

    `up` is the base-frame direction that should appear at the top of the image.
    """
    eye = np.asarray(eye, dtype=np.float64)
    upv = np.asarray(up, dtype=np.float64)
    z = np.asarray(target, dtype=np.float64) - eye
    z /= np.linalg.norm(z)
    y = -(upv - z * (z @ upv))
    y /= np.linalg.norm(y)
    x = np.cross(y, z)
    T = np.eye(4)
    T[:3, 0], T[:3, 1], T[:3, 2], T[:3, 3] = x, y, z, eye
    return T


def intrinsics(width: int, height: int, fov_deg: float = 60.0) -> np.ndarray:
    """Pinhole K with a vertical field of view and the principal point at the image centre."""
    f = height / (2.0 * np.tan(np.deg2rad(fov_deg) / 2.0))
    return np.array([[f, 0.0, (width - 1) / 2.0], [0.0, f, (height - 1) / 2.0], [0.0, 0.0, 1.0]])


def _hit_box(o: np.ndarray, d: np.ndarray, p: Prim) -> tuple[np.ndarray, np.ndarray]:
    c, s = np.cos(-p.yaw), np.sin(-p.yaw)
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    ol = R @ (o - np.asarray(p.center))
    dl = d @ R.T
    h = np.asarray(p.dims[:3]) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (-h - ol) / dl
        t2 = (h - ol) / dl
    tlo = np.nan_to_num(np.minimum(t1, t2), nan=-np.inf)
    thi = np.nan_to_num(np.maximum(t1, t2), nan=np.inf)
    tmin = tlo.max(axis=-1)
    tmax = thi.min(axis=-1)
    hit = (tmax >= tmin) & (tmin > 0)
    axis = tlo.argmax(axis=-1)
    nl = np.zeros_like(dl)
    np.put_along_axis(nl, axis[..., None], -np.sign(np.take_along_axis(dl, axis[..., None], -1)), -1)
    return np.where(hit, tmin, np.inf), nl @ R


def _hit_cylinder(o: np.ndarray, d: np.ndarray, p: Prim) -> tuple[np.ndarray, np.ndarray]:
    r, hh = p.dims[0], p.dims[1] / 2.0
    ol = o - np.asarray(p.center)
    a = d[..., 0] ** 2 + d[..., 1] ** 2
    b = 2 * (ol[0] * d[..., 0] + ol[1] * d[..., 1])
    cc = ol[0] ** 2 + ol[1] ** 2 - r * r
    disc = b * b - 4 * a * cc
    with np.errstate(divide="ignore", invalid="ignore"):
        ts = (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a)
        zs = ol[2] + ts * d[..., 2]
        side = (disc >= 0) & (ts > 0) & (np.abs(zs) <= hh)
        tt = (hh - ol[2]) / d[..., 2]
        xt, yt = ol[0] + tt * d[..., 0], ol[1] + tt * d[..., 1]
        top = (tt > 0) & (xt ** 2 + yt ** 2 <= r * r)
    t_side = np.where(side, ts, np.inf)
    t_top = np.where(top, tt, np.inf)
    use_top = t_top < t_side
    t = np.minimum(t_side, t_top)
    pt = ol + t[..., None] * d
    n = np.stack([pt[..., 0], pt[..., 1], np.zeros_like(t)], axis=-1) / r
    n[use_top] = (0.0, 0.0, 1.0)
    return t, n


def _hit_sphere(o: np.ndarray, d: np.ndarray, p: Prim) -> tuple[np.ndarray, np.ndarray]:
    r = p.dims[0]
    ol = o - np.asarray(p.center)
    a = np.einsum("...i,...i", d, d)
    b = 2 * d @ ol
    cc = ol @ ol - r * r
    disc = b * b - 4 * a * cc
    with np.errstate(invalid="ignore"):
        t = (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a)
    ok = (disc >= 0) & (t > 0)
    t = np.where(ok, t, np.inf)
    n = (ol + np.where(ok, t, 0)[..., None] * d) / r
    return t, n


_HIT = {"box": _hit_box, "cylinder": _hit_cylinder, "sphere": _hit_sphere}


def render(prims: list[Prim], K: np.ndarray, T_cam_base: np.ndarray, shape: tuple[int, int], *,
           table_z: float = 0.0, table_rgb: tuple[float, float, float] = (0.55, 0.55, 0.52),
           light: tuple[float, float, float] = (0.3, 0.2, 1.0), noise: float = 0.0,
           rng: np.random.Generator | None = None, clock: float = 0.0) -> Observation:
    """Ray-cast the primitives over an infinite table plane at z = table_z.

    Object body ids in the annotations are 1..len(prims) in order; the table is id 0.
    `noise` is the std of additive depth noise in metres (0 = exact).
    """
    T = np.asarray(T_cam_base, dtype=np.float64)
    d = pixel_rays(shape, K) @ T[:3, :3].T  # camera depth of o + t·d equals t
    o = T[:3, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_tab = (table_z - o[2]) / d[..., 2]
    depth = np.where(t_tab > 0, t_tab, np.inf)
    normal = np.zeros(d.shape)
    normal[..., 2] = 1.0
    inst = np.zeros(shape, dtype=np.int32)
    albedo = np.broadcast_to(np.asarray(table_rgb, dtype=np.float64), d.shape).copy()
    for i, p in enumerate(prims, start=1):
        t, n = _HIT[p.shape](o, d, p)
        closer = t < depth
        depth[closer] = t[closer]
        normal[closer] = n[closer]
        inst[closer] = i
        albedo[closer] = p.rgb
    lv = np.asarray(light, dtype=np.float64)
    lv /= np.linalg.norm(lv)
    shade = 0.35 + 0.65 * np.clip(normal @ lv, 0.0, 1.0)
    rgb = np.clip(albedo * shade[..., None] * 255.0, 0, 255).astype(np.uint8)
    depth = np.where(np.isfinite(depth), depth, 0.0)
    if noise > 0:
        rng = rng or np.random.default_rng(0)
        depth = np.where(depth > 0, depth + rng.normal(0.0, noise, depth.shape), 0.0)
    objects = {i: {"name": p.name, "colour": p.colour, "category": p.category, "size": p.size}
               for i, p in enumerate(prims, start=1)}
    return Observation(rgb=rgb, depth=depth.astype(np.float32), K=np.asarray(K, dtype=np.float64),
                       T_cam_base=T, clock=clock, annotations={"instance": inst, "objects": objects})


def overhead_camera(size: int = 256, height: float = 0.8, fov_deg: float = 50.0,
                    target: tuple[float, float, float] = (0.5, 0.0, 0.0),
                    tilt: float = 0.0) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """(K, T_cam_base, shape) of a camera above `target`; tilt (m) moves the eye back along −x.

    Image 'up' is base +x (away from the robot), so image right is base −y.
    """
    eye = np.array([target[0] - tilt, target[1], target[2] + height])
    return intrinsics(size, size, fov_deg), look_at(eye, np.asarray(target, dtype=float)), (size, size)
