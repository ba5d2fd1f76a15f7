"""Calls that span ticks, in the verifier's search: which ones anything observes, and the steps
that stand for a call running to its maximum.

A primitive's call may run for up to its NodeType's `max_ticks` ticks: under the oracle, each
tick it asks `<id>#running` whether it goes on ("running") or ends now. How long it ran
matters only to something that looks while it runs (an observer): a `timeout`
above it (the clock moves one tick period per tick), a reactive or parallel composite above it
that ticks other children meanwhile, or anything not known to pass RUNNING straight through.
A leaf with no observer is *unobserved*: while it runs, a tick of the tree changes nothing but
the tick count, the clock and the leaf's own `ticks_running` (its ancestors pass RUNNING up; a
reactive ancestor's earlier children are pure `label_is` conditions that read a blackboard no
one writes meanwhile). Its call ending after k ticks leads to the same state as ending after
k' > k ticks, k' - k ticks later: the state key ignores the clock (only time left before a
deadline counts, and none is running) and the tick count (checked against the cap separately).
So a run with a shorter call has a twin with the longest call: the same choices, the same
costs but more ticks, the same ending — or, if the twin meets the tick cap first, a
counterexample that is itself a real run. Every bound, ending and counterexample is therefore
found among runs whose unobserved calls all run to their maximum, and the search explores
only those (a one-way choice, RUNS_TO_MAX, kept so that witnesses show it); "ends at once", what
a blocking driver does, adds nothing. RUNS_TO_MAX answers "running", and the Machine then skips
the idle ticks in one step (`skip_idle_ticks`: the tick count, the clock tick by tick,
`ticks_running` and the retry counters move exactly as that many real ticks would move them) to
the call's last tick, where the leaf picks its outcome. Observed leaves are explored tick by
tick: "ends" or "running" at every tick (under a deadline that halts the call before its cap,
`ticks_running` leaves the merge key: state.py). In witnesses and counterexamples a
RUNS_TO_MAX step stands for the `max_ticks - 1` "running" answers the Runner's oracle is asked
(`expand_steps`). tests/test_verify_running.py checks, on generated trees with short calls, that
this gives the verdict, bounds and endings of exploring every length of every call.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.composites import ActionBudget, BudgetedRetry, Repeat, Switch
from bt_grasp.nodes.base import STILL_RUNNING, Leaf
from bt_grasp.nodes.conditions import LabelIs
from bt_grasp.standard import ForceFailure, ForceSuccess, Inverter, Selector, Sequence

Step = tuple[str, str]  # (choice id, outcome)
RUNNING_ID = "#running"                # suffix of the choice a running call asks each tick
RUNS_TO_MAX = "runs to its maximum"    # an unobserved call's only choice: it runs max_ticks ticks
# Nodes that, while a child runs, tick only that child and pass its RUNNING up unchanged.
_PASS_THROUGH = (BudgetedRetry, Repeat, ActionBudget, Switch, Inverter, ForceSuccess, ForceFailure)


def _pure(node: Any) -> bool:
    """A subtree whose ticks read the blackboard only (label_is conditions under plain controls):
    ticked again while nothing writes, it returns the same status and changes nothing."""
    if isinstance(node, Leaf):
        return isinstance(node, LabelIs)
    if not isinstance(node, (Sequence, Selector, Inverter, ForceSuccess, ForceFailure)):
        return False
    return all(_pure(c) for c in node.children)


def unobserved_leaves(nodes: list[Any]) -> set[str]:
    """Ids of the leaves whose calls may span ticks and whose ticks_running nothing observes
    (see the module docstring): the search tries only their longest calls."""
    out = set()
    for node in nodes:
        if not isinstance(node, Leaf) or node.max_ticks <= 1 or not node.alphabet or \
                type(node).update is not Leaf.update or type(node)._oracle_tick is not Leaf._oracle_tick:
            continue
        child, cur, seen = node, node.parent, True
        while cur is not None and seen:
            if isinstance(cur, (Sequence, Selector)):
                seen = cur.memory or all(_pure(c) for c in cur.children[:cur.children.index(child)])
            else:
                seen = isinstance(cur, _PASS_THROUGH)
            child, cur = cur, cur.parent
        if seen:
            out.add(node.node_id)
    return out


def expand_steps(steps: list[Step], max_ticks: dict[str, int]) -> list[Step]:
    """The steps as the Runner's oracle is asked them: a RUNS_TO_MAX step becomes the
    `max_ticks - 1` "running" answers of a call that spans its maximum."""
    out: list[Step] = []
    for node_id, outcome in steps:
        if outcome == RUNS_TO_MAX:
            out.extend([(node_id, STILL_RUNNING)] * (max_ticks[node_id[:-len(RUNNING_ID)]] - 1))
        else:
            out.append((node_id, outcome))
    return out


def retry_scopes_above(leaf: Leaf) -> list[str]:
    """The scope of every retry above `leaf`, once per retry (each counts its tick and update)."""
    scopes, cur = [], leaf.parent
    while cur is not None:
        if isinstance(cur, BudgetedRetry):
            scopes.append(cur.scope)
        cur = cur.parent
    return scopes


def skip_idle_ticks(state: Any, leaf: Leaf, tick_cap: int, scopes: list[str]) -> None:
    """An unobserved call that runs to its maximum: move the run (a RunState) to the tick before
    the call's last one, as the idle ticks in between would, no further than the tick cap."""
    ctx = state.ctx
    n = min(leaf.max_ticks - 1 - leaf.ticks_running, tick_cap - ctx.tick)
    if n <= 0:
        return
    for _ in range(n):  # tick by tick, so that the clock's float sums are the Runner's
        ctx.clock.end_tick(ctx.clock.now)
    ctx.tick += n
    leaf.ticks_running += n
    for scope in scopes:  # each idle tick: the retry's tick and its update
        state.retry_ticks[scope] = state.retry_ticks.get(scope, 0) + 2 * n
    state.dirty.add(state.index[leaf.name])
