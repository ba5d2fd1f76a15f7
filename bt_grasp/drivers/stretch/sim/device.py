"""What every simulated stretch_body device shares: the world, the robot-wide status refresh,
hw_valid, startup/stop, and waiting in simulated time (the real calls block in wall time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bt_grasp.drivers.stretch.sim.stretch_world import StretchWorld

WAIT_POLL_S = 0.1  # stretch_body's wait loops poll every 0.1 s


class _SimPart:
    """Shared plumbing: the world, the robot-wide status refresh, hw_valid, startup/stop."""

    def __init__(self, name: str, world: StretchWorld, refresh: Callable[[], None]) -> None:
        self.name = name
        self._world = world
        self._refresh = refresh
        self.hw_valid = False
        self.params: dict[str, Any] = {}

    def startup(self, threaded: bool = True) -> bool:
        self.hw_valid = True
        return True

    def stop(self) -> None:
        self.hw_valid = False

    def push_command(self) -> None:
        """Dynamixel devices have nothing queued; steppers override."""

    def _wait(self, done: Callable[[], bool], timeout: float) -> bool:
        end = self._world.t + timeout
        self._refresh()
        while not done():
            if self._world.t >= end - 1e-9:
                return False
            self._world.advance(min(WAIT_POLL_S, end - self._world.t), self._refresh)
        return True
