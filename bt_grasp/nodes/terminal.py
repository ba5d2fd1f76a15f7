"""Terminal leaves: they set the episode's Decision; the runner stops after that tick."""

from __future__ import annotations

from py_trees.common import Status

from bt_grasp.nodes.base import Leaf
from bt_grasp.nodes.declare import leaf_type
from bt_grasp.outcomes import Decision
from bt_grasp.registry import Port


class _Terminal(Leaf):
    DECISION: Decision

    def update(self) -> Status:
        if self.ctx.decision is not None:
            return Status.FAILURE
        self.ctx.decide(self.DECISION, str(self.port("reason")))
        self.feedback_message = f"{self.DECISION.value}: {self.ctx.reason}"
        return Status.SUCCESS


class Finalize(_Terminal):
    NODE_TYPE = leaf_type("finalize", "terminal", {
        "reason": Port("reason", "str", default="done"),
    }, doc="End the episode with FINALIZE.")
    DECISION = Decision.FINALIZE


class WaitClarify(_Terminal):
    NODE_TYPE = leaf_type("wait_clarify", "terminal", {
        "reason": Port("reason", "str", default="needs clarification"),
    }, doc="End the episode with WAIT_CLARIFY.")
    DECISION = Decision.WAIT_CLARIFY
