"""The compiled tree driven from one point of the search to the next (bt_grasp/verifier/compiled/search.py).

The Machine is the tree's oracle. An advance restores a tick-start snapshot, replays the choices
already made in that tick and runs to the next point: a choice not yet made, a tick boundary,
an ending or a problem. Calls that span ticks are advanced as bt_grasp/verifier/compiled/running.py
explains.
"""

from __future__ import annotations

from typing import Any

from py_trees.common import Status

from bt_grasp.blackboard import Blackboard
from bt_grasp.compile import compile_tree
from bt_grasp.composites import LogicalTimeout
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.nodes.base import STILL_RUNNING, Leaf
from bt_grasp.registry import Registry
from bt_grasp.verifier.compiled.running import (
    RUNNING_ID,
    RUNS_TO_MAX,
    retry_scopes_above,
    skip_idle_ticks,
    unobserved_leaves,
)
from bt_grasp.verifier.compiled.state import RunState, Snapshot
from bt_grasp.verifier.transitions import AtChoice, Point, ReplayState

__all__ = ["Machine", "Point", "distinct_outcomes"]

_MAX_DIVE = 10_000                     # new choices one advance may pass before it stops


# The Leaf methods that make every outcome of the same status behave alike.
_DEFAULT_LEAF = ("update", "simulate", "result", "_commit")


def distinct_outcomes(nodes: list[Any], read_keys: set[str]) -> dict[str, tuple[str, ...]]:
    """Leaf id -> one outcome per way it can end, for leaves whose outcomes differ in nothing else.

    A bt_grasp leaf with the default update and simulate, whose outcome port no node reads, does
    the same with every outcome that gives the same status (the same duration, counts and writes
    but for the unread label): the search needs only one of them. Others keep every outcome.
    """
    out: dict[str, tuple[str, ...]] = {}
    for node in nodes:
        if not isinstance(node, Leaf) or not node.alphabet or any(
                getattr(type(node), name) is not getattr(Leaf, name) for name in _DEFAULT_LEAF):
            continue
        nt = node.node_type
        if nt.outcome_port and node.out_key(nt.outcome_port) in read_keys:
            continue
        firsts: dict[bool, str] = {}
        for outcome in node.alphabet:
            firsts.setdefault(outcome in node.SUCCESS_OUTCOMES, outcome)
        out[node.node_id] = tuple(o for o in node.alphabet if o in firsts.values())
    return out


