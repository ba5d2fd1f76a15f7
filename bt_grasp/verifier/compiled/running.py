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
`ticks_running` leaves the merge key: state.py). A reactive sequence whose earlier children are
guards (`listen`: asked every tick, passing changes nothing) does not make its last child's
call observed: a guard failing at an idle tick has a twin failing at the call's last tick (see
`guard_pass`). A call in an earlier child of a reactive composite is observed: when it ends the
composite moves on, and the next tick starts it anew, so a shorter call makes more calls. In witnesses and counterexamples a
RUNS_TO_MAX step stands for the `max_ticks - 1` "running" answers the Runner's oracle is asked
(`expand_steps`). tests/test_verify_running.py checks, on generated trees with short calls, that
this gives the verdict, bounds and endings of exploring every length of every call.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.composites import ActionBudget, BudgetedRetry, Repeat, Switch
from bt_grasp.nodes.base import STILL_RUNNING, Leaf
from bt_grasp.nodes.conditions import LabelIs
from bt_grasp.py_trees_controls import ForceFailure, ForceSuccess, Inverter, Selector, Sequence

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


def guard_pass(node: Any) -> str | None:
    """A *guard*'s one passing outcome, or None if `node` is no guard.

    A guard is a leaf such as `listen` that a reactive sequence asks again before every tick of
    a running call: its answer is the oracle's, but passing it changes nothing (default update
    and simulate, one tick, no counted call, one success outcome, so the same outcome-port value
    every time). Its failing at an idle tick k of the call halts the call there; failing at the
    call's last tick instead halts it as well and leaves the same state, with the same costs
    and more ticks. So, for a call whose only observers are guards, its longest run with every
    guard passing at the idle ticks stands for all of them, as for an unobserved call.
    """
    if not isinstance(node, Leaf) or node.max_ticks != 1 or not node.alphabet:
        return None
    nt = node.node_type
    if nt.counts_as_action or nt.perception or nt.kind in ("primitive", "terminal"):
        return None
    cls = type(node)
    if any(getattr(cls, name) is not getattr(Leaf, name) for name in ("update", "simulate", "_oracle_tick")):
        return None
    passing = [o for o in node.alphabet if o in node.SUCCESS_OUTCOMES]
    return passing[0] if len(passing) == 1 else None


def _guards_before(parent: Any, child: Any) -> list[tuple[str, str]] | None:
    """The (guard id, passing outcome) pairs a reactive sequence asks before `child` each tick,
    or None if one of its earlier children is neither a guard nor a pure subtree (a reactive
    selector's earlier children must all be pure)."""
    earlier = parent.children[:parent.children.index(child)]
    if not isinstance(parent, Sequence):
        return [] if all(_pure(c) for c in earlier) else None
    guards: list[tuple[str, str]] = []
    for node in earlier:
        # a guard, or a selector that starts with one (`[listen, wait_clarify]`): when the guard
        # passes the selector succeeds at once and ticks nothing else
        guard: Any = node.children[0] if isinstance(node, Selector) and node.children else node
        passing = guard_pass(guard)
        if passing is not None:
            guards.append((guard.node_id, passing))
        elif not _pure(node):
            return None
    return guards


def unobserved_leaves(nodes: list[Any]) -> dict[str, tuple[tuple[str, str], ...]]:
    """The leaves whose calls may span ticks and whose ticks_running nothing observes but guards
    (see the module docstring and `guard_pass`), each with the guards asked at every idle tick
    of its call, outermost first: the search tries only their longest calls."""
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for node in nodes:
        if not isinstance(node, Leaf) or node.max_ticks <= 1 or not node.alphabet or \
                type(node).update is not Leaf.update or type(node)._oracle_tick is not Leaf._oracle_tick:
            continue
        child: Any
        guards: list[tuple[str, str]]
        child, cur, guards = node, node.parent, []
        while cur is not None:
            if isinstance(cur, (Sequence, Selector)):
                if not cur.memory:
                    # a later child: ending the call moves on to it, and the next tick starts
                    # the call anew, so a shorter call means more calls (no longest twin)
                    if child is not cur.children[-1]:
                        break
                    before = _guards_before(cur, child)
                    if before is None:
                        break
                    guards = before + guards
            elif not isinstance(cur, _PASS_THROUGH):
                break
            child, cur = cur, cur.parent
        else:
            out[node.node_id] = tuple(guards)
    return out


def expand_steps(steps: list[Step], max_ticks: dict[str, int],
                 guards: dict[str, tuple[tuple[str, str], ...]] | None = None) -> list[Step]:
    """The steps as the Runner's oracle is asked them: a RUNS_TO_MAX step becomes the
    `max_ticks - 1` "running" answers of a call that spans its maximum, each idle tick's preceded
    by its guards passing."""
    out: list[Step] = []
    for node_id, outcome in steps:
        if outcome == RUNS_TO_MAX:
            leaf_id = node_id[:-len(RUNNING_ID)]
            idle = [*((guards or {}).get(leaf_id, ())), (node_id, STILL_RUNNING)]
            out.append((node_id, STILL_RUNNING))
            for _ in range(max_ticks[leaf_id] - 2):
                out.extend(idle)
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
