"""The modelled tree driven from one point of the search to the next, with time left symbolic.

The same contract as the compiled tree's machine (compiled/machine.py; both answer an advance with
a transitions.Point), on the model (ticker.py) instead of the compiled tree, and with one
difference in what it explores:
**no tick passes without an event.** A tick in which every running call goes on, every deadline
is not yet due and every guard passes, and nothing else changes, leaves the run where it was
with less time left: each call one tick nearer its max_ticks, each timeout one tick nearer its
allowance. Time left only widens what can happen next (a call that may still run can also end
now; a deadline not yet certain may also pass now), so such an *idle* tick is never needed to
reach a decision, an action, a call or a counterexample: the search skips it (`Point("idle")`)
and notes that the state could have idled. How many ticks the runs take, idle ticks included,
is the tick bound's job (symbolic/tick_bound.py), which reads the graph of points this
exploration leaves behind.

**A choice is resumed where it was asked**, not replayed from its tick's start: each choice point
keeps a `Resume` (the state as the node asking it began its tick, or, for a timeout's question
after its child, the state then), and a branch restores it, lets that node ask its own questions
again from the script (a few at most) and goes on with the rest of each ancestor's tick
(Ticker.resume_above). The points and edges are those of the replay (`resumes = False`, which
tests compare); only the work of re-ticking the tick's earlier nodes is saved.

A point carries the *resources* it holds: for every running call that may span ticks its ticks
left (max_ticks - ticks run), for every running timeout its tick entries left before the
deadline is certain, each with the activation it belongs to (so that a call restarted in the
same tick is a new one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from bt_grasp.context import EpisodeLimits
from bt_grasp.nodes.base import ENDS_NOW
from bt_grasp.verifier.compiled.running import unobserved_leaves
from bt_grasp.verifier.symbolic.explore import CMP, REACHED
from bt_grasp.verifier.symbolic.keys import KeyMaker
from bt_grasp.verifier.symbolic.model import FAILURE, RUNNING, SUCCESS, K, Model
from bt_grasp.verifier.symbolic.ticker import Ticker, ticker_for
from bt_grasp.verifier.symbolic.ticker_decorators import AFTER
from bt_grasp.verifier.transitions import AtChoice, Point, ReplayState

__all__ = ["ModelMachine"]

_MAX_DIVE = 10_000  # new choices one advance may pass before it stops
_CMP_ANSWERS = ("below", REACHED)
OPEN = 0  # the counter the search leaves open: the episode's actions (ticker.counters order)


class Resume(NamedTuple):
    """Where a choice's tick is taken up again: `node` ticks anew from `state` (`after`: False;
    the node asking, as its tick began) or goes on after its child returned (`after`: True; a
    timeout's deadline question), asking its questions from script position `pos` on; with the
    machine's record of the tick up to there (`steps`, `pending`, `compared`)."""

    node: int
    after: bool
    state: tuple[Any, ...]  # ModelMachine.save() and the budgets on the path
    pos: int
    steps: tuple[tuple[str, str], ...]
    pending: tuple[str, ...]
    compared: bool


_ASKERS = (K.LEAF, K.OPAQUE, K.TIMEOUT)  # the node kinds that ask the oracle themselves


class ModelMachine(ReplayState):
    """The model in its context, driven one advance at a time (see the module docstring)."""

    resumes = True  # False: every branch replays its tick from the start (tests compare)

    def __init__(self, spec: Any, registry: Any, limits: EpisodeLimits, initial: dict[str, Any],
                 read_keys: set[str], open_actions: bool = False, open_all: bool = False) -> None:
        """`open_actions`: leave the episode's action count out of the state (explore.py);
        `open_all`: every counter (actions, streak, retry starts, scoped actions), so that a
        point is met once whatever the counters, and the second pass tells them apart."""
        self.limits = limits
        self.t: Ticker = ticker_for(spec, registry, limits, initial, read_keys)
        self.open: frozenset[int] = (frozenset(range(len(self.t.counters()))) if open_all else
                                     frozenset((OPEN,)) if open_actions else frozenset())
        self.m: Model = self.t.m
        self.keys = KeyMaker(self.t, read_keys, limits)
        self.prim_keys = [f"primitive:{name}" for name in self.m.prim_names]
        self.outcomes = self._distinct_outcomes(read_keys)
        super().__init__()
        self.snap: tuple[Any, ...] | None = None
        self.steps: list[tuple[str, str]] = []  # the choices made in the tick in progress
        self.bumps: list[tuple[str, int]] = []
        self.t.choose = self.choose
        self.entry: Resume | None = None  # the asking node whose tick is in progress
        self.updating = -1  # the retry whose update (after its child returned) is in progress
        self.raw = list(self.t.dispatch)
        # a retry whose scope count is open asks the search its comparisons itself
        askers = (*_ASKERS, K.RETRY) if open_all else _ASKERS
        for i, kind in enumerate(self.m.kind):
            if kind in askers and self.resumes:
                self.t.dispatch[i] = self._entering(i, self.raw[i])
            update = self.t.after[i]
            if open_all and kind == K.RETRY and update is not None:
                self.t.after[i] = self._finishing(i, update)
        snap = self.save()
        self.compared_in_tick = False
        self.t.compare = self.compare
        self.initial = self._point("tick", key=self._key(), snap=snap, res=self.resources())
        self.max_ticks = {self.m.name[i]: self.m.max_ticks[i] for i in range(self.m.n)}
        self.unobserved: dict[str, Any] = {}
        # calls nothing observes while they run (running.unobserved_leaves, and no reactive
        # composite above that would halt a later child because this one runs): they end at
        # their first poll, and the ticks of their longest call are added there
        self.longest = {i: self.m.max_ticks[i] - 1 for i in
                        (self.m.index[name] for name, guards in unobserved_leaves(self.m.nodes).items()
                         if not guards) if not self._under_reactive(i)}
        self.checks = self._repeated_checks(read_keys)

    def _repeated_checks(self, read_keys: set[str]) -> frozenset[int]:
        """Calls repeated forever whose length nothing sees: the search ends each at its first
        poll. A leaf under a repeat with no `times`, neither an action nor perception, with the
        default simulate and nothing reading what it writes (its outcome, its halt): a call of
        it running k ticks and ending as it may has a twin run of k calls of one tick each,
        each but the last succeeding (with any such outcome: none is read): its ancestors see the repeat
        RUNNING alike in every tick, so the rest of the run, its ticks and its ending are the
        same, and the twin costs as much or more (one call per tick the repeat is ticked)."""
        m, forever = self.m, self.keys.forever
        return frozenset(
            i for i in range(m.n)
            if m.kind[i] == K.LEAF and m.max_ticks[i] > 1 and m.parent[i] in forever
            and not m.action[i] and not m.perception[i] and m.name[i] in self.outcomes
            and f"{m.name[i]}.halted" not in read_keys)

    def _under_reactive(self, i: int) -> bool:
        m = self.m
        j = m.parent[i]
        while j >= 0:
            if m.kind[j] in (K.SEQ, K.SEL) and not m.memory[j]:
                return True
            j = m.parent[j]
        return False

    def _distinct_outcomes(self, read_keys: set[str]) -> dict[str, tuple[str, ...]]:
        """A leaf with the default simulate whose outcome no node reads ends alike with every
        outcome of the same status: one of each is enough (machine.distinct_outcomes)."""
        m, out = self.m, {}
        for i in range(m.n):
            if m.kind[i] != K.LEAF or m.simulates[i] or (m.out_key[i] in read_keys):
                continue
            firsts: dict[bool, str] = {}
            for o in m.alphabet[i]:
                firsts.setdefault(o in m.success[i], o)
            out[m.name[i]] = tuple(o for o in m.alphabet[i] if o in firsts.values())
        return out

    # -- state ----------------------------------------------------------------------------------
    def save(self) -> tuple[Any, ...]:
        t = self.t
        return (tuple(t.st), tuple(t.cur), tuple(t.a), tuple(t.b), tuple(t.gen),
                (t.actions, t.streak, t.pcalls, t.tick, t.decision, t.reason, t.refusals),
                tuple(t.prim), tuple(t.rstarts), tuple(t.scoped), dict(t.bb))

    def restore(self, snap: tuple[Any, ...]) -> None:
        t = self.t
        st, cur, a, b, gen, ctx, prim, rstarts, scoped, bb = snap
        t.st, t.cur, t.a, t.b, t.gen = list(st), list(cur), list(a), list(b), list(gen)
        t.actions, t.streak, t.pcalls, t.tick, t.decision, t.reason, t.refusals = ctx
        t.prim, t.rstarts, t.scoped, t.bb = list(prim), list(rstarts), list(scoped), dict(bb)
        t.scopes = []
        t.halt_reason = "halted"

    def _entering(self, i: int, tick: Callable[[int], None]) -> Callable[[int], None]:
        """Node i's tick, recording first where a choice it asks would resume (the state saved
        costs less than re-ticking what came before it in the tick)."""
        def entered(node: int) -> None:
            outer = self.entry
            self.entry = self._here(node, False)
            tick(node)
            self.entry = outer  # a retry's own comparison after its child resumes the retry
        return entered

    def _finishing(self, i: int, after: Callable[[int], None]) -> Callable[[int], None]:
        """A retry's update, resumed at its own comparison (after its child returned)."""
        def finishing(node: int) -> None:
            outer, self.updating = self.entry, node
            if self.resumes:
                self.entry = self._here(node, True)
            after(node)
            self.entry, self.updating = outer, -1
        return finishing

    def _here(self, node: int, after: bool) -> Resume:
        """The run as it is now, to resume `node` from (see Resume)."""
        return Resume(node, after, (self.save(), tuple(self.t.scopes)), self.pos, tuple(self.steps),
                      self.pending, self.compared_in_tick)

    def _resume_here(self, node_id: str) -> Resume | None:
        """Where a branch of the choice being asked resumes (see Resume)."""
        if not self.resumes:
            return None
        i = self.m.index[node_id.split("#", 1)[0]]
        if self.m.kind[i] == K.TIMEOUT and self.t.b[i] == AFTER:
            return self._here(i, True)
        assert self.entry is not None and self.entry.node == i, f"{node_id} asked outside its tick"
        return self.entry

    def costs(self) -> dict[str, int]:
        """What the report bounds but ticks (the tick bound is symbolic/tick_bound.py's)."""
        t = self.t
        out = {"actions": t.actions, "perception": t.pcalls}
        for name, n in zip(self.prim_keys, t.prim, strict=True):
            if n:
                out[name] = n
        return out

    def _point(self, kind: str, **fields: Any) -> Point:
        """A point, with its counters (explore.py moves them along the edges)."""
        return Point(kind, self.costs(), self.t.tick, cnt=self.t.counters(), bumps=self._bumps(),
                     **fields)

    def compare(self, node: int, counter: int, value: int, limit: int) -> bool:
        """A counter against a limit. A counter left open is asked of the search: both answers
        are runs for some value, and the second pass keeps those of the actual one. Other
        counters are kept in the state, exactly."""
        if counter not in self.open:
            return value >= limit
        self.compared_in_tick = True
        # a retry compares as it starts its child and again as its child fails: the two
        # questions resume differently, so their points must not share a key
        where = "#update" if node == self.updating else ""
        return self.choose(f"{self.m.name[node]}{where}{CMP}{counter}:{limit}", _CMP_ANSWERS) == REACHED

    def _key(self, asking: str | None = None) -> tuple[Any, ...]:
        """A point's key: the state's, with its counters but the open ones."""
        rest, counters = self.keys.key(asking, self.pending) if asking else self.keys.key()
        if not self.open:
            return (rest, counters)
        return (rest, tuple(c for i, c in enumerate(counters) if i not in self.open))

    def resources(self) -> dict[int, tuple[int, int]]:
        """Node -> (ticks left, activation) for every running call that may span ticks and every
        running timeout (see the module docstring)."""
        t, m = self.t, self.m
        out = {}
        for i in self.keys.timed:
            if t.st[i] == RUNNING:
                if m.kind[i] == K.TIMEOUT:
                    out[i] = (m.param[i][1] - t.a[i], t.gen[i])
                else:
                    out[i] = (m.max_ticks[i] - t.a[i], t.gen[i])
        return out

    # -- the oracle -----------------------------------------------------------------------------
    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        if "#" not in node_id:
            self.pending = ()
            alphabet = self.outcomes.get(node_id, alphabet)
        elif node_id.endswith("#running") or node_id.endswith("#deadline"):
            self.pending = ()
            if node_id.endswith("#running"):
                leaf = self.m.index[node_id[:-len("#running")]]
                if leaf in self.checks:  # its twin ends at every poll (_repeated_checks)
                    return ENDS_NOW
                extra = self.longest.get(leaf)
                if extra is not None and self.t.a[leaf] == 0:
                    # the twin argument (running.py): the longest call stands for every length
                    self.t.tick += extra
                    if self.pos >= len(self.script):  # not a replayed one: the edge's own
                        self.bumps.append((node_id[:-len("#running")], extra))
                    return ENDS_NOW
        if self.pos >= len(self.script):
            key = self._key(node_id)
            stop = self.stop_at
            if stop is None or stop(key) or key in self.dive_keys or len(self.dive) >= _MAX_DIVE:
                # where to resume, before unwinding the tick undoes what its nodes hold
                raise AtChoice(node_id, alphabet, key, self._resume_here(node_id))
            self.dive.append(self._point("choice", key=key, node_id=node_id, alphabet=alphabet,
                                         snap=self.snap, script=list(self.script),
                                         res=self.resources(), resume=self._resume_here(node_id)))
            self.dive_keys.add(key)
            self.script.append(0)
        outcome = alphabet[self.script[self.pos]]
        self.pos += 1
        self.pending = (*self.pending, outcome)
        self.steps.append((node_id, outcome))
        return outcome

    def _bumps(self) -> tuple[tuple[str, int], ...]:
        out, self.bumps = tuple(self.bumps), []
        return out

    def start(self) -> Point:
        return self.initial

    # -- one advance ----------------------------------------------------------------------------
    def advance(self, snap: tuple[Any, ...], script: list[int]) -> Point:
        """Restore `snap` (a tick boundary), make the choices in `script`, run to the next point
        (the choices passed on the way, with `stop_at` set, are left in `self.dive`)."""
        self.restore(snap)
        self.script, self.pending = list(script), ()
        self.snap, self.steps, self.compared_in_tick = snap, [], False
        return self._run(self.t.tick_once, 0)

    def branch(self, choice: Point, answer: int) -> Point:
        """The advance from a choice point taking its `answer` (an index into its alphabet):
        resumed where it was asked (see Resume), or replayed from its tick's start."""
        at, snap = choice.resume, choice.snap
        assert isinstance(snap, tuple)  # this machine's snapshots are save()'s tuples
        if at is None:
            return self.advance(snap, [*choice.script, answer])
        state, scopes = at.state
        self.restore(state)
        self.t.scopes = list(scopes)
        self.script, self.pending = [*choice.script, answer], at.pending
        self.snap, self.steps, self.compared_in_tick = snap, list(at.steps), at.compared
        t, node = self.t, at.node
        if at.after:
            def rest() -> None:
                t.after[node](node)
                t.resume_above(node)
        else:
            self.entry = at

            def rest() -> None:
                self.raw[node](node)
                t.resume_above(node)
        return self._run(rest, at.pos)

    def _run(self, tick: Callable[[], None], pos: int) -> Point:
        """Run (the rest of) a tick to the next point, its choices from script position `pos` on."""
        self.pos = pos
        self.dive, self.dive_keys, self.bumps = [], set(), []
        try:
            return self._finish(tick)
        finally:
            # the advance and the choices of its tick up to where it stopped, those a branch
            # resumed past included: the count replaying the tick made, so that when the search
            # asks the summary (summary/proof.py) does not depend on how it saves that replay
            self.work += 1 + self.pos

    def _finish(self, tick: Callable[[], None]) -> Point:
        self.advances += 1
        t = self.t
        snap = self.snap
        assert snap is not None
        try:
            tick()
        except AtChoice as at:
            return self._point("choice", key=at.key, node_id=at.node_id, alphabet=at.alphabet,
                               snap=snap, script=list(self.script), res=self.resources(),
                               resume=at.resume)
        if t.decision is not None:
            return self._point("end", text=f"{t.decision.value}: {t.reason}", res={})
        if t.st[0] in (SUCCESS, FAILURE):
            ended = "SUCCESS" if t.st[0] == SUCCESS else "FAILURE"
            return self._point("problem", text=f"root ended {ended} without a decision")
        new = self.save()
        res = self.resources()
        idle = None if self.compared_in_tick or self.bumps else self._idle(snap, new)
        if idle is not None:
            lost, costs = idle
            return self._point("idle", snap=new, res=res, text="idle", idle=(tuple(self.steps), lost, costs))
        return self._point("tick", key=self._key(), snap=new, res=res)

    def _idle(self, before: tuple[Any, ...], after: tuple[Any, ...]) -> tuple[dict[int, int], dict[str, int]] | None:
        """(node -> ticks its resource lost, what the tick cost), when the tick from `before` to
        `after` changed nothing but the ticks left of running calls and timeouts (and the
        search's own retry counter), apart from calls that started and ended within it as the
        one before it did (a check repeated beside a task: one call per tick, each counted in
        the costs, one at most per primitive); None when anything else changed.

        Such a call leaves the state as it found it (its status, its outcome; its start resets
        the ticks it ran), so the tick can repeat as an idle one does, and the tick bound puts
        its repetitions back with their costs (tick_bound.py, `cost`): taken as events, every
        one would move the ticks left of everything running beside it, a state per tick."""
        if before[0] != after[0] or before[1] != after[1] or before[3] != after[3]:
            return None
        timed, forever, st, m = self.keys.timed, self.keys.forever, self.t.st, self.m
        restarted = set()
        for i, (x, y) in enumerate(zip(before[4], after[4], strict=True)):
            if x != y and i in timed:
                if m.kind[i] != K.LEAF or st[i] == RUNNING:
                    return None  # a call or timeout restarted: not the one that was running
                restarted.add(i)
        bc, ac = before[5], after[5]
        if bc[:3] != ac[:3] or bc[4:] != ac[4:] or before[7:] != after[7:]:
            return None
        costs: dict[str, int] = {}
        for name, x, y in zip(self.prim_keys, before[6], after[6], strict=True):
            if x != y:
                if y != x + 1:
                    return None
                costs[name] = 1
        lost: dict[int, int] = {}
        for i, (x, y) in enumerate(zip(before[2], after[2], strict=True)):
            if x == y or i in restarted or i in forever:
                continue  # (a repeat with no `times` counts its runs, and never reads the count)
            if i not in timed or st[i] != RUNNING or y != x + 1:
                return None
            lost[i] = 1
        # a tick that changed nothing at all repeats forever: not idle
        return (lost, costs) if lost else None
