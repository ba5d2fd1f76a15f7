"""The episode loop: tick until a Decision is set, on a logical clock, recording a trace.

Ends: a terminal leaf or a budget guard sets the Decision; a root that finishes without one is
WAIT_CLARIFY "no decision"; `max_ticks` is a hard cap (WAIT_CLARIFY "tick cap"); SIGINT/SIGTERM
stop the driver and record WAIT_CLARIFY "interrupted". Any other exception while the episode
runs on a world (a node, a clock read, an observer, a callback) is a fault of the run: the tree is halted,
the driver stopped, and the decision is WAIT_CLARIFY "fault in <node>: <what>" (a driver call past
its wall-clock limit: "driver not responding: ..."). A run in which a call faulted (its `fault`
outcome, routed by the tree) also ends with driver.stop(). Observers that fail at the end get one
warning line each; the decision stands.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import py_trees
from py_trees.common import Status

from bt_grasp.call_limit import CallLimiter, NotResponding
from bt_grasp.compile import compile_tree
from bt_grasp.context import RunContext
from bt_grasp.errors import UserError, one_line
from bt_grasp.json_encoding import jsonable_changes
from bt_grasp.observers import EventObserver, RecordObserver, RunObserver, Tick, TickObserver
from bt_grasp.outcomes import Decision, LeafCall, OutcomeEvent
from bt_grasp.result import EpisodeResult as EpisodeResult  # re-exported for older imports
from bt_grasp.trace_header import header_record
from bt_grasp.trace_header import versions as versions  # re-exported for older imports
from bt_grasp.trace_writer import TraceWriter

if TYPE_CHECKING:
    from bt_grasp.drivers.base import Driver


class Interrupted(BaseException):
    """Raised from a signal handler; BaseException so no leaf's error handling swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def interrupts(enabled: bool = True) -> Iterator[None]:
    """While active, SIGINT and SIGTERM raise Interrupted (in the main thread), so whatever is
    running — set-up, a tick, a primitive — unwinds to a place that records the decision.

    Nested use is harmless: the outer handlers come back on exit.
    """
    if not enabled:
        yield
        return

    def _raise(signum: int, frame: Any) -> None:  # noqa: ARG001
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, _raise) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def stop_driver(driver: Driver | None, limiter: CallLimiter | None = None, limit: float | None = None) -> None:
    """Best-effort stop: the decision must still be recorded if the driver cannot stop. With a
    `limiter`, the stop waits at most `limit` seconds (a driver that hangs stays hung)."""
    if driver is None or not callable(getattr(driver, "stop", None)):
        return
    try:
        if limiter is not None:
            limiter.call(driver.stop, limit, "driver.stop()")
        else:
            driver.stop()
    except Exception as exc:
        warn(f"the driver did not stop: {describe(exc)}")


def warn(text: str) -> None:
    """One warning line on stderr (what failed after, or around, a recorded decision)."""
    print(f"bt-grasp: warning: {one_line(text)}", file=sys.stderr)


def describe(exc: BaseException) -> str:
    """'Type: message' (or the type alone), one line; a call past its limit says so itself."""
    if isinstance(exc, NotResponding):
        return one_line(str(exc))
    return one_line(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


def fault_site(exc: BaseException) -> str:
    """Where an exception was raised: the innermost tree node on its traceback ("grasp_1"), else
    the observer or callback ("observer TraceWriter", "callback on_tick"), else "the runner"."""
    node: str | None = None
    watcher: str | None = None
    tb = exc.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, py_trees.behaviour.Behaviour):
            node = owner.name
        elif isinstance(owner, (TickObserver, EventObserver)) or (
                isinstance(owner, RecordObserver) and owner.callback is not None):
            watcher = f"callback {getattr(owner.callback, '__qualname__', type(owner.callback).__name__)}"
        elif isinstance(owner, RunObserver) and watcher is None:
            watcher = f"observer {type(owner).__name__}"
        tb = tb.tb_next
    return node or watcher or "the runner"


def fault_reason(exc: BaseException) -> str:
    """The decision's reason for a fault that ended the run."""
    if isinstance(exc, NotResponding):
        return one_line(str(exc))
    text = one_line(str(exc)) if str(exc) else type(exc).__name__
    return f"fault in {fault_site(exc)}: {text}"


