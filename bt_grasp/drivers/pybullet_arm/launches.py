"""Launches: objects the simulator throws. Ground truth for scoring only; no tree ever sees it.

Objects are multibodies, and Bullet's multibody solver has no split impulse: it removes a
penetration by velocity, about ERP x depth / dt, so a finger forced a few millimetres into an
object can fling it at metres per second. Nothing a real gripper does on a table moves a loose
object at 1 m/s, so a body faster than that, sideways or upwards, is a simulator defect, counted
for every method alike. Falling is not a launch: a body dropped or slid off the table gains speed
downwards only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import pybullet as pb

LAUNCH_SPEED_MPS = 1.0
# Checked once every this many physics steps (30 Hz at 1/240 s), about 5 us per body each time: a
# body thrown at 1.6 m/s and sliding on the table (friction ~0.5) stays over 1 m/s for ~0.1 s, and
# one in flight longer, so a check every 33 ms sees it while costing ~2 % of a physics step.
CHECK_EVERY = 8


@dataclass
class Launch:
    """One body thrown during one primitive call: its peak speed and when it was first seen."""

    body: str           # the object's name
    speed: float        # peak launch speed (m/s): horizontal or upward
    phase: str          # the motion phase it was first seen in (approach, close, lift...)
    primitive: str      # the primitive running (grasp, push, lift, place, open_gripper)
    clock: float        # the driver's clock (s) when first seen

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "speed": round(self.speed, 3), "clock": round(self.clock, 3)}


def launch_speed(linear: tuple[float, float, float]) -> float:
    """The speed that counts: horizontal or upward, never the downward speed of a fall."""
    vx, vy, vz = linear
    return max(math.hypot(vx, vy), vz)


class LaunchWatch:
    """Keeps every launch of an episode, one entry per (body, primitive call) at its peak."""

    def __init__(self) -> None:
        self.launches: list[Launch] = []
        self._open: dict[tuple[str, int], Launch] = {}
        self.call = 0

    def reset(self) -> None:
        self.launches, self._open, self.call = [], {}, 0

    def begin_call(self) -> None:
        """A primitive starts: a body thrown again in it is another launch."""
        self.call += 1

    def check(self, client: int, bodies: dict[int, Any], carried: Callable[[int], bool], clock: float,
              phase: str, primitive: str) -> None:
        """Record every body in `bodies` (id -> spec with .name) moving over the threshold unless
        `carried(body)` (held by the gripper, it moves with it; asked only of fast bodies)."""
        for body, spec in bodies.items():
            linear, _ = pb.getBaseVelocity(body, physicsClientId=client)
            speed = launch_speed(linear)
            if speed <= LAUNCH_SPEED_MPS or carried(body):
                continue
            key = (spec.name, self.call)
            seen = self._open.get(key)
            if seen is None:
                seen = self._open[key] = Launch(spec.name, speed, phase, primitive, clock)
                self.launches.append(seen)
            else:
                seen.speed = max(seen.speed, speed)
