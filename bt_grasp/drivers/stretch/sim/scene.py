"""The tabletop scene of the simulated Stretch: table, basket, and catalogue objects spawned on
the table and settled, so every episode starts from objects at rest."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bt_grasp.bench.objects import ObjectSpec

TABLE_HEIGHT = 0.55
TABLE_CENTRE = (0.0, -0.70)
TABLE_SIZE = (0.90, 0.50)
BASKET_CENTRE = (0.30, -0.66)
BASKET_INNER = 0.16
BASKET_WALL = 0.05
SPAWN_X, SPAWN_Y = (-0.22, 0.12), (-0.58, -0.80)


def fallback_objects() -> list[ObjectSpec]:
    """Objects used when the shared catalogue is not importable (sized for a 69 mm aperture)."""
    return [
        ObjectSpec("red box", "box", "red", "small", "box", (0.04, 0.03, 0.05), (0.85, 0.1, 0.1, 1), 0.06),
        ObjectSpec("blue cylinder", "cylinder", "blue", "small", "cylinder", (0.02, 0.07),
                   (0.1, 0.25, 0.85, 1), 0.05),
        ObjectSpec("green box", "box", "green", "medium", "box", (0.05, 0.035, 0.06), (0.1, 0.65, 0.2, 1), 0.08),
        ObjectSpec("yellow cylinder", "cylinder", "yellow", "medium", "cylinder", (0.022, 0.09),
                   (0.95, 0.85, 0.1, 1), 0.07),
    ]


def object_pool(max_width: float = 0.05) -> list[ObjectSpec]:
    """Primitive-shaped catalogue objects narrow enough for the Stretch gripper, else the fallback.

    The catalogue is imported lazily (it is written concurrently and may be absent); meshes are
    skipped because their pybullet_data files are scaled for the arm scene.
    """
    try:
        from bt_grasp.bench import catalogue as cat

        pool = [s for s in cat.catalogue() if s.shape in ("box", "cylinder")
                and cat.graspable_width(s) <= max_width and cat.extents(s)[2] <= 0.10]
        if len(pool) >= 3:
            return pool
    except Exception:  # noqa: BLE001 - any catalogue problem means "use the fallback"
        pass
    return fallback_objects()


@dataclass
class SimObject:
    body: int
    spec: ObjectSpec
    rest_z: float


class SceneMixin:
    """Mixin of StretchWorld: building the scene and (re)placing its objects."""

    pb: Any
    cid: int
    objects: dict[int, SimObject]
    _pool: list[ObjectSpec] | None
    n_objects: int
    task: str | None
    robot: int
    link: dict[str, int]

    def _box(self, half: tuple[float, float, float], pos: tuple[float, float, float],
             rgba: tuple[float, float, float, float], mass: float = 0.0) -> int:
        pb = self.pb
        col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=self.cid)
        vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=rgba, physicsClientId=self.cid)
        return pb.createMultiBody(mass, col, vis, pos, physicsClientId=self.cid)

    def _add_table(self) -> int:
        hx, hy = TABLE_SIZE[0] / 2, TABLE_SIZE[1] / 2
        body = self._box((hx, hy, 0.02), (TABLE_CENTRE[0], TABLE_CENTRE[1], TABLE_HEIGHT - 0.02),
                         (0.72, 0.62, 0.48, 1.0))
        self.pb.changeDynamics(body, -1, lateralFriction=0.8, physicsClientId=self.cid)
        self._add_floor((0.5, 0.5, 0.005), (0, 0, -0.005), (0.5, 0.5, 0.5, 1.0))
        return body

    def _add_floor(self, half: tuple[float, float, float], pos: tuple[float, float, float],
                   rgba: tuple[float, float, float, float]) -> int:
        """The floor, with no contacts between it and the robot's wheels, caster and base: the base
        is kinematic (a fixed base moved by pose), so those contacts carry no force the robot
        feels, yet solving them took about 40 % of every physics step."""
        pb = self.pb
        floor = self._box(half, pos, rgba)
        for link in (-1, self.link["link_right_wheel"], self.link["link_left_wheel"], self.link["caster_link"]):
            pb.setCollisionFilterPair(self.robot, floor, link, -1, 0, physicsClientId=self.cid)
        return floor

    def _add_basket(self) -> int:
        """An open tray of five boxes as one multibody (walls BASKET_WALL high)."""
        pb = self.pb
        h, t, w = BASKET_INNER / 2, 0.005, BASKET_WALL
        parts = [((h + t, h + t, t), (0, 0, t)),
                 ((t, h + t, w / 2), (h + t, 0, w / 2)), ((t, h + t, w / 2), (-h - t, 0, w / 2)),
                 ((h + t, t, w / 2), (0, h + t, w / 2)), ((h + t, t, w / 2), (0, -h - t, w / 2))]
        cols = [pb.createCollisionShape(pb.GEOM_BOX, halfExtents=he, collisionFramePosition=p,
                                        physicsClientId=self.cid) for he, p in parts]
        vis = [pb.createVisualShape(pb.GEOM_BOX, halfExtents=he, visualFramePosition=p,
                                    rgbaColor=(0.35, 0.25, 0.15, 1), physicsClientId=self.cid) for he, p in parts]
        base_pos = (BASKET_CENTRE[0], BASKET_CENTRE[1], TABLE_HEIGHT)
        return pb.createMultiBody(0, cols[0], vis[0], base_pos,
                                  linkMasses=[0] * 4, linkCollisionShapeIndices=cols[1:],
                                  linkVisualShapeIndices=vis[1:], linkPositions=[(0, 0, 0)] * 4,
                                  linkOrientations=[(0, 0, 0, 1)] * 4, linkInertialFramePositions=[(0, 0, 0)] * 4,
                                  linkInertialFrameOrientations=[(0, 0, 0, 1)] * 4, linkParentIndices=[0] * 4,
                                  linkJointTypes=[pb.JOINT_FIXED] * 4, linkJointAxis=[(0, 0, 1)] * 4,
                                  physicsClientId=self.cid)

    def _spawn(self, spec: ObjectSpec, x: float, y: float) -> int:
        pb = self.pb
        if spec.shape == "box":
            half = [d / 2 for d in spec.dims[:3]]
            col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=self.cid)
            vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=spec.rgba, physicsClientId=self.cid)
            hz = spec.dims[2] / 2
        elif spec.shape == "cylinder":
            r, hgt = spec.dims[0], spec.dims[1]
            col = pb.createCollisionShape(pb.GEOM_CYLINDER, radius=r, height=hgt, physicsClientId=self.cid)
            vis = pb.createVisualShape(pb.GEOM_CYLINDER, radius=r, length=hgt, rgbaColor=spec.rgba,
                                       physicsClientId=self.cid)
            hz = hgt / 2
        else:
            r = spec.dims[0]
            col = pb.createCollisionShape(pb.GEOM_SPHERE, radius=r, physicsClientId=self.cid)
            vis = pb.createVisualShape(pb.GEOM_SPHERE, radius=r, rgbaColor=spec.rgba, physicsClientId=self.cid)
            hz = r
        z = TABLE_HEIGHT + hz + 0.001
        # long side along y: the fingers close along base x (wrist yaw 0), across the narrow side
        yaw = math.pi / 2 if spec.shape == "box" and spec.dims[0] > spec.dims[1] else 0.0
        orn = pb.getQuaternionFromEuler([0, 0, yaw])
        body = pb.createMultiBody(spec.mass, col, vis, [x, y, z], orn, physicsClientId=self.cid)
        pb.changeDynamics(body, -1, lateralFriction=spec.friction, spinningFriction=0.002,
                          rollingFriction=0.001 if spec.shape != "box" else 0.0, physicsClientId=self.cid)
        self.objects[body] = SimObject(body, spec, z)
        return body

    def spawn_objects(self, seed: int, target: str | None = None) -> None:
        """Replace the objects with n_objects drawn from the pool, spaced >= 9 cm apart; `target`
        (a pool object's name) is always among them when the pool has it."""
        for b in list(self.objects):
            self.pb.removeBody(b, physicsClientId=self.cid)
        self.objects.clear()
        rng = np.random.default_rng(seed)
        pool = self._pool or object_pool()
        idx = [int(i) for i in rng.choice(len(pool), size=min(self.n_objects, len(pool)), replace=False)]
        names = [s.name for s in pool]
        if target in names and names.index(target) not in idx:
            idx[0] = names.index(target)
        self.task = target if target in names else pool[idx[0]].name
        placed: list[tuple[float, float]] = []
        for i in idx:
            for _ in range(200):
                x, y = rng.uniform(*SPAWN_X), rng.uniform(SPAWN_Y[1], SPAWN_Y[0])
                if all(math.hypot(x - px, y - py) > 0.09 for px, py in placed):
                    break
            placed.append((x, y))
            self._spawn(pool[int(i)], x, y)
        self._settle()

    def _settle(self) -> None:
        for _ in range(120):
            self.pb.stepSimulation(physicsClientId=self.cid)
        for o in self.objects.values():
            o.rest_z = self.pb.getBasePositionAndOrientation(o.body, physicsClientId=self.cid)[0][2]