class Machine(ReplayState):
    """The compiled tree in its context, driven as the Runner drives it, one advance at a time."""

    fast_forward = True  # False: an unobserved call's idle ticks are run one by one (tests compare)
    extremes = True  # False: every call is explored tick by tick, observed or not (tests compare)

    def __init__(self, spec: Any, registry: Registry, limits: EpisodeLimits, initial: dict[str, Any],
                 read_keys: set[str], logical_deadlines: bool = False) -> None:
        self.limits = limits
        self.ctx = RunContext(registry=registry, limits=limits, blackboard=Blackboard(dict(initial)),
                              explore_running=True, logical_deadlines=logical_deadlines)
        self.root = compile_tree(spec, self.ctx)
        self.ctx.oracle = self
        self.state = RunState(self.root, self.ctx, read_keys)
        self.outcomes = distinct_outcomes(self.state.nodes, read_keys)
        self.unobserved = unobserved_leaves(self.state.nodes) if self.extremes else {}
        self.max_ticks = {n.node_id: n.max_ticks for n in self.state.nodes if isinstance(n, Leaf)}
        self.retries_above = {i: retry_scopes_above(self.state.by_name[i]) for i in self.unobserved}
        self.to_max: Leaf | None = None  # an unobserved leaf that chose RUNS_TO_MAX this tick
        self.state.track_changes()
        super().__init__()
        self.snap: Snapshot | None = None
        self.initial = Point("tick", self.state.costs(), 0, key=self.state.key(), snap=self.state.save())
        # Inside a tick, the clock still has to catch up with the tick's end (a tick lasts at least
        # one period); a deadline set before the end sees it. With a timeout in the tree, that
        # catch-up is part of a state met mid-tick, so two of them merge only if their next
        # tick boundary falls at the same time before every deadline.
        self.timed = any(isinstance(n, LogicalTimeout) for n in self.state.nodes)
        self.tick_start = 0.0

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        if "#" not in node_id:
            self.pending = ()
            alphabet = self.outcomes.get(node_id, alphabet)
        elif node_id.endswith(RUNNING_ID):  # a call's first question this tick
            self.pending = ()
            leaf_id = node_id[:-len(RUNNING_ID)]
            if leaf_id in self.unobserved:
                leaf = self.state.by_name[leaf_id]
                if leaf.ticks_running > 0:  # only reached with fast_forward off: idle ticks
                    return STILL_RUNNING
                alphabet = (RUNS_TO_MAX,)  # the longest call stands for every length
        if self.pos >= len(self.script):
            key = self.state.key(node_id, self.pending)
            if self.timed:
                clock = self.ctx.clock
                key += (round(max(0.0, self.tick_start + clock.tick_period - clock.now), 9),)
                if self.ctx.logical_deadlines:  # a timeout started later in this tick: its limit
                    key += (self.ctx.world_tick == self.ctx.tick,)
            stop = self.stop_at
            if stop is None or stop(key) or key in self.dive_keys or len(self.dive) >= _MAX_DIVE:
                raise AtChoice(node_id, alphabet, key)
            # a new choice: note it as a point and go on with its first outcome (the search
            # would take that one next, and needs no replay of the tick to do so here)
            self.dive.append(Point("choice", self.state.costs(), self.ctx.tick, key=key,
                                   node_id=node_id, alphabet=alphabet, snap=self.snap,
                                   script=list(self.script)))
            self.dive_keys.add(key)
            self.script.append(0)
        outcome = alphabet[self.script[self.pos]]
        self.pos += 1
        self.pending = (*self.pending, outcome)
        if outcome == RUNS_TO_MAX:
            self.to_max = self.state.by_name[node_id[:-len(RUNNING_ID)]]
            return STILL_RUNNING
        return outcome

    def start(self) -> Point:
        """The episode before its first tick (taken when the machine was built)."""
        return self.initial

    def _cap_reason(self) -> str:
        """Why the tick cap was met: a call still running (the cap leaves it too little room)
        or a tree that keeps ticking without deciding."""
        cap = self.limits.max_ticks
        running = [n for n in self.state.nodes if isinstance(n, Leaf) and n.status == Status.RUNNING]
        if running:
            leaf = running[0]
            return (f"tick cap ({cap}) reached while '{leaf.name}' runs (one {leaf.node_type.name} "
                    f"call may span {leaf.max_ticks} ticks: give budgets.max_ticks room for it)")
        return f"tick cap ({cap}) reached: the tree loops"

    def advance(self, snap: Snapshot, script: list[int]) -> Point:
        """Restore `snap` (a tick boundary), make the choices in `script`, run to the next point
        (the choices passed on the way, with `stop_at` set, are left in `self.dive`)."""
        try:
            return self._advance(snap, script)
        finally:
            # the choices made, replayed or new, stand for the nodes the advance ticked: with
            # the advance itself a count of work that follows CPU time closely on every tree
            self.work += 1 + self.pos

    def _advance(self, snap: Snapshot, script: list[int]) -> Point:
        self.advances += 1
        st, ctx = self.state, self.ctx
        st.restore(snap)
        self.script, self.pos, self.pending = list(script), 0, ()
        self.snap, self.dive, self.dive_keys = snap, [], set()
        self.to_max = None
        if ctx.tick >= self.limits.max_ticks:
            return Point("problem", st.costs(), ctx.tick, text=self._cap_reason())
        ctx.tick += 1
        tick_start = self.tick_start = ctx.clock.now
        path: list[str] = []
        try:
            for node in self.root.tick():
                path.append(node.name)
        except AtChoice as at:
            st.touched(path)
            st.dirty.update(st.paths[at.node_id.split("#", 1)[0]])
            return Point("choice", st.costs(), ctx.tick, key=at.key, node_id=at.node_id,
                         alphabet=at.alphabet, snap=snap, script=script)
        st.touched(path)
        ctx.clock.end_tick(tick_start)
        ctx.publish_tick_events()
        if ctx.decision is not None:
            return Point("end", st.costs(), ctx.tick, text=f"{ctx.decision.value}: {ctx.reason}", path=path)
        if self.root.status in (Status.SUCCESS, Status.FAILURE):
            return Point("problem", st.costs(), ctx.tick, path=path,
                         text=f"root ended {self.root.status.value} without a decision")
        leaf = self.to_max
        if leaf is not None and leaf.status is Status.RUNNING and self.fast_forward:
            skip_idle_ticks(st, leaf, self.limits.max_ticks, self.retries_above[leaf.node_id])
        return Point("tick", st.costs(), ctx.tick, key=st.key(), snap=st.save(), path=path)
