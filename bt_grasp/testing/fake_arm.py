"""A robot and a camera without physics, for tests and demos that do not need physics: motions
take `periods` control periods and always succeed, the camera sees a grey table and one red mug
is always found. Fast, deterministic, and a base for bt_grasp.testing.faults to wrap."""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.base import Execution, Observation
from bt_grasp.drivers.motion import MotionHalted, SteppedMotion
from bt_grasp.perception.types import Located, SceneGraph, SceneObject
from bt_grasp.watchdog.telemetry import Telemetry


def _frame(clock: float, size: int = 32) -> Observation:
    f = size / 2 / np.tan(np.radians(25.0))
    K = np.array([[f, 0, size / 2], [0, f, size / 2], [0, 0, 1.0]])
    T = np.array([[0.0, -1, 0, 0.5], [-1, 0, 0, 0], [0, 0, -1, 0.85], [0, 0, 0, 1]])
    return Observation(np.full((size, size, 3), 128, np.uint8), np.full((size, size), 0.85, np.float32), K, T,
                       clock)


class SimulatedTime:
    """A real-time driver's clock (now/sleep) that only advances when slept or moved."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(0.0, seconds)


class FakeArm:
    """A streaming robot without physics: every motion runs `periods` control periods (`slow`:
    per primitive) and ends without a fault; the camera sees a grey table. `calls` records what was called. With
    `realtime`, the run keeps time by its `clock` (a simulated wall clock) as on a real robot."""

    name = "fake_arm"
    control_period = 0.05

    def __init__(self, periods: int = 3, realtime: bool = False, slow: dict[str, int] | None = None) -> None:
        self.periods = periods
        self.slow = dict(slow or {})  # primitive -> its own number of periods (one that outlasts a timeout)
        self.realtime = realtime
        self.calls: list[str] = []
        self.clock = SimulatedTime()

    def reset(self, episode: int = 0, seed: int = 0, target: str | None = None) -> Observation:
        self.calls.append("reset")
        return _frame(self.clock.t)

    def task(self) -> str | None:
        return "red mug"

    def observe(self) -> Observation:
        self.calls.append("observe")
        return _frame(self.clock.t)

    def start(self, primitive: str, /, **kwargs: Any) -> SteppedMotion:
        self.calls.append(f"start {primitive}")
        ran = [0]

        def steps() -> Any:
            try:
                for _ in range(self.slow.get(primitive, self.periods)):
                    ran[0] += 1
                    self.clock.sleep(self.control_period)
                    yield
            except MotionHalted as halt:
                return Execution(Telemetry.empty(), ran[0] * self.control_period, halt.fault)
            return Execution(Telemetry.empty(), ran[0] * self.control_period, None)

        return SteppedMotion(primitive, steps(), Telemetry.empty, lambda: ran[0] * self.control_period)

    def feasible(self, waypoints: list[np.ndarray]) -> tuple[bool, str]:
        return True, ""

    def stop(self) -> None:
        self.calls.append("stop")

    def close(self) -> None:
        self.calls.append("close")


class FakePerceiver:
    """A camera's perception without one: one red mug, always found."""

    name = "fake"

    def survey(self, obs: Observation) -> SceneGraph:
        mug = SceneObject(1, "red mug", "a red mug", (0.5, 0.5), 1,
                          {"centroid_base": [0.5, 0.0, 0.05], "colour": "red"})
        return SceneGraph([mug], [], clock=float(obs.clock))

    def locate(self, obs: Observation, text: str, scene: SceneGraph | None) -> Located | None:
        if "mug" not in text.lower():
            return None
        mask = np.zeros(obs.depth.shape, bool)
        mask[12:20, 12:20] = True
        return Located(1, "red mug", mask, (12, 12, 19, 19), np.array([[0.5, 0.0, 0.05]]), score=0.9)
