"""Terminal leaves: they set the episode's Decision; the runner stops after that tick."""

from __future__ import annotations

from py_trees.common import Status

from bt_grasp.nodes.base import Leaf
from bt_grasp.outcomes import Decision


class _Terminal(Leaf):
    DECISION: Decision

    def update(self) -> Status:
        if self.ctx.decision is not None:
            return Status.FAILURE
        self.ctx.decide(self.DECISION, str(self.port("reason")))
        self.feedback_message = f"{self.DECISION.value}: {self.ctx.reason}"
        return Status.SUCCESS


class Finalize(_Terminal):
    TYPE = "finalize"
    DECISION = Decision.FINALIZE


class WaitClarify(_Terminal):
    TYPE = "wait_clarify"
    DECISION = Decision.WAIT_CLARIFY
