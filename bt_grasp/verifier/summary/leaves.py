"""Summaries of leaves: what one call costs, and how it can end (bt_grasp/nodes/base.py guards,
the opaque BT.CPP leaves of bt_grasp/interop/nodes.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.blackboard import ref_key
from bt_grasp.interop.nodes import DEFAULT_OUTCOMES
from bt_grasp.registry import Registry
from bt_grasp.verifier.summary.node_sum import NEVER, TICKS, ZERO, NodeSum
from bt_grasp.verifier.summary.tables import POS, Tables, from_index


def success_outcomes(nt: Any) -> set[str] | None:
    """The outcomes that make a bt_grasp leaf succeed (None: not a fixed set, e.g. label_is)."""
    cls = nt.factory
    if cls is None:
        from bt_grasp.nodes.catalog import LEAF_CLASSES

        cls = LEAF_CLASSES.get(nt.name)
    outs = getattr(cls, "SUCCESS_OUTCOMES", None)
    if nt.name == "label_is" or not outs:
        return None
    return set(outs)


def leaf_summary(reg: Registry, size: int, node: Any, in_budget: bool) -> NodeSum:
    """A leaf: one call per activation (counted once its guard passed), RUNNING for at most
    `max_ticks - 1` ticks (a call spanning ticks; opaque leaves declaring `running`: unbounded);
    an action leaf must spend its action to end live."""
    nt = reg.require(node.type)
    act: Tables = {TICKS: np.zeros(size)}
    tick: dict[str, float] = {}
    writes: dict[str, frozenset[str]] = {}
    if nt.outcome_port:
        raw = node.params.get(nt.outcome_port) or nt.ports[nt.outcome_port].default
        alphabet = set(nt.alphabet(node.params))
        successes = success_outcomes(nt)
        writes = {ref_key(raw) or str(raw): frozenset(alphabet & successes if successes else alphabet)}
    if node.type in ("opaque_action", "opaque_condition"):
        outcomes = tuple(node.params.get("outcomes") or DEFAULT_OUTCOMES)
        key = f"primitive:btcpp.{node.params.get('btcpp_id')}"
        act[key] = np.ones(size)  # counted once per start, however long it runs
        tick[key] = 1.0
        if "running" in outcomes:
            act[TICKS] = np.full(size, POS)
        min_s = ZERO if "success" in outcomes else NEVER
        min_f = ZERO if "failure" in outcomes else NEVER
        return NodeSum(act, {}, tick, min_s, min_f)
    if nt.kind == "terminal":
        return NodeSum(act, {}, tick, NEVER, NEVER)
    keys = []
    if nt.kind == "primitive":
        keys.append(f"primitive:{nt.name}")
    if nt.counts_as_action:
        keys.append("actions")
    if nt.perception:
        keys.append("perception")
    for key in keys:
        act[key] = from_index(1, 1.0, size) if nt.counts_as_action else np.ones(size)
        tick[key] = 1.0
    if nt.max_ticks > 1:  # a call may span max_ticks ticks: max_ticks - 1 RUNNING returns
        act[TICKS] = from_index(1, nt.max_ticks - 1.0, size) if nt.counts_as_action else \
            np.full(size, nt.max_ticks - 1.0)
    min_s, min_f = ZERO, ZERO
    if nt.counts_as_action:
        min_s = (1, 1)
        min_f = ZERO if in_budget else (1, 1)  # a spent scoped budget fails it with no action
    successes = success_outcomes(nt)
    alphabet = nt.alphabet(node.params)  # type: ignore[assignment]  # reuses the name of the set above
    if successes is not None and alphabet and not set(alphabet) & successes:
        min_s = NEVER
    return NodeSum(act, {}, tick, min_s, min_f, writes)
