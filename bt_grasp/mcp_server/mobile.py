"""nav_to / gaze_at leaves for the tool server, registered only in the server's own registry.

A tool call must run as a bt_grasp tree (so the episode's clock, events and decision
short-circuit apply) with the call's own arguments as ports. These two leaves are plain primitives
that do not count as actions, exactly like lift/place; they live here, not in bt_grasp/nodes,
so the shipped registry (and the verifier's view of shipped trees) is unchanged.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.capabilities import MobileBase
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.primitives import _exec_meta, _outcome_of
from bt_grasp.registry import NodeType, Port, Registry

MOTION_OUT = ("done", "infeasible", "fault")


class NavTo(Leaf):
    """Drive the base to (x, y[, theta]) in the driver's odometry frame, or to a named place
    when the driver knows names (the value is passed through unchanged)."""

    TYPE = "nav_to"
    SUCCESS_OUTCOMES = frozenset({"done"})

    def execute(self) -> LeafResult:
        pose = self.port("pose")
        execution = _mobile(self).nav_to(pose, timeout=self.ctx.remaining_time())
        return _motion_result(self, execution, pose=pose if isinstance(pose, str) else _floats(pose))


class GazeAt(Leaf):
    """Point the camera at a base-frame point."""

    TYPE = "gaze_at"
    SUCCESS_OUTCOMES = frozenset({"done"})

    def execute(self) -> LeafResult:
        point = self.port("point")
        execution = _mobile(self).gaze_at(point, timeout=self.ctx.remaining_time())
        return _motion_result(self, execution, point=_floats(point))


def _mobile(leaf: Leaf) -> MobileBase:
    """The driver as a MobileBase (the server registers these leaves only for such a driver)."""
    driver = leaf.ctx.need_driver()
    if not isinstance(driver, MobileBase):
        raise RuntimeError(f"driver {driver.name!r} has no nav_to/gaze_at (not a MobileBase)")
    return driver


def _motion_result(leaf: Leaf, execution: Execution, **args: Any) -> LeafResult:
    """The leaf's result for one finished motion; its event also records the call's arguments."""
    return leaf.result(_outcome_of(execution), duration=execution.duration,
                       event_meta={**_exec_meta(execution), **args})


def _floats(values: Any) -> list[float] | None:
    try:
        return [round(float(v), 4) for v in values]
    except (TypeError, ValueError):
        return None


MOBILE_TYPES = (
    NodeType("nav_to", "primitive", {
        "pose": Port("pose", "any", default="{tool.pose}", doc="(x, y[, theta]) in the odometry frame, or a place name"),
        "outcome": Port("outcome", "key", default="nav_to.outcome", doc="done | infeasible | fault"),
    }, outcomes=MOTION_OUT, outcome_port="outcome", factory=NavTo,
        doc="Drive the mobile base to a pose (tool server only)."),
    NodeType("gaze_at", "primitive", {
        "point": Port("point", "any", default="{tool.point}", doc="(x, y, z) in the base frame"),
        "outcome": Port("outcome", "key", default="gaze_at.outcome", doc="done | infeasible | fault"),
    }, outcomes=MOTION_OUT, outcome_port="outcome", factory=GazeAt,
        doc="Point the camera at a point (tool server only)."),
)


def register_mobile(reg: Registry) -> Registry:
    """Add the mobile leaves to `reg`, a private copy (never the shared default registry).

    They replace any same-named core type in that copy, so the tool trees keep these ports
    even if the core later grows its own nav_to/gaze_at with different ones."""
    for nt in MOBILE_TYPES:
        reg.add(nt, replace=True)
    return reg
