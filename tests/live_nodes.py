"""A leaf that runs across ticks, for live-view tests: RUNNING `ticks` times, then SUCCESS.
Each tick it runs, it advances the logical clock by `step` seconds, as a polled motion would."""

from __future__ import annotations

from py_trees.common import Status

from bt_grasp.nodes.base import Leaf
from bt_grasp.registry import NodeType, Port


class Busy(Leaf):
    TYPE = "busy"
    NODE_TYPE = NodeType("busy", "action", {
        "ticks": Port("ticks", "int", default=3, minimum=0),
        "step": Port("step", "float", default=0.1),
    }, doc="RUNNING `ticks` ticks, then SUCCESS")

    def initialise(self) -> None:
        self.ticks_running = 0

    def update(self) -> Status:
        self.ticks_running += 1
        if self.ticks_running <= int(self.port("ticks")):
            self.ctx.clock.advance(float(self.port("step")))
            return Status.RUNNING
        return Status.SUCCESS
