"""Collision guard of the Stretch: every waypoint, and the straight path between consecutive
waypoints, is tested against the perceived scene and the robot's own body before anything moves.

Joint ranges say a pose is reachable; they do not say the way there is clear. The guard refuses a
motion whose gripper or arm would pass through (a) points of the last observed depth image, in the
base frame, or (b) the robot itself (mast, base), or whose fingertips would go below the table
top. It refuses with a reason the tree can route on, the arm's convention:
`infeasible: collision: <what> at waypoint i` (or `between waypoints i-1 and i`).

The body model is a handful of axis-aligned boxes (the wrist yaw is always 0 and manipulation
moves the base only along x, so nothing rotates), measured on the RE2V0 URDF shipped by
hello-robot-stretch-urdf: link AABBs at the zero pose, and the gripper's collision geometry probed
on a 1 cm grid with the fingers at 0 and 0.3 rad. Moving boxes are relative to the grasp centre g
(which the kinematics put at x = grasp_x0 + base_dx, y = grasp_y0 - arm, z = grasp_z0 + lift):
  pads           the fingertips, open for a grasp (x +-5 cm); the bottom 2.5 cm below g
  fingers_front  the fingers between the pads and mid-length (they slope up toward the wrist)
  fingers_back   the rear half of the fingers
  wrist          wrist yaw servo, gripper body and puller
  arm            the telescope, from just behind the wrist back to its root at the mast (y 0.106)
Fixed boxes move with the base (x shifted by base_dx):
  base           the mobile base's shell, floor to its top at 0.174 m
  mast           the lift mast, 0.09 m to 1.381 m
The model is conservative (boxes enclose the links); override it per robot by editing this module.

Perceived points are surfaces; the space under each, down to the support, counts as occupied (a
2.5-D height map, what a camera above the table can vouch for). They are ignored where they cannot
be obstacles: up to `support_band_m` above the table top (the surface things rest on; the
fingertip check covers it); inside the robot's own boxes (inflated by `self_margin_m`) at the
configuration the image was taken in, under its fingers (what they may hold) and above its base's
footprint (mast, lift carriage); and inside a vertical cylinder of `target_radius_m` around each
target (the object being grasped or pushed must not block its own motion, as the arm's
`check_objects` ignores the aimed-at body). The scene is the driver's own last observation; it is
forgotten when the base drives off (the odometry frame it was seen in is left behind).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from bt_grasp.drivers.base import GraspPose, Observation
from bt_grasp.errors import UserError
from bt_grasp.perception.geometry import backproject

Box = tuple[tuple[float, float, float], tuple[float, float, float]]

# Moving boxes, relative to the grasp centre (metres).
MOVING: dict[str, Box] = {
    "pads": ((-0.05, -0.035, -0.025), (0.05, 0.05, 0.035)),
    "fingers_front": ((-0.05, 0.05, 0.02), (0.05, 0.11, 0.08)),
    "fingers_back": ((-0.05, 0.11, 0.05), (0.05, 0.17, 0.13)),
    "wrist": ((-0.09, 0.17, 0.06), (0.03, 0.25, 0.21)),
}
ARM_X: tuple[float, float] = (-0.116, 0.025)  # relative to g
ARM_Z: tuple[float, float] = (0.136, 0.202)  # relative to g
ARM_FROM_G_Y = 0.24  # the telescope starts this far behind the grasp centre (+y)
ARM_ROOT_Y = 0.106  # base frame: where the innermost tube leaves the lift carriage
# Fixed boxes, base frame at base_dx = 0.
FIXED: dict[str, Box] = {
    "base": ((-0.289, -0.183, 0.0), (0.061, 0.184, 0.174)),
    "mast": ((-0.089, 0.113, 0.09), (-0.045, 0.157, 1.381)),
}
# Under the fingers at observation time: an object they may hold (ignored in that image only).
HELD: Box = ((-0.07, -0.07, -0.15), (0.07, 0.10, 0.0))


@dataclass
class GuardOptions:
    """driver_options.guard of a Stretch profile (robots/stretch3.yaml explains each)."""

    enabled: bool = True
    voxel_m: float = 0.01
    min_points: int = 3
    target_radius_m: float = 0.06
    support_band_m: float = 0.012
    self_margin_m: float = 0.03
    path_step_m: float = 0.02
    table_tolerance_m: float = 0.002

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None, source: str | None = None) -> GuardOptions:
        """Options from a profile's driver_options.guard; an unknown key is the user's error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d or {}) - known)
        if unknown:
            raise UserError(f"unknown driver_options.guard keys: {', '.join(unknown)} "
                            f"(known: {', '.join(sorted(known))})", file=source)
        return cls(**(d or {}))


