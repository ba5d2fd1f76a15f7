"""A node plug-in: `example_note` writes which driver and perceiver the run uses, and what the
perceiver has done so far, to the blackboard (so a trace shows the plug-ins at work)."""

from __future__ import annotations

from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.registry import NodeType, Port


class Note(Leaf):
    TYPE = "example_note"
    SUCCESS_OUTCOMES = frozenset({"noted"})
    NODE_TYPE = NodeType("example_note", "action", {
        "result": Port("result", "key", default="{note}", doc="where the note is written"),
    }, outcomes=("noted",), doc="Notes the run's driver and perceiver on the blackboard.")

    def execute(self) -> LeafResult:
        driver, perceiver = self.ctx.driver, self.ctx.perceiver
        note = {"driver": getattr(driver, "name", type(driver).__name__),
                "perceiver": getattr(perceiver, "name", type(perceiver).__name__),
                "surveys": getattr(perceiver, "surveys", None),
                "commands": list(getattr(driver, "commands", []))}
        return self.result("noted", {self.out_key("result"): note})