class Runner:
    """Runs one episode of a compiled tree in a RunContext."""

    def __init__(self, tree_spec: Any, ctx: RunContext, trace_path: str | None = None,
                 header_extra: dict[str, Any] | None = None,
                 observers: Iterable[RunObserver] = ()) -> None:
        """`observers` watch the run (bt_grasp.observers: a trace writer, the live view, API
        callbacks); `trace_path` is shorthand for adding a TraceWriter of that file.
        `header_extra`: fields added to the header record (robot, seed, episode...)."""
        self.spec = tree_spec
        self.ctx = ctx
        self.root = compile_tree(tree_spec, ctx)
        self.observers = list(observers)
        if trace_path:
            self.observers.append(TraceWriter(trace_path))
        self.header_extra = header_extra or {}
        self._recording = bool(self.observers)
        self._ledger_seen: dict[str, Any] = {}

    def _header(self) -> dict[str, Any]:
        return header_record(self.spec, self.ctx.limits, dict(self.ctx.blackboard.items()), self.header_extra,
                             run_id=self.ctx.run_id)

    def _tick(self) -> list[tuple[str, str]]:
        ctx = self.ctx
        ctx.tick += 1
        tick_start = ctx.clock.now
        if not self._recording:
            for _ in self.root.tick():
                pass
            ctx.clock.end_tick(tick_start)
            return []
        # `_value_` is the member's plain attribute; `.value` goes through a descriptor per node.
        visited = [(node.name, node.status._value_) for node in self.root.tick()]
        ctx.clock.end_tick(tick_start)
        return visited

    def _ledger_changes(self) -> dict[str, Any]:
        """The ledger counters that changed since the last tick record (what budgets are left)."""
        led, seen, out = self.ctx.ledger, self._ledger_seen, {}
        for key in ("actions", "perception_streak", "retry_starts", "scoped_actions"):
            value = getattr(led, key)
            if seen.get(key) != value:
                seen[key] = out[key] = dict(value) if type(value) is dict else value
        return out

    def _record_tick(self, visited: list[tuple[str, str]], events: list[OutcomeEvent],
                     calls: list[LeafCall]) -> None:
        ctx = self.ctx
        if not self._recording:
            ctx.blackboard.drain_changes()
            return
        changes = jsonable_changes(ctx.blackboard.drain_changes())
        clock = round(ctx.clock.now, 6)
        record = {"type": "tick", "tick": ctx.tick, "clock": clock, "visited": visited,
                  "blackboard": changes,
                  "events": [e.model_dump(mode="json") for e in events] if events else []}
        ledger = self._ledger_changes()
        if ledger:
            record["ledger"] = ledger
        tick = Tick(tick=ctx.tick, clock=clock, visited=visited, events=events,
                    blackboard=changes, ledger=ledger, record=record, calls=calls)
        for observer in self.observers:
            observer.ticked(tick)

    def run(self, handle_signals: bool = False) -> EpisodeResult:
        ctx = self.ctx
        start = time.perf_counter()
        exit_code = 0
        fault: Exception | None = None
        with interrupts(handle_signals):
            try:
                if self._recording:
                    ctx.calls = []  # the leaves report their finished calls for the observers
                    header = self._header()
                    for observer in self.observers:
                        observer.started(header, ctx)
                while ctx.decision is None:
                    if ctx.tick >= ctx.limits.max_ticks:
                        ctx.decide(Decision.WAIT_CLARIFY, f"tick cap ({ctx.limits.max_ticks} ticks)")
                        break
                    visited = self._tick()
                    self._record_tick(visited, ctx.publish_tick_events(), ctx.publish_tick_calls())
                    if ctx.decision is None and self.root.status in (Status.SUCCESS, Status.FAILURE):
                        ctx.decide(Decision.WAIT_CLARIFY,
                                   f"no decision (root ended {self.root.status.value} without one)")
            except Interrupted as exc:
                exit_code = 128 + exc.signum
                stop_driver(ctx.driver)
                ctx.decision = None
                ctx.decide(Decision.WAIT_CLARIFY, "interrupted")
            except UserError:  # bad input found late (an observer's option): one line, exit 2
                self._halt_tree()
                if ctx.tick and ctx.driver is not None:
                    stop_driver(ctx.driver, ctx.limiter, ctx.call_limit(1))
                raise
            except Exception as exc:  # no exception leaves a run without its decision
                if ctx.oracle is not None:
                    raise  # the verifier's run: its oracle steers a replay by raising (verifier/replay.py)
                fault = exc
                ctx.decide(Decision.WAIT_CLARIFY, fault_reason(exc))
        self._halt_tree()
        if (fault is not None or ctx.faults) and ctx.driver is not None:  # a faulty robot is left stopped
            stop_driver(ctx.driver, ctx.limiter, ctx.call_limit(1))
        result = EpisodeResult(
            decision=ctx.decision or Decision.WAIT_CLARIFY, reason=ctx.reason, ticks=ctx.tick,
            clock=self._clock_now(), wall=time.perf_counter() - start, actions=ctx.ledger.actions,
            action_budget=ctx.limits.actions, counters=ctx.ledger.snapshot(),
            events=list(ctx.all_events), exit_code=exit_code)
        finish(self.observers, result)
        return result

    def _clock_now(self) -> float:
        """The episode clock at the end (0 if a driver's clock cannot be read any more)."""
        try:
            return float(self.ctx.clock.now)
        except Exception:
            return 0.0

    def _halt_tree(self) -> None:
        """Halt whatever still runs (the running motion is cancelled). Never raises: after a
        fault a node may fail again while halting; then every running motion is cancelled
        directly."""
        try:
            self.root.stop(Status.INVALID)
            return
        except Exception as exc:
            warn(f"halting the tree failed: {describe(exc)}; cancelling running motions directly")
        for node in self.root.iterate():
            pending = getattr(node, "pending", None)
            if pending is None:
                continue
            node.pending = None  # type: ignore[attr-defined]
            try:
                self.ctx.limiter.call(pending.motion.cancel, self.ctx.call_limit(1), f"{node.name} cancel")
            except Exception as exc:
                warn(f"{node.name}: the motion could not be cancelled: {describe(exc)}")


def finish(observers: Iterable[RunObserver], result: EpisodeResult) -> None:
    """Tell every observer the decision, with the trace's last record."""
    observers = list(observers)
    if not observers:
        return
    record = {"type": "final", **{k: v for k, v in result.to_json().items() if k != "events"}}
    for observer in observers:  # one that fails does not keep the others from the decision
        try:
            observer.finished(record, result)
        except Exception as exc:
            warn(f"{type(observer).__name__} could not record the decision: {describe(exc)}")


def print_err(msg: str) -> None:
    print(msg, file=sys.stderr)
