"""Catalogue objects as MuJoCo bodies: procedural shapes, and pybullet_data meshes read from their URDFs.

A pose from the episode generator is PyBullet's base pose, i.e. the inertial frame of the URDF's
link (scaled by globalScaling), so a mesh object's geoms are placed relative to that frame here.
A collision mesh collides as the convex hulls of its OBJ parts, as in Bullet (obj_parts); what the
camera sees is the URDF's visual mesh. Friction between an object and a finger pad is the product of the two
coefficients (an explicit contact pair), as Bullet combines them; elsewhere MuJoCo's rule (the
larger of the two) applies.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import mujoco
import numpy as np
import pybullet_data

from bt_grasp.bench.objects import ObjectSpec

VISUAL_GROUP, COLLISION_GROUP = 0, 4  # the camera draws group 0 only (hull geoms are hidden)
FINGER_PAIR_CONDIM = 4                # sliding + torsional friction at the pads (Bullet's spinningFriction)
# Pad contacts: stiffer than MuJoCo's default (time constant 0.02 s, impedance 0.9-0.95), which let
# a 40 N grip sink the pads ~2.5 mm each into a box, so the gap read as a narrower object. At the
# 1/240 s step MuJoCo raises the 5 ms time constant to two steps (8.3 ms).
PAD_SOLREF = (0.005, 1.0)
PAD_SOLIMP = (0.97, 0.995, 0.001, 0.5, 2.0)
ROLLING = 0.002                       # metres: Bullet's rollingFriction of round objects (scene.spawn)


def _rpy_quat(rpy: Sequence[float]) -> np.ndarray:
    """URDF roll-pitch-yaw (fixed axes x, y, z) as a MuJoCo quaternion (w, x, y, z)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (math.cos(r / 2), math.sin(r / 2), math.cos(p / 2), math.sin(p / 2),
                              math.cos(y / 2), math.sin(y / 2))
    return np.array([cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy])


def _origin(el: ET.Element | None) -> tuple[np.ndarray, np.ndarray]:
    o = el.find("origin") if el is not None else None
    xyz = np.array([float(v) for v in (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()])
    rpy = [float(v) for v in (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()]
    return xyz, _rpy_quat(rpy)


def _urdf_parts(path: Path, scale: float) -> tuple[np.ndarray, list[tuple[str, ET.Element, np.ndarray, np.ndarray]]]:
    """(inertial origin, [(visual|collision, geometry element, pos, quat)]) of a one-link URDF, scaled."""
    link = ET.parse(path).getroot().find("link")
    assert link is not None, f"{path}: no link"
    com, _ = _origin(link.find("inertial"))
    parts = []
    for kind in ("visual", "collision"):
        for el in link.findall(kind):
            pos, quat = _origin(el)
            geom = el.find("geometry")
            if geom is not None and len(geom):
                parts.append((kind, geom[0], pos * scale, quat))
    return com * scale, parts


_PARTS: dict[str, list[np.ndarray]] = {}


def obj_parts(file: Path) -> list[np.ndarray]:
    """The vertices of each object (`o` block) of an OBJ file: Bullet makes one convex hull of
    each in a compound (V-HACD decompositions, the mug's handle and hollow), MuJoCo one hull of
    the whole file, so the parts are given to MuJoCo as meshes of their own."""
    key = str(file)
    if key not in _PARTS:
        parts: list[list[list[float]]] = [[]]
        for line in file.read_text(errors="replace").splitlines():
            if line.startswith("o ") and parts[-1]:
                parts.append([])
            elif line.startswith("v "):
                parts[-1].append([float(v) for v in line.split()[1:4]])
        _PARTS[key] = [np.array(p) for p in parts if len(p) >= 4]
    return _PARTS[key]


def _hulls(spec: mujoco.MjSpec, file: Path, scale: np.ndarray) -> list[str]:
    """Mesh names of the convex parts of a collision OBJ (see obj_parts)."""
    parts = obj_parts(file)
    if len(parts) <= 1:
        return [_mesh(spec, file, scale)]
    names = []
    for i, verts in enumerate(parts):
        name = f"{file.stem}_{i}_{abs(hash((str(file), tuple(scale.round(6))))) % 10**8}"
        if spec.mesh(name) is None:
            m = spec.add_mesh(name=name)
            m.uservert = (verts * scale).reshape(-1).tolist()
        names.append(name)
    return names


def _mesh(spec: mujoco.MjSpec, file: Path, scale: np.ndarray) -> str:
    name = f"{file.stem}_{abs(hash((str(file), tuple(scale.round(6))))) % 10**8}"
    if spec.mesh(name) is None:
        m = spec.add_mesh(name=name, file=str(file))
        m.scale = scale.tolist()
        m.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL  # visual meshes need not be closed
    return name


def _shape_geoms(body: mujoco.MjsBody, spec: ObjectSpec) -> list[mujoco.MjsGeom]:
    if spec.shape == "box":
        return [body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[d / 2 for d in spec.dims[:3]])]
    if spec.shape == "cylinder":
        return [body.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[spec.dims[0], spec.dims[1] / 2, 0])]
    if spec.shape == "sphere":
        return [body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[spec.dims[0], 0, 0])]
    raise ValueError(f"unknown shape {spec.shape!r} for {spec.name!r}")


