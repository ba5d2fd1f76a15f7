"""The leaf base class: guards, world-or-oracle outcome, blackboard writes, clock and events.

A leaf implements `execute()` (talk to the world through ctx.driver / ctx.perceiver) and
`simulate(outcome)` (what it writes when the verifier's oracle picks `outcome`). Everything
else — budget guards, the decision short-circuit, blackboard writes, clock advance — lives here,
so every leaf obeys the same episode rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import py_trees
from py_trees.common import Status

from bt_grasp.blackboard import ref_key
from bt_grasp.context import RunContext
from bt_grasp.outcomes import Decision, ExecStatus
from bt_grasp.registry import NodeType
from bt_grasp.resumable import Resumable

# Logical seconds a verified (simulated) call is assumed to take.
NOMINAL_DURATION = {"perception": 0.2, "primitive": 2.0, "watchdog": 0.0}


@dataclass
class LeafResult:
    """What one leaf call produced."""

    outcome: str | None
    status: Status
    writes: dict[str, Any] = field(default_factory=dict)
    duration: float = 0.0
    event_meta: dict[str, Any] = field(default_factory=dict)  # primitives: goes into the event


class Leaf(Resumable, py_trees.behaviour.Behaviour):
    """Base of every bt_grasp leaf. Subclasses set TYPE and SUCCESS_OUTCOMES.

    Resumable state (for the verifier): status plus `ticks_running`, the ticks a RUNNING leaf has
    been running. No leaf's future depends on that count yet, so it stays 0 and never splits
    states; a leaf that polls a motion across ticks and times out after n polls will count here.
    """

    RESET = ("ticks_running",)

    TYPE: ClassVar[str] = ""
    SUCCESS_OUTCOMES: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, node_id: str, params: dict[str, Any], ctx: RunContext,
                 node_type: NodeType | None = None) -> None:
        super().__init__(name=node_id)
        self.node_id = node_id
        self.params = params
        self.ctx = ctx
        self.node_type = node_type or ctx.registry.get(self.TYPE)
        if self.node_type is None:
            raise ValueError(f"leaf {type(self).__name__} has no registered node type {self.TYPE!r}")
        self.alphabet = self.node_type.alphabet(params)
        self.last_outcome: str | None = None
        self.ticks_running = 0

    def stop(self, new_status: Status) -> None:
        """py_trees' Behaviour.stop minus its debug log (formatting it costs the verifier)."""
        self.terminate(new_status)
        self.status = new_status
        self.iterator = self.tick()

    # -- helpers for subclasses ------------------------------------------------------------
    def port(self, name: str) -> Any:
        """A port's current value: blackboard references are read now, literals as written."""
        value = self.params.get(name)
        if value is None and name in self.node_type.ports:
            value = self.node_type.ports[name].default
        return self.ctx.blackboard.resolve(value)

    def out_key(self, name: str) -> str:
        """The blackboard key an output port writes to ("{grasp.label}" -> "grasp.label")."""
        value = self.params.get(name) or self.node_type.ports[name].default
        return ref_key(value) or str(value)

    def result(self, outcome: str, writes: dict[str, Any] | None = None,
               duration: float = 0.0, event_meta: dict[str, Any] | None = None) -> LeafResult:
        status = Status.SUCCESS if outcome in self.SUCCESS_OUTCOMES else Status.FAILURE
        return LeafResult(outcome, status, writes or {}, duration, event_meta or {})

    # -- subclass API --------------------------------------------------------------------------
    def execute(self) -> LeafResult:
        raise NotImplementedError

    def simulate(self, outcome: str) -> LeafResult:
        """Default: the outcome alone, with the nominal duration of this kind of leaf."""
        return self.result(outcome, duration=NOMINAL_DURATION.get(self.node_type.kind, 0.0))

    def fault_result(self, reason: str) -> LeafResult:
        """What an exception inside execute() becomes (never an exception out of the leaf)."""
        fallback = "fault" if "fault" in self.alphabet else (self.alphabet[-1] if self.alphabet else None)
        return LeafResult(fallback, Status.FAILURE, {f"{self.node_id}.error": reason},
                          event_meta={"error": reason})

    # -- the tick ------------------------------------------------------------------------------
    def update(self) -> Status:
        ctx = self.ctx
        if ctx.decision is not None:
            return Status.FAILURE  # the episode is over; nothing else may act this tick
        if not self._pass_guards():
            return Status.FAILURE
        if ctx.oracle is not None and self.alphabet:
            outcome = ctx.oracle.choose(self.node_id, self.alphabet)
            res = self.simulate(outcome)
            self._choose_duration(res)
        else:
            try:
                res = self.execute()
            except Exception as exc:  # a driver or perception bug must not escape the tree
                res = self.fault_result(f"{type(exc).__name__}: {exc}")
        return self._commit(res)

    def _choose_duration(self, res: LeafResult) -> None:
        """Under a timeout, how long a verified call takes matters: the verifier tries both
        extremes, an instant call (most iterations before the deadline) and one that overruns
        the deadline. Without a timeout the nominal duration is kept (time is not observable)."""
        remaining = self.ctx.remaining_time()
        if remaining is None or self.node_type.kind not in ("primitive", "perception"):
            return
        pick = self.ctx.oracle.choose(f"{self.node_id}#duration", ("instant", "overruns deadline"))
        res.duration = 0.0 if pick == "instant" else max(remaining, 0.0) + 1e-6

    def _pass_guards(self) -> bool:
        """Episode budgets, checked before the call; a refused call ends the episode."""
        ctx, nt = self.ctx, self.node_type
        if nt.counts_as_action:
            if ctx.ledger.actions >= ctx.limits.actions:
                ctx.decide(Decision.WAIT_CLARIFY,
                           f"action budget spent ({ctx.limits.actions} grasp/push actions)")
                return False
            for scope, limit in ctx.action_scopes:
                if ctx.ledger.scoped_actions.get(scope, 0) >= limit:
                    ctx.blackboard.set(f"{self.node_id}.error", f"budget '{scope}' spent")
                    return False
            ctx.ledger.actions += 1
            for scope, _ in ctx.action_scopes:
                ctx.ledger.scoped_actions[scope] = ctx.ledger.scoped_actions.get(scope, 0) + 1
            ctx.ledger.perception_streak = 0
        elif nt.perception:
            if ctx.ledger.perception_streak >= ctx.limits.perception_streak:
                ctx.decide(Decision.WAIT_CLARIFY,
                           f"perception loop: {ctx.limits.perception_streak} perception calls "
                           "in a row without a manipulation")
                return False
            ctx.ledger.perception_streak += 1
            ctx.ledger.perception_calls += 1
        if nt.kind == "primitive":
            ctx.ledger.primitive_calls[nt.name] = ctx.ledger.primitive_calls.get(nt.name, 0) + 1
        return True

    def _commit(self, res: LeafResult) -> Status:
        ctx = self.ctx
        ctx.clock.advance(res.duration)
        for key, value in res.writes.items():
            ctx.blackboard.set(key, value)
        if res.outcome is not None and self.node_type.outcome_port:
            ctx.blackboard.set(self.out_key(self.node_type.outcome_port), res.outcome)
        if self.node_type.kind == "primitive":
            meta = {"outcome": res.outcome, **res.event_meta}
            event = ctx.emit(self.node_id, self.node_type.name,
                             ExecStatus.SUCCESS if res.status == Status.SUCCESS else ExecStatus.FAIL,
                             metadata=meta)
            ctx.blackboard.set(f"{self.node_id}.trial_id", event.trial_id)
        self.last_outcome = res.outcome
        self.feedback_message = res.outcome or ""
        return res.status
