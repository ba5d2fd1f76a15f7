"""Launches: objects the simulator throws. Ground truth for scoring only; no tree ever sees it.

Objects are multibodies, and Bullet's multibody solver has no split impulse: it removes a
penetration by velocity, about ERP x depth / dt, so a finger forced a few millimetres into an
object can fling it at metres per second. Nothing a real gripper does on a table moves a loose
object at 1 m/s, so a body faster than that, sideways or upwards, is a simulator defect, counted
for every method alike. Falling is not a launch: a body dropped or slid off the table gains speed
downwards only. Nor is a jump within the grip: a held object the solver shifts a few millimetres
in one step (one finger's penetration pushed out, the other following) touches one finger at
that instant, but if it was held at the check before and is held again at the next it never
left the gripper. Those are kept apart as grip jumps, a defect of the same physics that moves
nothing out of the gripper.
"""

from __future__ import annotations

import math
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
    """One body thrown: its peak speed, and the phase, primitive and time it was first seen in."""

    body: str           # the object's name
    speed: float        # peak launch speed (m/s): horizontal or upward
    phase: str          # the motion phase it was first seen in (approach, close, lift...)
    primitive: str      # the primitive running then (grasp, push, lift, place, open_gripper)
    clock: float        # the driver's clock (s) when first seen

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "speed": round(self.speed, 3), "clock": round(self.clock, 3)}


def launch_speed(linear: tuple[float, float, float]) -> float:
    """The speed that counts: horizontal or upward, never the downward speed of a fall."""
    vx, vy, vz = linear
    return max(math.hypot(vx, vy), vz)


class LaunchWatch:
    """Keeps every launch of an episode: one entry per flight (a body over the threshold from the
    check that first sees it to the first check that finds it slower or held), at its peak
    speed. A flight spanning several primitive calls is one launch, named by the call it started
    in. A flight that starts from the grip (held at the check before) and ends in it at the very
    next check is a grip jump, not a launch."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.launches: list[Launch] = []
        self.grip_jumps: list[Launch] = []
        self._flying: dict[int, Launch] = {}
        self._from_grip: set[int] = set()  # flights seen once so far that started from the grip
        self._held: set[int] = set()       # bodies in the grip at the last check

    def velocity(self, world: Any, body: int) -> tuple[float, float, float]:
        """A body's linear velocity (m/s) in the world the driver steps (here a PyBullet client)."""
        linear, _ = pb.getBaseVelocity(body, physicsClientId=world)
        return linear

    def check(self, world: Any, bodies: dict[int, Any], held: set[int], clock: float, phase: str,
              primitive: str) -> None:
        """Record every body in `bodies` (id -> spec with .name) moving over the threshold that is
        not in `held` (touching every finger now: it moves with the gripper)."""
        for body, spec in bodies.items():
            speed = launch_speed(self.velocity(world, body))
            flight = self._flying.get(body)
            if speed <= LAUNCH_SPEED_MPS or body in held:
                if flight is not None:
                    del self._flying[body]
                    if body in self._from_grip and body in held:  # it never left the grip
                        self.launches.remove(flight)
                        self.grip_jumps.append(flight)
                    self._from_grip.discard(body)
                continue
            if flight is None:
                self._flying[body] = Launch(spec.name, speed, phase, primitive, clock)
                self.launches.append(self._flying[body])
                if body in self._held:
                    self._from_grip.add(body)
            else:  # still fast a check later, and out of the grip: thrown
                flight.speed = max(flight.speed, speed)
                self._from_grip.discard(body)
        self._held = set(held)
