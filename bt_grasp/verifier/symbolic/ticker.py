"""One tick of a modelled tree (bt_grasp/verifier/symbolic/model.py), as the Runner ticks the compiled one.

Each method reproduces one runtime class's tick or stop, statement for statement, on plain lists
(status, current child, two data slots per node) and a small ledger, so that a state is cheap to
save, compare and restore. The oracle is asked exactly the questions the compiled tree asks, in
the same order and with the same ids, which tests/test_verify_model.py checks in lockstep with the
real Runner on generated trees. The leaves are in ticker_leaves.py, the decorators in
ticker_decorators.py, the BT.CPP controls in ticker_controls.py.

Slots per node: `a` holds a sequence's or selector's loop position, a parallel's, a repeat's
successes, a timeout's ticks run, a leaf's ticks running, a switch's chosen child, a BT.CPP
retry's try count, a recovery's retry count, a pipeline's last running child, a round robin's
position; `b` a recovery's, pipeline's or threshold parallel's loop position, a round robin's
failures, a threshold parallel's finished children. `gen` counts a node's activations (a call's
identity, which the tick bound needs; never part of a state's key).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from bt_grasp.composites import PREEMPTED
from bt_grasp.context import EpisodeLimits
from bt_grasp.outcomes import Decision
from bt_grasp.verifier.symbolic.model import FAILURE, INVALID, RUNNING, SUCCESS, K, Model
from bt_grasp.verifier.symbolic.ticker_controls import ControlsMixin
from bt_grasp.verifier.symbolic.ticker_decorators import DecoratorsMixin
from bt_grasp.verifier.symbolic.ticker_leaves import LeavesMixin, _Asker

Choose = Callable[[str, tuple[str, ...]], str]


class Ticker(LeavesMixin, DecoratorsMixin, ControlsMixin):
    """The mutable state of one modelled run and the tick that moves it."""

    def __init__(self, model: Model, limits: EpisodeLimits, initial: dict[str, Any],
                 tracked: set[str], sim_ctx: Any) -> None:
        self.m, self.limits, self.tracked = model, limits, tracked
        n = model.n
        self.st = [INVALID] * n
        self.cur = [-1] * n
        self.a: list[Any] = [-1 if k == K.SWITCH else 0 for k in model.kind]
        self.b: list[Any] = [() if k == K.TPAR else 0 for k in model.kind]
        self.gen = [0] * n
        self.actions = self.streak = self.pcalls = self.tick = 0
        self.prim = [0] * len(model.prim_names)
        self.rstarts = [0] * len(model.retry_scopes)
        self.scoped = [0] * len(model.budget_scopes)
        self.decision: Decision | None = None
        self.reason = ""
        self.bb: dict[str, Any] = {k: v for k, v in initial.items() if k in tracked}
        self.refusals = 0  # actions a named budget refused after the episode's check passed
        self.scopes: list[tuple[int, int]] = []  # the budgets on the path being ticked
        self.halt_reason = "halted"
        self.choose: Choose = _refuse
        # Every comparison of a counter with a limit goes through `compare` (node comparing,
        # counter, value, limit) -> value >= limit; the search answers it for every value at
        # once (explore.py). Counters: 0 actions, 1 streak, then retry scopes, named budgets.
        self.compare: Callable[[int, int, int, int], bool] = _at_least
        self.sim_ctx = sim_ctx
        self._asker = _Asker(self)
        self._halted_key = [f"{nm}.halted" for nm in model.name]
        self._tick = {K.SEQ: self._t_seq, K.SEL: self._t_sel, K.PAR: self._t_par,
                      K.RETRY: self._t_retry, K.REPEAT: self._t_decorator, K.TIMEOUT: self._t_timeout,
                      K.BUDGET: self._t_budget, K.SWITCH: self._t_switch, K.INV: self._t_decorator,
                      K.FSUC: self._t_decorator, K.FFAIL: self._t_decorator, K.LEAF: self._t_leaf,
                      K.COND: self._t_cond, K.TERM: self._t_term, K.OPAQUE: self._t_opaque,
                      K.BRETRY: self._t_decorator, K.ODEC: self._t_decorator, K.RECOV: self._t_recov,
                      K.PIPE: self._t_pipe, K.RROBIN: self._t_rrobin, K.TPAR: self._t_tpar}
        self.dispatch = [self._tick[k] for k in model.kind]
        # what each composite and decorator does once the child it was ticking has returned (the
        # rest of its tick): a tick stopped at a question is resumed from there (resume_above)
        loops = {K.SEQ: self._seq_loop, K.SEL: self._sel_loop, K.PAR: self._par_loop,
                 K.RECOV: self._recov_loop, K.PIPE: self._pipe_loop, K.RROBIN: self._rrobin_loop,
                 K.TPAR: self._tpar_loop}
        after: dict[int, Callable[[int], None]] = {
            K.RETRY: self._retry_after, K.TIMEOUT: self._timeout_after, K.BUDGET: self._budget_after,
            K.SWITCH: self._switch_after,
            **{k: self._decorator_after for k in (K.REPEAT, K.INV, K.FSUC, K.FFAIL, K.BRETRY, K.ODEC)},
            **{k: partial(loop, resumed=True) for k, loop in loops.items()}}
        self.after = [after.get(k) for k in model.kind]

    # -- the episode ----------------------------------------------------------------------------
    def run(self, choose: Choose, halt: bool = True) -> None:
        """A whole episode as the Runner plays it (tick cap, decision, a root that ends);
        `halt`: stop what still runs at the end, as the Runner does."""
        self.choose = choose
        while self.decision is None:
            if self.tick >= self.limits.max_ticks:
                self.decide(Decision.WAIT_CLARIFY, f"tick cap ({self.limits.max_ticks} ticks)")
                break
            self.tick_once()
            if self.decision is None and self.st[0] in (SUCCESS, FAILURE):
                ended = "SUCCESS" if self.st[0] == SUCCESS else "FAILURE"
                self.decide(Decision.WAIT_CLARIFY, f"no decision (root ended {ended} without one)")
        if halt:
            self.stop(0, INVALID)  # the Runner halts what still runs once the episode is over

    def running_calls(self) -> list[int]:
        """The leaves whose calls are running now, in tree order."""
        return [i for i in range(self.m.n) if self.m.kind[i] == K.LEAF and self.st[i] == RUNNING]

    def ledger(self) -> dict[str, Any]:
        """The counters as the Runner's Ledger.snapshot() names them (those that were used)."""
        m = self.m
        return {"actions": self.actions, "perception_streak": self.streak,
                "perception_calls": self.pcalls,
                "primitive_calls": {k: v for k, v in zip(m.prim_names, self.prim, strict=True) if v},
                "retry_starts": {k: v for k, v in zip(m.retry_scopes, self.rstarts, strict=True) if v},
                "scoped_actions": {k: v for k, v in zip(m.budget_scopes, self.scoped, strict=True) if v}}

    def counters(self) -> tuple[int, ...]:
        """The counters in the order `compare` numbers them."""
        return (self.actions, self.streak, *self.rstarts, *self.scoped)

    def tick_once(self) -> None:
        """One tick of the root (the Runner checks the cap before and the decision after)."""
        self.tick += 1
        self.dispatch[0](0)

    def resume_above(self, i: int) -> None:
        """Go on with the tick once node i has returned: the rest of each ancestor's tick, up to
        the root (a tick descends only from a parent to its child, so the ancestors are exactly
        the nodes whose tick is in progress)."""
        parent, after = self.m.parent, self.after
        p = parent[i]
        while p >= 0:
            after[p](p)
            p = parent[p]

    def decide(self, decision: Decision, reason: str) -> None:
        if self.decision is None:
            self.decision, self.reason = decision, reason

    def set(self, key: str, value: Any) -> None:
        if key in self.tracked:
            self.bb[key] = value

    def ticked(self, i: int) -> None:
        self.dispatch[i](i)

    # -- stopping (py_trees' stop() of each class) ----------------------------------------------
    def stop(self, i: int, new: int) -> None:
        kind = self.m.kind[i]
        if kind in (K.LEAF, K.COND, K.TERM, K.OPAQUE):
            if new == INVALID and self.st[i] == RUNNING:
                self.halt(i, self.halt_reason)
            self.st[i] = new
        elif kind in (K.SEQ, K.SEL):
            self.composite_stop(i, new)
        elif kind == K.PAR:
            for c in self.m.kids[i]:
                if self.st[c] == RUNNING:
                    self.stop(c, INVALID)
            self.composite_stop(i, new)
        elif kind == K.SWITCH:
            for c in self.m.kids[i]:
                if self.st[c] == RUNNING:
                    self.stop(c, INVALID)
            if new == INVALID:
                self.a[i] = -1
            self.composite_stop(i, new)
        elif kind in (K.RECOV, K.PIPE, K.RROBIN, K.TPAR):
            if new == INVALID and self.st[i] == RUNNING:
                self.reset_state(i)
            self.composite_stop(i, new)
        else:  # decorators (QuietDecorator)
            if kind == K.BRETRY:
                self.a[i] = 0  # terminate(): the try count is refilled on every stop
            c = self.m.kids[i][0]
            if new == INVALID:
                self.stop(c, INVALID)
            if self.st[c] == RUNNING:
                self.stop(c, INVALID)
            self.st[i] = new

    def composite_stop(self, i: int, new: int) -> None:
        if new == INVALID:
            self.cur[i] = -1
            for c in self.m.kids[i]:
                if self.st[c] != INVALID:
                    self.stop(c, INVALID)
        self.st[i] = new

    def finish(self, i: int, new: int) -> None:
        """py_trees_controls.finish_tick: stop unless still running, then take the status."""
        if new != RUNNING:
            self.stop(i, new)
        self.st[i] = new

    def halt_child(self, i: int, child: int) -> None:
        if self.m.preempts[i]:
            previous, self.halt_reason = self.halt_reason, PREEMPTED
            try:
                self.stop(child, INVALID)
            finally:
                self.halt_reason = previous
        else:
            self.stop(child, INVALID)

    # -- leaves ---------------------------------------------------------------------------------
    def halt(self, i: int, reason: str) -> None:
        """Leaf._halt: preempted while RUNNING (the call was counted when it started)."""
        self.set(self._halted_key[i], reason)
        self.a[i] = 0

    # -- bt_grasp controls ----------------------------------------------------------------------
    def _t_seq(self, i: int) -> None:
        st, cur, a = self.st, self.cur, self.a
        kids = self.m.kids[i]
        if st[i] != RUNNING:
            a[i] = 0
            cur[i] = kids[0] if kids else -1
            for c in kids:
                if st[c] != INVALID:
                    self.stop(c, INVALID)
        elif self.m.memory[i] and cur[i] != -1:
            a[i] = kids.index(cur[i])
        else:
            a[i] = 0
            cur[i] = kids[0] if kids else -1
        if not kids:
            cur[i] = -1
            self.stop(i, SUCCESS)
            return
        self._seq_loop(i, False)

    def _seq_loop(self, i: int, resumed: bool) -> None:
        """The sequence's loop from its child a[i]: ticked now, or (`resumed`) just returned."""
        st, cur, a = self.st, self.cur, self.a
        kids = self.m.kids[i]
        memory = self.m.memory[i]
        n = len(kids)
        while a[i] < n:
            c = kids[a[i]]
            s = self.tick_child(c, resumed)
            resumed = False
            if s != SUCCESS:
                if not memory:
                    for later in kids[a[i] + 1:]:
                        if st[later] != INVALID:
                            self.halt_child(i, later)
                if s != RUNNING:
                    self.stop(i, s)
                else:
                    st[i] = s
                return
            if a[i] + 1 < n:
                cur[i] = kids[a[i] + 1]
            a[i] += 1
        self.stop(i, SUCCESS)

    def _t_sel(self, i: int) -> None:
        st, cur, a = self.st, self.cur, self.a
        kids = self.m.kids[i]
        if st[i] != RUNNING:
            cur[i] = kids[0] if kids else -1
        if not kids:
            cur[i] = -1
            self.stop(i, FAILURE)
            return
        if self.m.memory[i]:
            a[i] = kids.index(cur[i])
            for c in kids[:a[i]]:
                if st[c] != INVALID:
                    self.stop(c, INVALID)
        else:
            a[i] = 0
        self._sel_loop(i, False)

    def _sel_loop(self, i: int, resumed: bool) -> None:
        """The selector's loop from its child a[i]: ticked now, or (`resumed`) just returned."""
        st, cur, a = self.st, self.cur, self.a
        kids = self.m.kids[i]
        n = len(kids)
        while a[i] < n:
            c = kids[a[i]]
            s = self.tick_child(c, resumed)
            resumed = False
            if s == RUNNING or s == SUCCESS:
                if cur[i] != c:
                    for later in kids[a[i] + 1:]:
                        if st[later] != INVALID:
                            self.halt_child(i, later)
                    cur[i] = c
                if s == SUCCESS:
                    self.stop(i, s)
                else:
                    st[i] = s
                return
            a[i] += 1
        self.stop(i, FAILURE)
        cur[i] = kids[-1]

    def _t_par(self, i: int) -> None:
        st, cur = self.st, self.cur
        kids = self.m.kids[i]
        if st[i] != RUNNING:
            for c in kids:
                if st[c] != INVALID:
                    self.stop(c, INVALID)
            cur[i] = -1
        if not kids:
            cur[i] = -1
            self.stop(i, SUCCESS)
            return
        self.a[i] = 0
        self._par_loop(i, False)

    def _par_loop(self, i: int, resumed: bool) -> None:
        """The parallel's loop from its child a[i]: ticked now, or (`resumed`) just returned."""
        st, cur, a = self.st, self.cur, self.a
        kids = self.m.kids[i]
        on_all = self.m.param[i]  # success on all children (and do not re-tick the finished)
        n = len(kids)
        while a[i] < n:
            c = kids[a[i]]
            if resumed:
                resumed = False
            elif not (on_all and st[c] == SUCCESS):
                self.dispatch[c](c)
            a[i] += 1
        cur[i] = kids[-1]
        new = RUNNING
        failed = next((c for c in kids if st[c] == FAILURE), -1)
        if failed >= 0:
            cur[i] = failed
            new = FAILURE
        elif on_all:
            if all(st[c] == SUCCESS for c in kids):
                new = SUCCESS
        else:
            for c in reversed(kids):
                if st[c] == SUCCESS:
                    cur[i] = c
                    new = SUCCESS
                    break
        if new != RUNNING:
            self.stop(i, new)
        st[i] = new


def _at_least(node: int, counter: int, value: int, limit: int) -> bool:
    return value >= limit


def _refuse(node_id: str, alphabet: tuple[str, ...]) -> str:  # pragma: no cover - set by the caller
    raise AssertionError(f"{node_id} asked with no oracle")


class _Everything:
    def __contains__(self, key: object) -> bool:
        return True


def ticker_for(spec: Any, registry: Any, limits: EpisodeLimits, initial: dict[str, Any],
               tracked: set[str] | None = None) -> Ticker:
    """The model of `spec` compiled against `registry`, ready for its first tick; `tracked`: the
    blackboard keys to keep (None: all of them)."""
    from bt_grasp.blackboard import Blackboard
    from bt_grasp.compile import compile_tree
    from bt_grasp.context import RunContext
    from bt_grasp.verifier.symbolic.model import build_model

    ctx = RunContext(registry=registry, limits=limits, blackboard=Blackboard(dict(initial)),
                     explore_running=True)
    root = compile_tree(spec, ctx)
    keep: Any = _Everything() if tracked is None else tracked
    return Ticker(build_model(root), limits, initial, keep, ctx)
