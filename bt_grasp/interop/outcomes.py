"""The outcome vocabulary of opaque BT.CPP leaves (shared by the nodes, importer and verifier)."""

from __future__ import annotations

from py_trees.common import Status

DEFAULT_OUTCOMES: tuple[str, ...] = ("success", "failure")
# Outcome names an opaque leaf may declare, and the py_trees status each one stands for.
OUTCOME_STATUS = {"success": Status.SUCCESS, "failure": Status.FAILURE, "running": Status.RUNNING}
