"""Ground truth of a scenario trial: what the fingers hold, where an object rests, and the hook
that records a grasp's result. Scoring only: the tree never sees any of it (simulation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bt_grasp.drivers.capabilities import Streaming
from bt_grasp.drivers.stretch.sim.household import HouseholdWorld


def held_body(world: HouseholdWorld) -> int | None:
    """Ground truth: the body both fingers touch, lifted off its rest height."""
    for b, o in world.objects.items():
        links = {c[3] for c in world.pb.getContactPoints(world.robot, b, physicsClientId=world.cid)}
        if links & world.left_links and links & world.right_links and world.object_position(b)[2] > o.rest_z + 0.005:
            return b
    return None


def body_receptacle(world: HouseholdWorld, body: int) -> str | None:
    x, y, z = world.object_position(body)
    for r in world.receptacles.values():
        if r.rect.contains(x, y) and r.height - 0.02 <= z <= r.height + 0.15:
            return r.name
    return None


def count_picks(driver: Any, after_grasp: Callable[[], None]) -> str:
    """Ground-truth instrumentation, invisible to the tree: call `after_grasp` when a grasp ends.
    A streaming driver's grasps are motions from `start` (counted when one ends by itself); any
    other driver's are calls of `grasp`. Returns the attribute patched on the instance."""
    if isinstance(driver, Streaming):
        start = type(driver).start

        def started(primitive: str, /, **k: Any) -> Any:
            motion = start(driver, primitive, **k)
            return _Watched(motion, after_grasp) if primitive == "grasp" else motion

        driver.start = started  # type: ignore[method-assign]
        return "start"
    grasp = type(driver).grasp

    def called(*a: Any, **k: Any) -> Any:
        ex = grasp(driver, *a, **k)
        after_grasp()
        return ex

    driver.grasp = called  # type: ignore[method-assign]
    return "grasp"


class _Watched:
    """A motion that calls `on_end` once when it ends by itself (not when cancelled)."""

    def __init__(self, motion: Any, on_end: Callable[[], None]) -> None:
        self.motion, self.on_end, self.primitive, self.ended = motion, on_end, motion.primitive, False

    def poll(self) -> Any:
        ex = self.motion.poll()
        if ex is not None and not self.ended:
            self.ended = True
            self.on_end()
        return ex

    def cancel(self, fault: str = "halted") -> Any:
        self.ended = True
        return self.motion.cancel(fault)

    def telemetry(self) -> Any:
        return self.motion.telemetry()

    @property
    def elapsed(self) -> float:
        return self.motion.elapsed