@dataclass
class Scene:
    """Perceived surface points (base frame) as a height map: a depth camera sees surfaces, so
    everything under a seen point, down to the support, counts as occupied (the inside of an
    object, or what it hides). Indexed by xy in a KD-tree; empty when nothing was observed."""

    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    tree: cKDTree | None = None

    def __post_init__(self) -> None:
        if self.tree is None and len(self.points):
            self.tree = cKDTree(self.points[:, :2])

    def inside(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The points whose column (support up to the point) meets the box [lo, hi]: xy inside
        its footprint and z at or above its bottom."""
        if self.tree is None or np.any(hi <= lo):
            return np.zeros((0, 3))
        centre, half = (lo[:2] + hi[:2]) / 2, (hi[:2] - lo[:2]) / 2
        idx = self.tree.query_ball_point(centre, float(np.linalg.norm(half)) + 1e-9)
        pts = self.points[idx] if len(idx) else np.zeros((0, 3))
        return pts[np.all((pts[:, :2] >= lo[:2]) & (pts[:, :2] <= hi[:2]), axis=1) & (pts[:, 2] >= lo[2])]


def _box(rel: Box, g: np.ndarray, margin: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    return g + np.asarray(rel[0]) - margin, g + np.asarray(rel[1]) + margin


class StretchGuard:
    """Tests grasp-centre waypoints of a Stretch against its body model and a perceived scene.

    grasp_origin: the kinematics' (grasp_x0, grasp_y0, grasp_z0), the grasp centre at zero joints;
    table_height: the table top z (None: no table check and no support band).
    """

    def __init__(self, grasp_origin: tuple[float, float, float], table_height: float | None,
                 options: GuardOptions | None = None) -> None:
        self.g0 = np.asarray(grasp_origin, dtype=float)
        self.table_height = table_height
        self.opts = options or GuardOptions()
        self.scene = Scene()

    # ------------------------------------------------------------------ geometry
    def moving_boxes(self, g: np.ndarray, margin: float = 0.0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Gripper and arm boxes with the grasp centre at g."""
        boxes = {name: _box(rel, g, margin) for name, rel in MOVING.items()}
        lo = np.array([g[0] + ARM_X[0], g[1] + ARM_FROM_G_Y, g[2] + ARM_Z[0]]) - margin
        hi = np.array([g[0] + ARM_X[1], ARM_ROOT_Y, g[2] + ARM_Z[1]]) + margin
        boxes["arm"] = (lo, hi)
        return boxes

    def fixed_boxes(self, g: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Base and mast, moved along x with the base shift that puts the grasp centre at g."""
        shift = np.array([g[0] - self.g0[0], 0.0, 0.0])
        return {name: (np.asarray(lo) + shift, np.asarray(hi) + shift) for name, (lo, hi) in FIXED.items()}

    # ------------------------------------------------------------------ scene
    def set_scene(self, obs: Observation, g_now: np.ndarray | None) -> int:
        """Keep the obstacle points of an observation; g_now: the grasp centre when it was taken
        (the robot's own links, what it holds and anything above its base's footprint are
        removed). Returns the number of points kept."""
        pts = backproject(obs.depth, obs.K, obs.T_cam_base)
        pts = pts[np.all(np.isfinite(pts), axis=1)]
        if self.table_height is not None:
            pts = pts[pts[:, 2] > self.table_height + self.opts.support_band_m]
        if g_now is not None and len(pts):
            keep = np.ones(len(pts), dtype=bool)
            m = self.opts.self_margin_m
            blo, bhi = self.fixed_boxes(g_now)["base"]  # above the base: mast, carriage, head
            column = (blo - [m, m, np.inf], bhi + [m, m, np.inf])
            boxes = [*self.moving_boxes(g_now, m).values(), _box(HELD, g_now), column]
            for lo, hi in boxes:
                keep &= ~np.all((pts >= lo) & (pts <= hi), axis=1)
            pts = pts[keep]
        if len(pts) and self.opts.voxel_m > 0:
            _, first = np.unique(np.floor(pts / self.opts.voxel_m).astype(np.int64), axis=0, return_index=True)
            pts = pts[np.sort(first)]
        self.set_points(pts)
        return len(pts)

    def set_points(self, points: np.ndarray) -> None:
        """Obstacle points (base frame) as they are: tests and callers with their own cloud."""
        self.scene = Scene(np.asarray(points, dtype=float).reshape(-1, 3))

    def forget(self) -> None:
        """The base frame changed (the robot drove): old points no longer say where things are."""
        self.scene = Scene()

    # ------------------------------------------------------------------ checks
    def hit(self, g: np.ndarray, targets: np.ndarray, scene: bool = True) -> str | None:
        """What the robot with its grasp centre at g would collide with, else None."""
        if self.table_height is not None:
            pads_bottom = g[2] + MOVING["pads"][0][2]
            if pads_bottom < self.table_height - self.opts.table_tolerance_m:
                return "fingertips below the table top"
        moving = {k: (lo, hi) for k, (lo, hi) in self.moving_boxes(g).items() if np.all(lo < hi)}
        fixed = self.fixed_boxes(g)
        for part, (lo, hi) in moving.items():
            for body, (flo, fhi) in fixed.items():
                if np.all(lo < fhi) and np.all(flo < hi):
                    return f"{part} with the robot's {body}"
        if not scene or self.scene.tree is None:
            return None
        los, his = np.array([b[0] for b in moving.values()]), np.array([b[1] for b in moving.values()])
        pts = self.scene.inside(los.min(0), his.max(0))  # one query for the whole arm and gripper
        if len(pts) and len(targets):
            d = np.linalg.norm(pts[:, None, :2] - targets[None, :, :2], axis=2)
            pts = pts[np.all(d > self.opts.target_radius_m, axis=1)]
        if len(pts) < self.opts.min_points:
            return None
        for part, (lo, hi) in moving.items():
            inside = pts[np.all((pts[:, :2] >= lo[:2]) & (pts[:, :2] <= hi[:2]), axis=1) & (pts[:, 2] >= lo[2])]
            if len(inside) >= self.opts.min_points:
                return f"{part} with {len(inside)} perceived points near {np.round(inside.mean(0), 2).tolist()}"
        return None

    def check(self, waypoints: list[np.ndarray], targets: list[np.ndarray] | None = None,
              scene: bool = True, start: np.ndarray | None = None) -> tuple[bool, str]:
        """Every waypoint (grasp-centre xyz) and the straight path between consecutive ones.

        targets: base-frame points whose surroundings (target_radius_m in xy) are the objects
        this motion means to touch; start: where the grasp centre is now (the path from it to
        waypoint 0 is tested, not the start itself; from a start already in collision the path
        counts once it is clear, so the robot can always move out, never deeper in).
        Returns (True, "") or (False, "infeasible: collision: ...")."""
        if not self.opts.enabled:
            return True, ""
        tg = np.asarray([np.asarray(t, dtype=float)[:3] for t in targets or []]).reshape(-1, 3)
        prev = None if start is None else np.asarray(start, dtype=float)[:3]
        escaping = prev is not None and self.hit(prev, tg, scene) is not None
        for i, w in enumerate(waypoints):
            p = np.asarray(w, dtype=float)[:3]
            if prev is not None:
                n = int(np.ceil(np.linalg.norm(p - prev) / self.opts.path_step_m))
                for k in range(1, n):
                    what = self.hit(prev + (p - prev) * k / n, tg, scene)
                    escaping = escaping and what is not None
                    if what and not escaping:
                        where = f"between waypoints {i - 1} and {i}" if i else "on the way to waypoint 0"
                        return False, f"infeasible: collision: {what} {where}"
            what = self.hit(p, tg, scene)
            if what:
                return False, f"infeasible: collision: {what} at waypoint {i}"
            prev = p
        return True, ""


class StretchGuardMixin:
    """The guard inside StretchDriver: keeps the scene of its own last observation, forgets it when
    the base frame changes, and checks waypoints and grasps (uses the driver's `kin`, `opts`,
    `robot`, `faults` and `feasible`)."""

    kin: Any
    opts: Any
    robot: Any
    faults: list[Any]
    _collision_guard: StretchGuard | None = None

    def _guard(self) -> StretchGuard:
        if self._collision_guard is None:
            origin = (self.kin.grasp_x0, self.kin.grasp_y0, self.kin.grasp_z0)
            source = getattr(getattr(self, "profile", None), "source", None)
            self._collision_guard = StretchGuard(origin, self.opts.table_height_m,
                                                 GuardOptions.from_dict(getattr(self.opts, "guard", None), source))
        return self._collision_guard

    def _grasp_centre_now(self) -> np.ndarray | None:
        """Where the grasp centre is now (odometry x, arm, lift), or None before connecting."""
        r = self.robot
        if r is None:
            return None
        return self.kin.grasp_centre(float(r.base.status["x"]), float(r.arm.status["pos"]),
                                     float(r.lift.status["pos"]))

    def _remember_scene(self, obs: Observation) -> None:
        self._guard().set_scene(obs, self._grasp_centre_now())

    def _forget_scene(self) -> None:
        self._guard().forget()

    def _collision_free(self, positions: list[np.ndarray], targets: list[np.ndarray]) -> tuple[bool, str]:
        return self._guard().check(positions, targets)

    def _lift_path_free(self, dz: float) -> tuple[bool, str]:
        """A lift move of dz: the grasp centre goes straight up or down from where it is; what
        the fingers are at (or hold) is the target."""
        g = self._grasp_centre_now()
        if g is None:
            return True, ""
        return self._guard().check([g + np.array([0.0, 0.0, dz])], targets=[g], start=g)

    def _grasp_waypoints(self, target: np.ndarray, clearance: float | None = None) -> list[np.ndarray]:
        """The grasp centre's path in grasp() and place(): up to `clearance` above the target's
        height (never down) where the arm is, across to above the target, down to it (the
        kinematics are linear, so joint moves are straight lines)."""
        dx, arm, lift = self.kin.joints_for(target)
        up = lift + (self.opts.approach_clearance_m if clearance is None else clearance)
        path: list[np.ndarray] = []
        if self.robot is not None:
            up = max(up, float(self.robot.lift.status["pos"]))
            path.append(self.kin.grasp_centre(float(self.robot.base.status["x"]),
                                              float(self.robot.arm.status["pos"]), up))
        return [*path, self.kin.grasp_centre(dx, arm, up), np.asarray(target, dtype=float)]

    def _grasp_path_free(self, target: np.ndarray) -> tuple[bool, str]:
        """Reach and collision along the grasp's path; the target's own object is not an obstacle."""
        return self.feasible(self._grasp_waypoints(target), targets=[target])  # type: ignore[attr-defined]

    def _place_path_free(self, drop: np.ndarray) -> tuple[bool, str]:
        """Reach and collision on the way to a drop point; what the fingers hold now is not an
        obstacle (its points in the last image are where it was picked up)."""
        now = self._grasp_centre_now()
        return self.feasible(self._grasp_waypoints(drop, 0.0),  # type: ignore[attr-defined]
                             targets=[] if now is None else [now])

    def grasp_feasible(self, pose: GraspPose, width: float) -> tuple[bool, str]:
        """The checks grasp() makes before moving, same reasons (GraspChecker), then the pose's
        own (its closing axis); nothing moves and no fault is consumed."""
        target = np.asarray(pose.position, dtype=float)[:3].copy()
        for f in self.faults:
            if f.kind == "grasp_offset" and f.primitive in (None, "grasp"):
                target[0] += float(f.params.get("offset_m", 0.05))
        target[2] = max(target[2], self.opts.table_height_m + self.opts.min_grasp_height_m)
        ok, why = self._grasp_path_free(target)
        return self.feasible([pose]) if ok else (ok, why)  # type: ignore[attr-defined]


def waypoint_target(w: Any) -> np.ndarray | None:
    """A GraspPose waypoint aims at its own object: its position is a target."""
    return np.asarray(w.position, dtype=float)[:3] if isinstance(w, GraspPose) else None
