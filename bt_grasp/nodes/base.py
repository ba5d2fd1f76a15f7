"""The leaf base class: guards, world-or-oracle outcome, blackboard writes, clock and events.

A leaf implements `execute()` (talk to the world through ctx.driver / ctx.perceiver) and
`simulate(outcome)` (what it writes when the verifier's oracle picks `outcome`). Everything
else — budget guards, the decision short-circuit, blackboard writes, clock advance — lives here,
so every leaf obeys the same episode rules.

A primitive's `execute()` may return a `Pending` motion instead of a result: the leaf then has
a lifecycle like BT.CPP's StatefulActionNode (onStart / onRunning / onHalted) or py_trees'
initialise / update / terminate. Its first tick passes the guards, starts the motion and polls it
once; each later tick polls once more (RUNNING meanwhile); the motion's end becomes the result.
A parent that preempts the RUNNING leaf (a timeout, a reactive condition, a halt) makes it cancel
the motion and emit its event with what it had reached. One call spans at most
`node_type.max_ticks` ticks: a motion still running then is cancelled as timed out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import py_trees
from py_trees.common import Status

from bt_grasp import seam
from bt_grasp.blackboard import ref_key
from bt_grasp.call_limit import NotResponding
from bt_grasp.context import RunContext
from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.capabilities import Motion
from bt_grasp.drivers.motion import HALTED, TIMEOUT
from bt_grasp.errors import one_line
from bt_grasp.outcomes import Decision, ExecStatus, Label, LeafCall
from bt_grasp.registry import NodeType
from bt_grasp.resumable import Resumable

# Logical seconds a verified (simulated) call is assumed to take.
NOMINAL_DURATION = {"perception": 0.2, "primitive": 2.0, "watchdog": 0.0}
# Kinds of leaves that call the driver or perceiver: their calls run under a wall-clock limit.
WORLD_KINDS = frozenset({"perception", "primitive", "watchdog", "action"})
# The verifier's oracle is asked this before a call that may span ticks ends: go on or end now.
STILL_RUNNING, ENDS_NOW = "running", "ends"


def fault_text(exc: BaseException) -> str:
    """One line for a call's fault: a seam check's own sentence, else the exception's type and text."""
    if isinstance(exc, seam.SeamFault):
        return one_line(str(exc))
    return one_line(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


@dataclass
class LeafResult:
    """What one leaf call produced."""

    outcome: str | None
    status: Status
    writes: dict[str, Any] = field(default_factory=dict)
    duration: float = 0.0
    event_meta: dict[str, Any] = field(default_factory=dict)  # primitives: goes into the event
    answers: dict[str, str] = field(default_factory=dict)  # sub-questions answered: {"semantic": "ok"}


@dataclass
class Pending:
    """A started motion, polled once per tick; `finish` turns its Execution into the result.

    `halt_writes` (optional) is what the leaf writes when it is preempted, from the Execution so
    far (e.g. the grasp's execution key, so a Watchdog can still judge it).
    """

    motion: Motion
    finish: Callable[[Execution], LeafResult]
    halt_writes: Callable[[Execution], dict[str, Any]] | None = None
    polled: bool = False  # the leaf polled it once already this tick (and it is still running)
    seen: float = 0.0  # motion seconds already added to the logical clock


class Leaf(Resumable, py_trees.behaviour.Behaviour):
    """Base of every bt_grasp leaf. A subclass declares its node type once, on the class:
    `NODE_TYPE = leaf_type(name, kind, ports, outcomes=...)` (bt_grasp.nodes.declare) — its
    ports, outcome alphabet and the entries it touches — and the outcomes that succeed
    (`SUCCESS_OUTCOMES`). The registry reads the declaration from the class; `TYPE` is its name.

    Resumable state (for the verifier): status plus `ticks_running`, the ticks a RUNNING leaf has
    been running (its call may span at most `max_ticks`). The motion itself is the driver's: the
    verifier never has one, its oracle says whether the call goes on.
    """

    RESET = ("ticks_running",)

    NODE_TYPE: ClassVar[NodeType | None] = None
    TYPE: ClassVar[str] = ""
    SUCCESS_OUTCOMES: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class declaring NODE_TYPE is that type's implementation (its factory)."""
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("NODE_TYPE")
        if isinstance(declared, NodeType):
            cls.TYPE = declared.name
            if declared.factory is None:
                declared.factory = cls

    def __init__(self, node_id: str, params: dict[str, Any], ctx: RunContext,
                 node_type: NodeType | None = None) -> None:
        super().__init__(name=node_id)
        self.node_id = node_id
        self.params = params
        self.ctx = ctx
        found = node_type or ctx.registry.get(self.TYPE)
        if found is None:
            raise ValueError(f"leaf {type(self).__name__} has no registered node type {self.TYPE!r}")
        self.node_type: NodeType = found
        self.alphabet = self.node_type.alphabet(params)
        self.last_outcome: str | None = None
        self.ticks_running = 0
        self.max_ticks = max(1, int(self.node_type.max_ticks))
        self.pending: Pending | None = None

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        """py_trees' Behaviour.tick minus its debug log and its scan of every Status for an
        invalid return (update() returns a Status by type): a third of a leaf's tick cost."""
        if self.status != Status.RUNNING:
            self.initialise()
        new_status = self.update()
        if new_status != Status.RUNNING:
            self.stop(new_status)
        self.status = new_status
        yield self

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
    def execute(self) -> LeafResult | Pending:
        raise NotImplementedError

    def simulate(self, outcome: str) -> LeafResult:
        """Default: the outcome alone, with the nominal duration of this kind of leaf."""
        return self.result(outcome, duration=NOMINAL_DURATION.get(self.node_type.kind, 0.0))

    def fault_result(self, reason: str) -> LeafResult:
        """What an exception inside execute() becomes (never an exception out of the leaf)."""
        fallback = "fault" if "fault" in self.alphabet else (self.alphabet[-1] if self.alphabet else None)
        self.ctx.last_fault = f"{self.node_id}: {reason}"  # a guard that ends the run then names it
        self.ctx.faults += 1
        return LeafResult(fallback, Status.FAILURE, {f"{self.node_id}.error": reason},
                          event_meta={"error": reason})

    # -- the tick ------------------------------------------------------------------------------
    def update(self) -> Status:
        ctx = self.ctx
        if self.status == Status.RUNNING:
            if ctx.decision is not None:  # decided this tick: the motion stops, nothing else acts
                self._halt("decided")
                return Status.FAILURE
            return self._oracle_tick() if self._oracle_decides() else self._poll()
        if ctx.decision is not None:
            return Status.FAILURE  # the episode is over; nothing else may act this tick
        if not self._pass_guards():
            return Status.FAILURE
        self.ticks_running = 0
        if self._oracle_decides():
            return self._oracle_tick()
        try:
            res = self._call(self.execute, "call") if self.node_type.kind in WORLD_KINDS else self.execute()
        except NotResponding:
            raise  # the run decides (Runner.run): a driver that stopped answering is not one call's fault
        except Exception as exc:  # a driver or perception bug must not escape the tree
            res = self.fault_result(fault_text(exc))
        if isinstance(res, Pending):
            self.pending = res
            return self._poll()
        return self._commit(res)

    def _oracle_decides(self) -> bool:
        return self.ctx.oracle is not None and bool(self.alphabet)

    def _oracle_tick(self) -> Status:
        """The verifier's stand-in for start/poll: go on running (within max_ticks) or end now."""
        ctx, oracle = self.ctx, self.ctx.oracle
        assert oracle is not None  # only called when _oracle_decides
        ctx.world_tick = ctx.tick  # a call that may take time (LogicalTimeout.limit)
        if self.ticks_running + 1 < self.max_ticks and ctx.explore_running and \
                oracle.choose(f"{self.node_id}#running", (ENDS_NOW, STILL_RUNNING)) == STILL_RUNNING:
            self.ticks_running += 1
            return Status.RUNNING
        return self._commit(self.simulate(oracle.choose(self.node_id, self.alphabet)))

    def _call(self, fn: Callable[[], Any], what: str) -> Any:
        """fn() under this node's wall-clock limit (bt_grasp.call_limit): NotResponding past it."""
        ctx = self.ctx
        return ctx.limiter.call(fn, ctx.call_limit(self.max_ticks), f"{self.node_id} {what}")

    def _poll(self) -> Status:
        """Poll the motion once; at the last tick it may span, a motion still going is cancelled."""
        pending = self.pending
        assert pending is not None, f"{self.node_id} is RUNNING without a motion"
        first, last = pending.polled, self.ticks_running + 1 >= self.max_ticks
        pending.polled = False

        def step() -> tuple[Execution | None, Any]:
            # execute() polled it once to see it start: that was this tick's poll
            execution = None if first else pending.motion.poll()
            if execution is None and last:
                execution = pending.motion.cancel(TIMEOUT)
            return execution, pending.motion.elapsed

        try:
            execution, elapsed = self._call(step, "poll")
            if execution is not None:
                seam.execution(execution, f"{getattr(pending.motion, 'primitive', 'a')} motion")
            self._clock_follows(pending, elapsed)
        except NotResponding:
            raise
        except Exception as exc:  # a driver bug while moving: the call faults, the tree goes on
            self.pending = None
            self._cancel_quietly(pending)
            return self._commit(self.fault_result(fault_text(exc)))
        if execution is None:
            self.ticks_running += 1
            return Status.RUNNING
        self.pending = None
        try:
            res = pending.finish(execution)
        except Exception as exc:
            res = self.fault_result(fault_text(exc))
        res.duration = 0.0  # the clock has followed the motion already
        return self._commit(res)

    def _clock_follows(self, pending: Pending, elapsed: Any) -> None:
        """The logical clock follows the motion's `elapsed` (checked: a number of seconds)."""
        seconds = seam.seconds(elapsed, f"{getattr(pending.motion, 'primitive', 'motion')} elapsed")
        self.ctx.clock.advance(seconds - pending.seen)
        pending.seen = max(pending.seen, seconds)

    def _cancel_quietly(self, pending: Pending) -> None:
        """A motion whose call faulted is cancelled so nothing keeps moving (best effort: the
        fault is already the outcome; a driver that does not answer is left to the runner)."""
        try:
            self._call(lambda: pending.motion.cancel(HALTED), "cancel")
        except NotResponding:
            raise
        except Exception:
            self.ctx.faults += 1

    # -- halting -----------------------------------------------------------------------------
    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID and self.status == Status.RUNNING:
            self._halt(self.ctx.halt_reason)

    def _halt(self, reason: str) -> None:
        """Preempted while RUNNING: stop the motion safely and record the attempt it was.

        The call was counted when it started (a halted grasp spent an action); its event carries
        the label it had reached: TIMEOUT when a deadline stopped it, else what `halt_label`
        makes of the telemetry so far (None: not judged).
        """
        ctx = self.ctx
        ctx.world_tick = ctx.tick  # stopping a call may take time (LogicalTimeout.limit)
        writes: dict[str, Any] = {f"{self.node_id}.halted": reason}
        meta: dict[str, Any] = {"outcome": "halted", "halted": reason, "ticks": self.ticks_running}
        execution: Execution | None = None
        if self.pending is not None:
            pending, self.pending = self.pending, None
            try:  # halting never raises: a parent is stopping this leaf, maybe after a fault
                execution, elapsed = self._call(lambda: (pending.motion.cancel(reason), pending.motion.elapsed),
                                                "cancel")
                seam.execution(execution, f"{getattr(pending.motion, 'primitive', 'a')} motion")
                self._clock_follows(pending, elapsed)
                meta.update(duration=round(float(execution.duration), 4), fault=execution.fault,
                            samples=len(execution.telemetry))
                if pending.halt_writes is not None:
                    writes.update(pending.halt_writes(execution))
            except Exception as exc:  # the robot would not stop: say so, loudly, in the event
                meta["error"] = fault_text(exc)
                ctx.faults += 1  # and the runner stops the driver at the end
                execution = None
        for key, value in writes.items():
            ctx.blackboard.set(key, value)
        if self.node_type.kind == "primitive":
            label = Label.TIMEOUT.value if reason == TIMEOUT else self.halt_label(execution)
            event = ctx.emit(self.node_id, self.node_type.name, ExecStatus.FAIL, label=label, metadata=meta)
            ctx.blackboard.set(f"{self.node_id}.trial_id", event.trial_id)
        self.last_outcome = None
        self.feedback_message = f"halted: {reason}"
        self.ticks_running = 0

    def halt_label(self, execution: Execution | None) -> str | None:
        """The Watchdog label a preempted call had reached (primitives with a streaming Watchdog
        override this); None when it is not judged."""
        return None

    def _pass_guards(self) -> bool:
        """Episode budgets, checked before the call; a refused call ends the episode."""
        ctx, nt = self.ctx, self.node_type
        if nt.counts_as_action:
            if ctx.ledger.actions >= ctx.limits.actions:
                ctx.decide(Decision.WAIT_CLARIFY, ctx.limits.actions_spent())
                return False
            for scope, limit in ctx.action_scopes:
                if ctx.ledger.scoped_actions.get(scope, 0) >= limit:
                    ctx.blackboard.set(f"{self.node_id}.error", f"budget '{scope}' spent")
                    return False
            ctx.ledger.actions += 1
            for scope, _ in ctx.action_scopes:
                ctx.ledger.scoped_actions[scope] = ctx.ledger.scoped_actions.get(scope, 0) + 1
            ctx.ledger.perception_streak = 0
            ctx.last_fault = None
        elif nt.perception:
            if ctx.ledger.perception_streak >= ctx.limits.perception_streak:
                last = f" (last fault: {ctx.last_fault})" if ctx.last_fault else ""
                ctx.decide(Decision.WAIT_CLARIFY,
                           f"perception loop: {ctx.limits.perception_streak} perception calls "
                           f"in a row without a manipulation{last}")
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
        if ctx.calls is not None and res.outcome is not None:  # the call's own report: who answered what
            ctx.calls.append(LeafCall(self.node_id, res.outcome, self.ticks_running + 1, res.answers))
        self.last_outcome = res.outcome
        self.feedback_message = res.outcome or ""
        return res.status
