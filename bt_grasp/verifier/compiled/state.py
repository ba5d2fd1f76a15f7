"""A run's explicit state: saved and restored as plain data, and the key two runs merge on.

The state of a run is every node's `state()` (bt_grasp.resumable) plus the context: blackboard,
clock, ledger, decision and tick count. `RunState.key()` keeps only what can change the future:

- a node's RESET data only while it runs or is on the path of the tick in progress;
- clock times relative to now (a timeout's time left), never the absolute clock;
- the blackboard keys some node reads;
- counters compared against a fixed limit, capped at that limit (a retry scope that has used
  every attempt any of its retries allows is "spent", however many starts it counted);
- not the tick count: it only matters against `max_ticks`, which the search checks separately
  (a merged state is reused only if its longest future still fits before the cap).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from py_trees.behaviour import Behaviour
from py_trees.common import Status

from bt_grasp.blackboard import Blackboard
from bt_grasp.composites import ActionBudget, BudgetedRetry, LogicalTimeout, Switch
from bt_grasp.context import LogicalClock, RunContext
from bt_grasp.interop.nodes import OpaqueDecorator
from bt_grasp.nodes.base import Leaf
from bt_grasp.py_trees_controls import ForceFailure, ForceSuccess, Inverter, Selector, Sequence
from bt_grasp.resumable import NodeState
from bt_grasp.value_key import value_key
from bt_grasp.verifier.compiled.liveness import Liveness

COUNTER = "~"  # cost names that are not reported: the search's own counters
REFUSED = COUNTER + "refused"
STREAK = COUNTER + "streak"  # perception calls; the search counts them only up to an action
RETRY_TICKS = COUNTER + "ticked:"  # + scope: ticks and updates of that scope's retries


@dataclass(frozen=True)
class Snapshot:
    """Everything needed to put a run back exactly where it was at a tick boundary."""

    nodes: tuple[NodeState, ...]
    blackboard: dict[str, Any]
    clock: float
    ledger: dict[str, Any]
    decision: Any
    reason: str
    tick: int
    trial: int
    events: int
    refusals: int = 0
    retry_ticks: tuple[tuple[str, int], ...] = ()


class RunState:
    """One compiled tree and its context: save, restore and the merge key."""

    def __init__(self, root: Behaviour, ctx: RunContext, read_keys: set[str]) -> None:
        self.root, self.ctx, self.read = root, ctx, sorted(read_keys)
        if not isinstance(ctx.clock, LogicalClock):  # restore() sets the time: logical time only
            raise TypeError(f"a searched run keeps logical time, not a {type(ctx.clock).__name__}")
        self.clock: LogicalClock = ctx.clock
        # Resumable behaviours (state/restore/future_state), typed Any: py_trees knows no such API.
        self.nodes: list[Any] = list(root.iterate())
        index = {id(n): i for i, n in enumerate(self.nodes)}
        self.by_name = {n.name: n for n in self.nodes}
        self.index = {n.name: i for i, n in enumerate(self.nodes)}
        # the nodes on the path from the root to each node: the "active" ones while it is ticked
        self.paths: dict[str, frozenset[int]] = {}
        for node in self.nodes:
            path, cur = set(), node
            while cur is not None:
                path.add(index[id(cur)])
                cur = cur.parent
            self.paths[node.name] = frozenset(path)
        # nodes whose future state is constant unless they run or are on the tick's path
        self.quiet = [not n.KEPT and not getattr(n.parent, "READS_CHILD_STATUS", False)
                      for n in self.nodes]
        self.liveness = Liveness(self.nodes, set(self.read))
        for node in self.nodes:  # a running call that its deadline ends before its max_ticks
            timeouts = _timeouts_above(node)
            if isinstance(node, Leaf) and node.max_ticks > 1 and timeouts:
                node._canonical = _deadline_first(node, timeouts, ctx)  # type: ignore[method-assign]
        # actions a named budget refused (the episode's budget let them pass): see costs()
        self.refusals = 0
        # ticks and updates of each retry scope's nodes: the only reads of its start count
        self.retry_ticks: dict[str, int] = {}
        for node in self.nodes:
            if isinstance(node, Leaf) and node.node_type.counts_as_action:
                node._pass_guards = self._counting(node._pass_guards)  # type: ignore[method-assign]
            if isinstance(node, BudgetedRetry):  # it compares when it starts and after its child
                node.tick = self._ticking(node.tick, node.scope)  # type: ignore[method-assign]
                node.update = self._ticking(node.update, node.scope)  # type: ignore[method-assign]
        # with track_changes(): the snapshot the tree was last at, and the nodes touched since
        self.tracking = False
        self.dirty: set[int] = set()
        self._last: Snapshot | None = None
        self.retry_caps: dict[str, int] = {}
        # the smallest limit each counter is compared with: below it, every comparison passes
        self.retry_floor: dict[str, int] = {}
        scope_nodes: dict[str, list[int]] = {}
        for i, node in enumerate(self.nodes):
            if isinstance(node, BudgetedRetry):
                self.retry_caps[node.scope] = max(self.retry_caps.get(node.scope, 0), node.attempts)
                self.retry_floor[node.scope] = min(self.retry_floor.get(node.scope, node.attempts),
                                                   node.attempts)
                scope_nodes.setdefault(node.scope, []).append(i)
        # A retry scope whose only node is started at most once per episode: once that node has
        # started and is no longer running, nothing reads the scope's count again.
        self.once_scopes = {scope: ids[0] for scope, ids in scope_nodes.items()
                            if len(ids) == 1 and not restartable(self.nodes[ids[0]])}
        self.scope_caps: dict[str, int] = {}
        self.scope_floor: dict[str, int] = {}
        for node in self.nodes:
            if isinstance(node, ActionBudget):
                self.scope_caps[node.scope] = max(self.scope_caps.get(node.scope, 0), node.limit)
                self.scope_floor[node.scope] = min(self.scope_floor.get(node.scope, node.limit),
                                                   node.limit)

    def _counting(self, guards: Any) -> Any:
        def counted() -> bool:
            ok = bool(guards())
            if not ok and self.ctx.ledger.actions < self.ctx.limits.actions:
                self.refusals += 1
            return ok
        return counted

    def _ticking(self, tick: Any, scope: str) -> Any:
        def ticked() -> Any:
            self.retry_ticks[scope] = self.retry_ticks.get(scope, 0) + 1
            return tick()
        return ticked

    def track_changes(self) -> None:
        """Note which nodes a tick touches, so that restoring the same snapshot again only puts
        those back. Every change to a node goes through its own or a parent's tick or stop:
        stops are marked here, ticked nodes by the caller (`touched`)."""
        self.tracking = True
        for i, node in enumerate(self.nodes):
            node.stop = _marking(node.stop, self.dirty, i)

    def touched(self, names: list[str]) -> None:
        """Mark nodes as changed (the ones a tick visited, or the path it stopped on)."""
        index = self.index
        self.dirty.update(index[n] for n in names)

    def save(self) -> Snapshot:
        snap = self._save()
        if self.tracking:
            self.dirty.clear()
            self._last = snap
        return snap

    def _node_states(self) -> tuple[NodeState, ...]:
        last = self._last
        if last is None:
            return tuple(n.state() for n in self.nodes)
        states = list(last.nodes)  # untouched nodes share their state with the last snapshot
        for i in self.dirty:
            states[i] = self.nodes[i].state()
        return tuple(states)

    def _save(self) -> Snapshot:
        ctx, led = self.ctx, self.ctx.ledger
        return Snapshot(
            nodes=self._node_states(), blackboard=dict(ctx.blackboard.items()),
            clock=ctx.clock.now,
            ledger={"actions": led.actions, "perception_streak": led.perception_streak,
                    "perception_calls": led.perception_calls,
                    "primitive_calls": dict(led.primitive_calls),
                    "retry_starts": dict(led.retry_starts), "scoped_actions": dict(led.scoped_actions)},
            decision=ctx.decision, reason=ctx.reason, tick=ctx.tick, trial=ctx._trial,
            events=len(ctx.all_events), refusals=self.refusals,
            retry_ticks=tuple(self.retry_ticks.items()))

    def restore(self, snap: Snapshot) -> None:
        last = self._last
        if last is None:
            for node, state in zip(self.nodes, snap.nodes, strict=True):
                node.restore(state)
        else:
            todo = set(self.dirty)
            if snap is not last:
                todo.update(i for i, (a, b) in enumerate(zip(last.nodes, snap.nodes, strict=True)) if a is not b)
            for i in todo:
                self.nodes[i].restore(snap.nodes[i])
        if self.tracking:
            self.dirty.clear()
            self._last = snap
        ctx = self.ctx
        ctx.blackboard = Blackboard(snap.blackboard)
        self.clock.now = snap.clock
        for name, value in snap.ledger.items():
            setattr(ctx.ledger, name, dict(value) if isinstance(value, dict) else value)
        ctx.decision, ctx.reason, ctx.tick, ctx._trial = snap.decision, snap.reason, snap.tick, snap.trial
        self.refusals = snap.refusals
        self.retry_ticks = dict(snap.retry_ticks)
        del ctx.all_events[snap.events:]
        ctx.events = []
        ctx.deadlines = []
        ctx.action_scopes = []
        ctx.world_tick = -1  # snapshots are tick boundaries: no call yet in the coming tick

    def costs(self) -> dict[str, int]:
        """What the report bounds: actions, ticks, perception calls, calls per primitive; and,
        unreported (names starting with COUNTER), the retry starts and actions per named scope,
        the actions a named budget refused, the perception calls (for the streak) and the ticks
        of each retry scope's nodes, whose worst futures let the search share results across
        counter values."""
        led = self.ctx.ledger
        out = {"actions": led.actions, "ticks": self.ctx.tick, "perception": led.perception_calls}
        for name, n in led.primitive_calls.items():
            out[f"primitive:{name}"] = n
        for scope, n in led.retry_starts.items():
            out[f"{COUNTER}retry:{scope}"] = n
        for scope, n in led.scoped_actions.items():
            out[f"{COUNTER}scoped:{scope}"] = n
        if self.refusals:
            out[REFUSED] = self.refusals
        out[STREAK] = led.perception_calls
        for scope, n in self.retry_ticks.items():
            out[RETRY_TICKS + scope] = n
        return out

    def key(self, asking: str | None = None, pending: tuple[str, ...] = ()) -> tuple[Any, ...]:
        """Everything that can change the future, as hashable plain data.

        `asking`: the leaf whose choice is pending (None at a tick boundary); `pending`: the
        outcomes that leaf already chose in this call (a duration is chosen after the outcome).
        """
        ctx, led = self.ctx, self.ctx.ledger
        now = ctx.clock.now
        active = self.paths.get(asking.split("#", 1)[0], frozenset()) if asking else frozenset()
        running, quiet = Status.RUNNING, self.quiet
        nodes = tuple((i, n.future_state(i in active, now)) for i, n in enumerate(self.nodes)
                      if not quiet[i] or n.status is running or i in active)
        bb, dead, index = ctx.blackboard, self.liveness.dead, self.index
        board = tuple((k, value_key(bb.get(k))) for k in self.read
                      if k in bb and not dead(k, active, index))
        limits = ctx.limits
        retry = tuple(sorted((s, self._retry_count(s, n, active)) for s, n in led.retry_starts.items()))
        scoped = tuple(sorted((s, min(n, self.scope_caps.get(s, n))) for s, n in led.scoped_actions.items()))
        return (nodes, board, min(led.actions, limits.actions),
                min(led.perception_streak, limits.perception_streak), retry, scoped,
                ctx.decision, ctx.reason if ctx.decision else None,
                () if ctx.oracle is not None else tuple(round(d - now, 9) for d in ctx.deadlines),
                tuple(ctx.action_scopes),
                asking, pending)

    def _retry_count(self, scope: str, n: int, active: frozenset[int]) -> Any:
        node = self.once_scopes.get(scope)
        if node is not None and n >= 1 and node not in active and \
                self.nodes[node].status is not Status.RUNNING:
            return "finished"
        return min(n, self.retry_caps.get(scope, n))


def _timeouts_above(node: Behaviour) -> list[LogicalTimeout]:
    out, cur = [], node.parent
    while cur is not None:
        if isinstance(cur, LogicalTimeout):
            out.append(cur)
        cur = cur.parent
    return out


def _deadline_first(leaf: Leaf, timeouts: list[LogicalTimeout], ctx: RunContext) -> Any:
    """A call's `ticks_running` changes its future only through its cap (max_ticks). Under a
    timeout, each tick it runs brings the deadline a tick nearer; when the deadline is certain
    before the call can reach its cap, how long it has run already is irrelevant (the ticks the
    timeout has run, in its own state, say everything): it is left out of the key. So the runs
    of a call under a deadline merge by the timeout's ticks, not by those × ticks run."""
    def canonical(reset: tuple[Any, ...], now: float) -> tuple[Any, ...]:
        left = min(t.tick_allowance - t.ticks_run for t in timeouts)
        if reset[0] + max(left, 0) + 2 < leaf.max_ticks:
            return (None,)
        return reset
    return canonical


def _marking(method: Any, dirty: set[int], i: int) -> Any:
    def marked(*args: Any, **kwargs: Any) -> Any:
        dirty.add(i)
        return method(*args, **kwargs)
    return marked


# Nodes that tick a child at most once per activation of their own and never go back to it.
_ONCE = (ActionBudget, LogicalTimeout, Switch, Inverter, ForceSuccess, ForceFailure, OpaqueDecorator)


def restartable(node: Behaviour) -> bool:
    """Can `node` be started more than once in an episode? Only if some ancestor loops or
    re-ticks finished children (retry, repeat, a reactive or parallel composite, ...)."""
    cur = node.parent
    while cur is not None:
        once = isinstance(cur, _ONCE) or (isinstance(cur, (Sequence, Selector)) and cur.memory)
        if not once:
            return True
        cur = cur.parent
    return False
