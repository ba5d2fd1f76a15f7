"""A household room for the simulated Stretch: three receptacles, catalogue objects, a floor map.

The layout is in room.py; household_driver.py drives the Stretch through the room.

What is simulated, and how (beyond what sim/stretch_world.py already says):
- The room is 5 m x 5 m. Its walls exist only in the occupancy grid (no wall bodies): the arm
  may swing over the boundary while the base drives, which real walls would forbid.
- Receptacles are static boxes: a large table (1.2 x 0.6 m), a small table (0.6 x 0.5 m) and a
  cabinet (0.5 x 0.8 m) with a drawer on a prismatic joint, all with their top at 0.55 m (the
  driver's table_height_m, so the unchanged grasp code applies). A low sofa is an obstacle.
- Furniture has declared access sides (a table against a wall is reached from the room side):
  standoff candidates are generated only there.
- The base drives NAV_SPEEDUP (2.5) times faster than stretch_body's default profile (compute).
- Objects are placed in the reach band of a receptacle's front standoff, pass a static filter
  (footprint inside the surface box shrunk by 0.05 m) and a settle check (500 steps at 1/240 s;
  an object that drops more than 0.3 m makes the task invalid: `world.valid` is False).
"""

from __future__ import annotations

import math

import numpy as np

from bt_grasp.bench.objects import ObjectSpec
from bt_grasp.drivers.stretch.sim.room import (
    DRAWER_TRAVEL_M,
    OBSTACLES,
    RECEPTACLES,
    ROOM,
    Placement,
    Receptacle,
)
from bt_grasp.drivers.stretch.sim.scene import object_pool
from bt_grasp.drivers.stretch.sim.stretch_world import StretchWorld
from bt_grasp.mobile.nav import OccupancyGrid

SURFACE_MARGIN_M = 0.05
SETTLE_STEPS = 500
FALL_LIMIT_M = 0.3
# Reach band in the standoff's base frame (where grasps are feasible for the unchanged driver).
REACH_X, REACH_Y = (-0.18, 0.16), (-0.76, -0.58)
# The kinematic base drives this many times faster than stretch_body's 'default' profile
# (0.12 m/s, 0.5 rad/s -> 0.3 m/s, 1.25 rad/s) to keep room-scale episodes affordable; it changes
# only how long driving takes in sim time, not any manipulation physics.
NAV_SPEEDUP = 2.5


def pool_by_name() -> dict[str, ObjectSpec]:
    return {s.name: s for s in object_pool()}


