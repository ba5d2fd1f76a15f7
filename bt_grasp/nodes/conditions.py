"""Conditions: read the blackboard only, so the verifier treats them as deterministic."""

from __future__ import annotations

from py_trees.common import Status

from bt_grasp.nodes.base import Leaf
from bt_grasp.nodes.declare import leaf_type
from bt_grasp.registry import Port


class LabelIs(Leaf):
    """SUCCESS when the label at `key` equals `label`."""

    NODE_TYPE = leaf_type("label_is", "condition", {
        "key": Port("key", "str", required=True, doc='blackboard label, e.g. "{grasp.label}"'),
        "label": Port("label", "str", required=True, doc="the value to compare with"),
    }, doc="SUCCESS when the blackboard label equals `label`.")

    def update(self) -> Status:
        if self.ctx.decision is not None:
            return Status.FAILURE
        actual = self.port("key")
        expected = self.params.get("label")
        self.feedback_message = f"{actual} == {expected}"
        return Status.SUCCESS if str(actual) == str(expected) else Status.FAILURE
