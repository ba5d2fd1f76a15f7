"""The Stretch's pan/tilt head as the `Head` protocol: `look(pan, tilt)`.

Nodes turn the head through this method, never through `robot.head` (the stretch_body object
model stays behind the Driver seam). It uses only the stretch_body calls the driver already lists
(`robot.head.move_to`, the head status), so the same code runs on hardware and on the simulated
Stretch.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.drivers.base import Execution


class StretchHeadMixin:
    """`look` for StretchDriver: the head streams like any primitive (navigation.py `_steps_look`)."""

    _blocking: Any

    def look(self, pan: float, tilt: float | None = None, timeout: float | None = None) -> Execution:
        """Turn the head camera to `pan` (and `tilt`) radians and wait until both servos are still.

        Fault "timeout" when the head is still moving after `timeout` (default HEAD_TIMEOUT_S)."""
        return self._blocking("look", pan=pan, tilt=tilt, timeout=timeout)
