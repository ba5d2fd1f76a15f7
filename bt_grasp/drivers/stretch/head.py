"""The Stretch's pan/tilt head as the `Head` protocol: `look(pan, tilt)`.

Nodes turn the head through this method, never through `robot.head` (the stretch_body object
model stays behind the Driver seam). It uses only the stretch_body calls the driver already lists
(`robot.head.move_to`, `robot.head.wait_until_at_setpoint`), so the same code runs on hardware and
on the simulated Stretch.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.drivers.base import Execution
from bt_grasp.watchdog.telemetry import Phase, Telemetry

HEAD_TIMEOUT_S = 5.0  # a head move of up to pi rad takes ~2-3 s on a Stretch 3


class StretchHeadMixin:
    """`look` for StretchDriver (uses its `_begin`, `_dry`, `_finish`, `robot` and `clock`)."""

    robot: Any
    clock: Any
    dry_run: bool

    def look(self, pan: float, tilt: float | None = None, timeout: float | None = None) -> Execution:
        """Turn the head camera to `pan` (and `tilt`) radians, wait until it is there.

        Fault "timeout" when the head did not reach the setpoint within `timeout` (default
        HEAD_TIMEOUT_S); the head is then left where it stopped."""
        self._begin("look", None)  # type: ignore[attr-defined]
        if self.dry_run:
            return self._dry("look", Phase.HOLD)  # type: ignore[attr-defined]
        t0 = self.clock.now()
        head = self.robot.head
        head.move_to("head_pan", float(pan))
        if tilt is not None:
            head.move_to("head_tilt", float(tilt))
        arrived = head.wait_until_at_setpoint(HEAD_TIMEOUT_S if timeout is None else max(0.0, float(timeout)))
        info = {"pan": float(pan), "tilt": None if tilt is None else float(tilt)}
        return self._finish("look", Telemetry.empty(), t0, None if arrived else "timeout", info)  # type: ignore[attr-defined]