def _mesh_geoms(mj: mujoco.MjSpec, body: mujoco.MjsBody, spec: ObjectSpec) -> tuple[list[mujoco.MjsGeom], list[mujoco.MjsGeom]]:
    """(visual geoms, collision geoms) of a mesh object (a pybullet_data URDF or OBJ)."""
    if not spec.mesh:
        raise ValueError(f"object {spec.name!r} has shape 'mesh' but no mesh path")
    p = Path(spec.mesh)
    path = p if p.is_absolute() else Path(pybullet_data.getDataPath()) / p
    scale = float(spec.dims[0]) if spec.dims else 1.0
    if path.suffix != ".urdf":
        vis = body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=_mesh(mj, path, np.full(3, scale)))
        return [vis], [body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=name)
                       for name in _hulls(mj, path, np.full(3, scale))]
    com, parts = _urdf_parts(path, scale)
    out: dict[str, list[mujoco.MjsGeom]] = {"visual": [], "collision": []}
    for kind, geom, pos, quat in parts:
        geoms: list[mujoco.MjsGeom] = []
        if geom.tag == "mesh":
            s = np.array([float(v) for v in geom.get("scale", "1 1 1").split()]) * scale
            file = path.parent / str(geom.get("filename"))
            names = _hulls(mj, file, s) if kind == "collision" else [_mesh(mj, file, s)]
            geoms = [body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=n) for n in names]
        elif geom.tag == "box":
            size = np.array([float(v) for v in str(geom.get("size")).split()]) * scale
            geoms = [body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=(size / 2).tolist())]
        for g in geoms:
            g.pos, g.quat = (pos - com).tolist(), quat.tolist()
            out[kind].append(g)
    return out["visual"], out["collision"]


def add_object(mj: mujoco.MjSpec, spec: ObjectSpec, name: str, pos: Sequence[float], orn: Sequence[float],
               bit: int, finger_friction: float) -> None:
    """A free body `name` for `spec` at (pos, orn xyzw), its finger-pad contact pairs included."""
    x, y, z, w = (float(v) for v in orn)
    body = mj.worldbody.add_body(name=name, pos=[float(v) for v in pos], quat=[w, x, y, z])
    body.add_freejoint(name=f"{name}_free")
    rgba = list(spec.rgba)
    round_ = spec.shape in ("sphere", "cylinder", "mesh")
    if spec.shape == "mesh":
        visual, collision = _mesh_geoms(mj, body, spec)
        if not visual:
            visual = collision
    else:
        visual = collision = _shape_geoms(body, spec)
    for g in visual:
        g.rgba, g.group = rgba, VISUAL_GROUP
        if g not in collision:
            g.contype = g.conaffinity = 0
            g.mass = 0.0
    extent = np.zeros(3)
    for i, g in enumerate(collision):
        g.name = f"{name}_c{i}"
        g.contype = g.conaffinity = bit
        g.condim = 6 if round_ else 3
        g.friction = [spec.friction, 0.002, ROLLING if round_ else 0.0001]
        if g not in visual:
            g.group = COLLISION_GROUP
            g.rgba = rgba
        extent = np.maximum(extent, _half_extent(spec, g))
        mu = finger_friction * spec.friction
        for side in ("right", "left"):
            mj.add_pair(geomname1=f"finger_{side}", geomname2=g.name, condim=FINGER_PAIR_CONDIM,
                        friction=[mu, mu, 0.01, 0.0001, 0.0001], solref=list(PAD_SOLREF), solimp=list(PAD_SOLIMP))
    # the mass is the catalogue's; the inertia that of a solid box of the object's extent
    body.explicitinertial = True
    body.mass, body.ipos, body.iquat = float(spec.mass), [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
    a, b, c = (2 * extent).tolist()
    body.inertia = [spec.mass / 12 * (b * b + c * c), spec.mass / 12 * (a * a + c * c), spec.mass / 12 * (a * a + b * b)]


def _half_extent(spec: ObjectSpec, g: mujoco.MjsGeom) -> np.ndarray:
    """A rough half-extent of a collision geom for the inertia (meshes: 3 cm, the catalogue's scale)."""
    if spec.shape == "box":
        return np.array(spec.dims[:3]) / 2
    if spec.shape == "cylinder":
        return np.array([spec.dims[0], spec.dims[0], spec.dims[1] / 2])
    if spec.shape == "sphere":
        return np.full(3, spec.dims[0])
    if g.type == mujoco.mjtGeom.mjGEOM_BOX:
        return np.abs(np.array(g.size))
    return np.full(3, 0.03)
