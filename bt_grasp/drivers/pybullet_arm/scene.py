"""Scene furniture and object spawning shared by the episode generator and the driver.

Frames: the world frame is the robot base frame; the table top is the plane z = 0 and the robot
base sits on it at the origin, so heights above the table are plain z values.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as pb
import pybullet_data

from bt_grasp.bench.objects import ObjectSpec
from bt_grasp.drivers.pybullet_arm.gripper import STROKE_M

TIMESTEP = 1.0 / 240.0
SOLVER_ITERATIONS = 50
TABLE_CENTRE = (0.5, 0.0)
TABLE_SIZE = (1.3, 1.3, 0.05)
BIN_CENTRE = (0.5, 0.0)
BIN_HALF = 0.09            # temporary walls while dropping: a 0.18 m square makes piles
BASKET_POS = (0.32, 0.42, 0.0)
# Where place() releases: inside the basket, on the side the overhead camera sees. The camera's
# view ends near y = 0.39 m at table height, so a drop over the basket's centre (y = 0.42) lands
# out of view and the robot could never confirm a delivery with its own eyes.
BASKET_DROP_XY = (0.32, 0.34)
# Successive places in an episode release over these in turn, all on that side: released over one
# spot, the deliveries piled up under it until the pile reached the gripper, and what was dropped
# next slid off its top or was pressed into it (remove_all delivers a dozen objects).
BASKET_DROP_SPOTS = (BASKET_DROP_XY, (0.25, 0.34), (0.39, 0.34))
BASKET_SCALE = 0.5         # traybox is 0.6 m; half of it is a 0.3 m basket
FIT_MARGIN_M = 0.008       # an object fits when some horizontal width <= stroke - margin
REST_LIN = 0.005           # m/s (notes: rest thresholds)
REST_ANG = 0.05            # rad/s


def configure(client: int) -> None:
    """Physics settings every scene uses (solver iterations change settled scenes, so fix them)."""
    pb.setGravity(0, 0, -9.81, physicsClientId=client)
    pb.setTimeStep(TIMESTEP, physicsClientId=client)
    pb.setPhysicsEngineParameter(numSolverIterations=SOLVER_ITERATIONS, deterministicOverlappingPairs=1,
                                 physicsClientId=client)
    pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)


def add_table(client: int, rgba: tuple[float, float, float, float] = (0.72, 0.62, 0.48, 1.0),
              texture: str | None = None, maximal: bool = False) -> int:
    """The table; `texture` (a pybullet_data image path) is tinted by `rgba` when rendered;
    `maximal`: a rigid body, not a multibody (see spawn)."""
    half = [s / 2 for s in TABLE_SIZE]
    col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=client)
    vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=list(rgba), physicsClientId=client)
    body = pb.createMultiBody(0, col, vis, [TABLE_CENTRE[0], TABLE_CENTRE[1], -half[2]],
                              useMaximalCoordinates=maximal, physicsClientId=client)
    pb.changeDynamics(body, -1, lateralFriction=0.8, physicsClientId=client)
    if texture:
        tex = pb.loadTexture(str(Path(pybullet_data.getDataPath()) / texture), physicsClientId=client)
        pb.changeVisualShape(body, -1, textureUniqueId=tex, rgbaColor=list(rgba), physicsClientId=client)
    return body


def add_basket(client: int, maximal: bool = False) -> int:
    return pb.loadURDF("tray/traybox.urdf", BASKET_POS, useFixedBase=True, globalScaling=BASKET_SCALE,
                       useMaximalCoordinates=maximal, physicsClientId=client)


def add_walls(client: int, height: float = 0.25) -> list[int]:
    """Temporary walls of the drop bin (removed after settling; never rendered)."""
    cx, cy = BIN_CENTRE
    t = 0.01
    walls = []
    for dx, dy, hx, hy in ((BIN_HALF + t, 0, t, BIN_HALF + 2 * t), (-BIN_HALF - t, 0, t, BIN_HALF + 2 * t),
                           (0, BIN_HALF + t, BIN_HALF + 2 * t, t), (0, -BIN_HALF - t, BIN_HALF + 2 * t, t)):
        col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[hx, hy, height / 2], physicsClientId=client)
        walls.append(pb.createMultiBody(0, col, -1, [cx + dx, cy + dy, height / 2], physicsClientId=client))
    return walls


def _mesh_path(spec: ObjectSpec) -> str:
    if not spec.mesh:
        raise ValueError(f"object {spec.name!r} has shape 'mesh' but no mesh path")
    p = Path(spec.mesh)
    return str(p if p.is_absolute() else Path(pybullet_data.getDataPath()) / p)


def spawn(client: int, spec: ObjectSpec, pos: Sequence[float] | np.ndarray,
          orn: Sequence[float] | np.ndarray = (0, 0, 0, 1), maximal: bool = False) -> int:
    """Create the body for `spec`; box/cylinder/sphere are procedural, mesh is a pybullet_data file.

    maximal: a rigid body (maximal coordinates) instead of a one-link multibody. Bullet's split
    impulse, which removes a penetration without adding velocity, works only between rigid
    bodies; between multibodies the penetration becomes velocity (contact.py, rigid_objects)."""
    pos, orn = [float(v) for v in pos], [float(v) for v in orn]
    rgba = list(spec.rgba)
    if spec.shape == "mesh":
        path = _mesh_path(spec)
        scale = float(spec.dims[0]) if spec.dims else 1.0
        if path.endswith(".urdf"):
            body = pb.loadURDF(path, pos, orn, globalScaling=scale, useMaximalCoordinates=maximal,
                               physicsClientId=client)
        else:
            col = pb.createCollisionShape(pb.GEOM_MESH, fileName=path, meshScale=[scale] * 3,
                                          physicsClientId=client)
            vis = pb.createVisualShape(pb.GEOM_MESH, fileName=path, meshScale=[scale] * 3,
                                       rgbaColor=rgba, physicsClientId=client)
            body = pb.createMultiBody(spec.mass, col, vis, pos, orn, useMaximalCoordinates=maximal,
                                      physicsClientId=client)
        pb.changeVisualShape(body, -1, rgbaColor=rgba, physicsClientId=client)
    else:
        kw_c: dict[str, Any]
        kw_v: dict[str, Any]
        if spec.shape == "box":
            kw_c = {"halfExtents": [d / 2 for d in spec.dims[:3]]}
            kw_v = dict(kw_c)
            gtype = pb.GEOM_BOX
        elif spec.shape == "cylinder":
            kw_c = {"radius": spec.dims[0], "height": spec.dims[1]}
            kw_v = {"radius": spec.dims[0], "length": spec.dims[1]}
            gtype = pb.GEOM_CYLINDER
        elif spec.shape == "sphere":
            kw_c = kw_v = {"radius": spec.dims[0]}
            gtype = pb.GEOM_SPHERE
        else:
            raise ValueError(f"unknown shape {spec.shape!r} for {spec.name!r}")
        col = pb.createCollisionShape(gtype, physicsClientId=client, **kw_c)
        vis = pb.createVisualShape(gtype, rgbaColor=rgba, physicsClientId=client, **kw_v)
        body = pb.createMultiBody(spec.mass, col, vis, pos, orn, useMaximalCoordinates=maximal,
                                  physicsClientId=client)
    rolling = 0.002 if spec.shape in ("sphere", "cylinder", "mesh") else 0.0
    pb.changeDynamics(body, -1, mass=spec.mass, lateralFriction=spec.friction, rollingFriction=rolling,
                      spinningFriction=0.002, activationState=pb.ACTIVATION_STATE_ENABLE_SLEEPING,
                      physicsClientId=client)
    return body


def nominal_widths(spec: ObjectSpec) -> tuple[float, float, float]:
    """Axis-aligned extents (x, y, z) of the unrotated object; meshes are estimated from a probe."""
    if spec.shape == "box":
        return tuple(float(d) for d in spec.dims[:3])  # type: ignore[return-value]
    if spec.shape == "cylinder":
        return (2 * spec.dims[0], 2 * spec.dims[0], spec.dims[1])
    if spec.shape == "sphere":
        return (2 * spec.dims[0],) * 3  # type: ignore[return-value]
    return _mesh_extents(spec)


_MESH_EXTENTS: dict[tuple[str, float], tuple[float, float, float]] = {}


def _mesh_extents(spec: ObjectSpec) -> tuple[float, float, float]:
    key = (str(spec.mesh), float(spec.dims[0]) if spec.dims else 1.0)
    if key not in _MESH_EXTENTS:
        c = pb.connect(pb.DIRECT)
        try:
            pb.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
            b = spawn(c, spec, (0, 0, 0))
            lo, hi = pb.getAABB(b, -1, physicsClientId=c)
            _MESH_EXTENTS[key] = tuple(float(h - lo_) for lo_, h in zip(lo, hi, strict=True))  # type: ignore[assignment]
        finally:
            pb.disconnect(c)
    return _MESH_EXTENTS[key]


def fits_gripper(spec: ObjectSpec) -> bool:
    """True when the object can be closed on across at least one horizontal width."""
    w = nominal_widths(spec)
    return min(w[0], w[1]) <= STROKE_M - FIT_MARGIN_M


def at_rest(client: int, bodies: list[int]) -> bool:
    for b in bodies:
        lin, ang = pb.getBaseVelocity(b, physicsClientId=client)
        if np.linalg.norm(lin) > REST_LIN or np.linalg.norm(ang) > REST_ANG:
            return False
    return True


def settle(client: int, bodies: list[int], max_s: float = 4.0, check_every: int = 24) -> float:
    """Step until every body rests (notes' thresholds) or max_s passes; returns sim seconds used."""
    steps = 0
    while steps * TIMESTEP < max_s:
        for _ in range(check_every):
            pb.stepSimulation(physicsClientId=client)
        steps += check_every
        if steps * TIMESTEP > 0.3 and at_rest(client, bodies):
            break
    return steps * TIMESTEP


def local_catalogue() -> list[ObjectSpec]:
    """A small built-in object list used until/unless bt_grasp.bench.catalogue is available."""
    colours = {"red": (0.85, 0.1, 0.1, 1), "green": (0.1, 0.7, 0.2, 1), "blue": (0.1, 0.25, 0.85, 1),
               "yellow": (0.95, 0.85, 0.1, 1), "orange": (0.95, 0.5, 0.05, 1), "purple": (0.55, 0.2, 0.7, 1)}
    out: list[ObjectSpec] = []
    for cname, rgba in colours.items():
        out.append(ObjectSpec(f"small {cname} box", "box", cname, "small", "box", (0.04, 0.04, 0.04), rgba, 0.08))
        out.append(ObjectSpec(f"large {cname} box", "box", cname, "large", "box", (0.06, 0.05, 0.07), rgba, 0.15))
        out.append(ObjectSpec(f"{cname} can", "can", cname, "medium", "cylinder", (0.028, 0.08), rgba, 0.12))
        out.append(ObjectSpec(f"{cname} ball", "ball", cname, "medium", "sphere", (0.03,), rgba, 0.06))
    out.append(ObjectSpec("red mug", "mug", "red", "medium", "mesh", (0.6,), (0.85, 0.1, 0.1, 1), 0.2,
                          mesh="objects/mug.urdf"))
    out.append(ObjectSpec("yellow duck", "duck", "yellow", "medium", "mesh", (0.7,), (0.95, 0.85, 0.1, 1), 0.1,
                          mesh="duck_vhacd.urdf"))
    return out


def object_catalogue() -> list[ObjectSpec]:
    """The shared catalogue when present (bt_grasp.bench.catalogue), else the local list."""
    try:
        from bt_grasp.bench.catalogue import catalogue  # lazy: the catalogue is optional here
    except ImportError:
        return local_catalogue()
    try:
        items = list(catalogue())
    except Exception:  # noqa: BLE001 - a broken catalogue must not break scenes
        return local_catalogue()
    return items or local_catalogue()
