"""Conditions: read the blackboard only, so the verifier treats them as deterministic."""

from __future__ import annotations

from py_trees.common import Status

from bt_grasp.nodes.base import Leaf


class LabelIs(Leaf):
    """SUCCESS when the label at `key` equals `label`."""

    TYPE = "label_is"

    def update(self) -> Status:
        if self.ctx.decision is not None:
            return Status.FAILURE
        actual = self.port("key")
        expected = self.params.get("label")
        self.feedback_message = f"{actual} == {expected}"
        return Status.SUCCESS if str(actual) == str(expected) else Status.FAILURE
