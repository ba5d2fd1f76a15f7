"""Terminal leaves: they set the episode's Decision; the runner stops after that tick."""

from __future__ import annotations

import re
from typing import Any

from py_trees.common import Status

from bt_grasp.nodes.base import Leaf
from bt_grasp.nodes.declare import leaf_type
from bt_grasp.outcomes import Decision
from bt_grasp.registry import Port

# A reason may quote the goal ("not found: {goal.object}"): the words the user gave, which the
# episode's decision answers. Only goal.* keys, which every episode sets before its first tick.
QUOTES = "may quote the goal: {goal.object} is replaced by its words"
_GOAL_QUOTE = re.compile(r"\{(goal\.[A-Za-z_]\w*)\}")


def quote_goal(reason: str, board: Any) -> str:
    """`reason` with each {goal.*} replaced by its words on `board` (the Runner's and the
    verifier's model alike, so both end a run with the same reason); unknown keys stay as written."""
    return _GOAL_QUOTE.sub(lambda m: str(board.get(m.group(1), m.group(0))), reason)


class _Terminal(Leaf):
    DECISION: Decision

    def update(self) -> Status:
        if self.ctx.decision is not None:
            return Status.FAILURE
        self.ctx.decide(self.DECISION, quote_goal(str(self.port("reason")), self.ctx.blackboard))
        self.feedback_message = f"{self.DECISION.value}: {self.ctx.reason}"
        return Status.SUCCESS


class Finalize(_Terminal):
    NODE_TYPE = leaf_type("finalize", "terminal", {
        "reason": Port("reason", "str", default="done", doc=QUOTES),
    }, doc="End the episode with FINALIZE.")
    DECISION = Decision.FINALIZE


class WaitClarify(_Terminal):
    NODE_TYPE = leaf_type("wait_clarify", "terminal", {
        "reason": Port("reason", "str", default="needs clarification", doc=QUOTES),
    }, doc="End the episode with WAIT_CLARIFY.")
    DECISION = Decision.WAIT_CLARIFY