class HouseholdWorld(StretchWorld):
    """StretchWorld whose scene is the room of room.py; base pose is odometry relative to an anchor."""

    def __init__(self, gui: bool = False, seed: int = 0, n_objects: int = 4) -> None:
        self.anchor = np.zeros(3)  # world pose of the odometry origin
        self.receptacles = {r.name: r for r in RECEPTACLES}
        self.receptacle_bodies: dict[str, int] = {}
        self.layout: list[Placement] | None = None
        self.valid = True
        self.invalid_reason = ""
        self.at: str | None = None  # receptacle whose standoff the robot is at
        self.start_pose = np.zeros(3)
        super().__init__(gui=gui, seed=seed, n_objects=n_objects)
        self.grid = self._grid()

    # ------------------------------------------------------------------ scene
    def _add_table(self) -> int:
        pb = self.pb
        xmin, xmax, ymin, ymax = ROOM
        self._add_floor(((xmax - xmin) / 2, (ymax - ymin) / 2, 0.005), ((xmin + xmax) / 2, (ymin + ymax) / 2, -0.005),
                        (0.55, 0.55, 0.55, 1.0))
        for r in RECEPTACLES:
            if r.articulated:
                body = self._add_cabinet(r)
            else:
                body = self._box((r.rect.sx / 2, r.rect.sy / 2, r.height / 2), (r.rect.cx, r.rect.cy, r.height / 2),
                                 r.colour)
            pb.changeDynamics(body, -1, lateralFriction=0.8, physicsClientId=self.cid)
            self.receptacle_bodies[r.name] = body
        for _name, rect, h in OBSTACLES:
            self._box((rect.sx / 2, rect.sy / 2, h / 2), (rect.cx, rect.cy, h / 2), (0.3, 0.35, 0.5, 1))
        return self.receptacle_bodies["large table"]

    def _add_cabinet(self, r: Receptacle) -> int:
        """Carcass (a static box) with one drawer link on a prismatic joint sliding out of the -x face."""
        pb, c = self.pb, self.cid
        half = (r.rect.sx / 2, r.rect.sy / 2, r.height / 2)
        col = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half, physicsClientId=c)
        vis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=half, rgbaColor=r.colour, physicsClientId=c)
        dh = (0.02, 0.3, 0.06)  # drawer front panel; the handle is a small bar on it
        dcol = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=dh, physicsClientId=c)
        dvis = pb.createVisualShape(pb.GEOM_BOX, halfExtents=dh, rgbaColor=(0.6, 0.45, 0.3, 1), physicsClientId=c)
        body = pb.createMultiBody(0, col, vis, (r.rect.cx, r.rect.cy, r.height / 2),
                                  linkMasses=[0.5], linkCollisionShapeIndices=[dcol], linkVisualShapeIndices=[dvis],
                                  linkPositions=[(-half[0] - dh[0], 0, 0.1)], linkOrientations=[(0, 0, 0, 1)],
                                  linkInertialFramePositions=[(0, 0, 0)], linkInertialFrameOrientations=[(0, 0, 0, 1)],
                                  linkParentIndices=[0], linkJointTypes=[pb.JOINT_PRISMATIC],
                                  linkJointAxis=[(-1, 0, 0)], physicsClientId=c)
        pb.changeDynamics(body, 0, jointLowerLimit=0.0, jointUpperLimit=DRAWER_TRAVEL_M, physicsClientId=c)
        self.drawer_target = 0.0
        pb.setJointMotorControl2(body, 0, pb.POSITION_CONTROL, targetPosition=0.0, force=200.0, physicsClientId=c)
        return body

    def _add_basket(self) -> int:
        """No basket in the room: receptacles take its role."""
        return -1

    def _grid(self) -> OccupancyGrid:
        g = OccupancyGrid.room(*ROOM)
        for k, r in enumerate(RECEPTACLES, start=1):
            g.add_rect(r.rect, k, r.name)
        for k, (name, rect, _h) in enumerate(OBSTACLES, start=100):
            g.add_rect(rect, k, name)
        return g

    def _step_base(self, dt: float) -> None:
        super()._step_base(dt * NAV_SPEEDUP)

    # ------------------------------------------------------------------ odometry anchor
    def _set_base_pose(self, x: float, y: float, th: float) -> None:
        ax, ay, ath = self.anchor
        wx = ax + x * math.cos(ath) - y * math.sin(ath)
        wy = ay + x * math.sin(ath) + y * math.cos(ath)
        super()._set_base_pose(wx, wy, ath + th)

    def _base_T(self) -> np.ndarray:
        x, y, th = self.world_pose()
        T = np.eye(4)
        T[:2, :2] = [[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]]
        T[0, 3], T[1, 3] = x, y
        return T

    def world_pose(self) -> np.ndarray:
        ax, ay, ath = self.anchor
        x, y, th = self.base_pose
        return np.array([ax + x * math.cos(ath) - y * math.sin(ath), ay + x * math.sin(ath) + y * math.cos(ath),
                         ath + th])

    def to_odom(self, x: float, y: float) -> tuple[float, float]:
        ax, ay, ath = self.anchor
        dx, dy = x - ax, y - ay
        return dx * math.cos(ath) + dy * math.sin(ath), -dx * math.sin(ath) + dy * math.cos(ath)

    def anchor_here(self) -> None:
        """Make the current base pose the odometry origin (see the module docstring for why)."""
        self.anchor = self.world_pose()
        self.base_pose[:] = 0.0

    def _home_pose(self) -> None:
        self.anchor = np.array(self.start_pose, dtype=float)
        super()._home_pose()

    # ------------------------------------------------------------------ objects
    def reset(self, seed: int = 0, target: str | None = None) -> None:
        self.at = None
        if hasattr(self, "receptacle_bodies") and "cabinet" in self.receptacle_bodies:
            self.set_drawer(0.0, instant=True)
        super().reset(seed=seed, target=target)

    def slot_world(self, rec: Receptacle, slot: tuple[float, float]) -> tuple[float, float, float]:
        sx, sy, sth = rec.standoff()
        bx, by = slot
        return (sx + bx * math.cos(sth) - by * math.sin(sth), sy + bx * math.sin(sth) + by * math.cos(sth), sth)

    def spawn_objects(self, seed: int, target: str | None = None) -> None:
        """Place self.layout (or a seeded default: n_objects over the two tables), filter, settle."""
        for b in list(self.objects):
            self.pb.removeBody(b, physicsClientId=self.cid)
        self.objects.clear()
        rng = np.random.default_rng(seed)
        pool = pool_by_name()
        names = sorted(pool)
        layout = list(self.layout) if self.layout else None
        if layout is None:
            picks = [names[int(i)] for i in rng.choice(len(names), size=self.n_objects, replace=False)]
            if target in pool and target not in picks:
                picks[0] = target
            layout = [Placement(n, "large table" if k % 2 == 0 else "small table") for k, n in enumerate(picks)]
        self.task = target if target in pool else layout[0].name
        self.valid, self.invalid_reason = True, ""
        placed: dict[str, list[tuple[float, float]]] = {}
        for p in layout:
            rec = self.receptacles[p.receptacle]
            spec = pool[p.name]
            slot = p.slot
            if slot is None:
                for _ in range(200):
                    slot = (float(rng.uniform(*REACH_X)), float(rng.uniform(*REACH_Y)))
                    if all(math.dist(slot, q) > 0.10 for q in placed.get(rec.name, [])):
                        break
            assert slot is not None
            placed.setdefault(rec.name, []).append(slot)
            x, y, th = self.slot_world(rec, slot)
            if not self._static_ok(rec, spec, x, y):
                self.valid, self.invalid_reason = False, f"{spec.name} fails the static filter on {rec.name}"
                continue
            body = self._spawn(spec, x, y)
            if th:
                pos, orn = self.pb.getBasePositionAndOrientation(body, physicsClientId=self.cid)
                yaw = self.pb.getEulerFromQuaternion(orn)[2] + th
                self.pb.resetBasePositionAndOrientation(body, pos, self.pb.getQuaternionFromEuler([0, 0, yaw]),
                                                        physicsClientId=self.cid)
        self._settle()

    def _static_ok(self, rec: Receptacle, spec: ObjectSpec, x: float, y: float) -> bool:
        from bt_grasp.bench.catalogue import extents

        ex = extents(spec)
        r = max(ex[0], ex[1]) / 2
        return all(rec.rect.contains(x + dx, y + dy, SURFACE_MARGIN_M) for dx in (-r, r) for dy in (-r, r))

    def _settle(self) -> None:
        """500 steps at 1/240 s; an object that drops > 0.3 m invalidates the task."""
        start = {b: self.object_position(b)[2] for b in self.objects}
        for _ in range(SETTLE_STEPS):
            self.pb.stepSimulation(physicsClientId=self.cid)
        for b, o in self.objects.items():
            z = self.object_position(b)[2]
            o.rest_z = z
            if start[b] - z > FALL_LIMIT_M:
                self.valid, self.invalid_reason = False, f"{o.spec.name} fell {start[b] - z:.2f} m while settling"

    # ------------------------------------------------------------------ drawer
    def drawer_position(self) -> float:
        body = self.receptacle_bodies["cabinet"]
        return float(self.pb.getJointState(body, 0, physicsClientId=self.cid)[0])

    def set_drawer(self, q: float, instant: bool = False) -> None:
        body = self.receptacle_bodies["cabinet"]
        self.pb.setJointMotorControl2(body, 0, self.pb.POSITION_CONTROL, targetPosition=q, maxVelocity=0.2,
                                      force=200.0, physicsClientId=self.cid)
        if instant:
            self.pb.resetJointState(body, 0, q, physicsClientId=self.cid)

    # ------------------------------------------------------------------ ground truth
    def receptacle_of(self, name: str) -> str | None:
        """Which receptacle's surface box holds the object (by xy, within 0.15 m above the top)."""
        b = self._body_by_name(name)
        if b is None:
            return None
        x, y, z = self.object_position(b)
        for r in RECEPTACLES:
            if r.rect.contains(x, y) and r.height - 0.02 <= z <= r.height + 0.15:
                return r.name
        return None

    def object_in_basket(self, name: str) -> bool:
        return False
