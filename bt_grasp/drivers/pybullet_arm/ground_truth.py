"""Simulator ground truth: object poses, what is held, what is in the basket (scores runs only)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as pb

from bt_grasp.drivers.pybullet_arm import scene
from bt_grasp.drivers.pybullet_arm.params import BASKET_HALF_FRAC


class GroundTruthMixin:
    """GroundTruth protocol queries; never used to drive a run."""

    # Provided by the host class PyBulletArm (driver.py) and its other mixins.
    bodies: Any
    launch_watch: Any
    client: Any
    finger_j: Any
    robot: Any
    spec: Any
    table_id: Any
    _body_name: Any

    def place_region(self, target: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The basket's box in the base frame: the fixture place() drops into (Receptacles)."""
        if target != "basket":
            return None
        half = 0.3 * BASKET_HALF_FRAC
        bx, by, bz = scene.BASKET_POS
        return np.array([bx - half, by - half, bz]), np.array([bx + half, by + half, bz + 0.2])

    def object_names(self) -> dict[int, str]:
        return {b: s.name for b, s in self.bodies.items()}

    def task(self) -> str | None:
        """The scene's target; None when the goal's words fit no object the scene could hold."""
        return self.spec.target if self.spec and not self.spec.absent else None

    def _body_named(self, name: str) -> int | None:
        return next((b for b, s in self.bodies.items() if s.name == name), None)

    def object_pose(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        b = self._body_named(name)
        if b is None:
            return None
        p, o = pb.getBasePositionAndOrientation(b, physicsClientId=self.client)
        return np.array(p), np.array(o)

    def _in_grip(self) -> set[int]:
        """Bodies touching every finger now, from one contact query (held: _held_body, launches.py)."""
        touching: dict[int, set[int]] = {j: set() for j in self.finger_j}
        for c in pb.getContactPoints(bodyA=self.robot, physicsClientId=self.client):
            if c[3] in touching:
                touching[c[3]].add(c[2])
        return set.intersection(*touching.values())

    def _held_body(self) -> int | None:
        grip = self._in_grip()
        for b in (b for b in self.bodies if b in grip):  # only what touches every finger is asked more
            lo, _ = pb.getAABB(b, -1, physicsClientId=self.client)
            if lo[2] > 0.002 and not pb.getContactPoints(b, self.table_id, physicsClientId=self.client):
                return b
        return None

    def contacts_of(self, name: str) -> list[tuple[str, float, float]]:
        """Every contact of object `name` now: (what it touches, penetration in metres, normal
        force in N). How a launch is read step by step (tools/perf/launch_trace.py)."""
        body = self._body_named(name)
        if body is None:
            return []
        out = []
        for c in pb.getContactPoints(bodyA=body, physicsClientId=self.client):
            other, link = c[2], c[4]
            what = ("finger" if link in self.finger_j else "gripper") if other == self.robot else self._body_name(other)
            out.append((what, -float(c[8]), float(c[9])))
        return out

    def launches(self) -> list[dict[str, Any]]:
        """Objects the simulator threw this episode (see launches.py): body, speed, phase, primitive."""
        return [launch.to_json() for launch in self.launch_watch.launches]

    def grip_jumps(self) -> list[dict[str, Any]]:
        """Held objects the solver jumped within the grip this episode (launches.py): not launches."""
        return [jump.to_json() for jump in self.launch_watch.grip_jumps]

    def held_object(self) -> str | None:
        """The object above the table (not touching it) that touches both fingers."""
        b = self._held_body()
        return self.bodies[b].name if b is not None else None

    def object_in_basket(self, name: str) -> bool:
        """Inside the basket's footprint, low, and not held."""
        pose = self.object_pose(name)
        if pose is None:
            return False
        p = pose[0]
        half = 0.3 * BASKET_HALF_FRAC
        bx, by, _ = scene.BASKET_POS
        inside = abs(p[0] - bx) < half and abs(p[1] - by) < half and p[2] < 0.2
        return bool(inside and self.held_object() != name)
