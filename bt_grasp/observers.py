"""One way to watch a run: the Runner calls each `RunObserver` with the run's header, every tick
and the final record, in that order, as they happen.

The model is BehaviorTree.CPP's StatusChangeLogger: one observer base that every consumer (the
trace writer, the live terminal view, the Python API's callbacks, recorders for other tools)
subclasses, so the runner has one place that reports and nobody keeps a second bookkeeping.
Observers only read: the context they are given at `started` belongs to the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bt_grasp.outcomes import LeafCall, OutcomeEvent

if TYPE_CHECKING:
    from bt_grasp.context import RunContext
    from bt_grasp.result import EpisodeResult

Record = dict[str, Any]


@dataclass(frozen=True)
class Tick:
    """What one tick did, as the trace records it: the tick number, the logical clock after it,
    the nodes ticked with their statuses [(node id, status)] (a RUNNING leaf appears on every
    tick it runs), the events it emitted, the blackboard entries it changed and the ledger
    counters that changed (what budgets are left). `record` is the same tick as its trace line.
    `calls` are the leaf calls that finished this tick, each as its leaf reported it (node id,
    outcome, ticks it spanned): who answered what, even when two leaves write one key."""

    tick: int
    clock: float
    visited: list[tuple[str, str]]
    events: list[OutcomeEvent]
    blackboard: dict[str, Any]
    ledger: dict[str, Any] = field(default_factory=dict)
    record: Record = field(default_factory=dict, repr=False, compare=False)
    calls: list[LeafCall] = field(default_factory=list)


class RunObserver:
    """Base class: override the calls you need; each is a no-op here.

    `started(header, ctx)`: once, before the first tick; `header` is the trace's header record
    (tree, structure, budgets, goal, run id, versions, and what the caller added) and `ctx` the
    run's context (blackboard, driver, clock), to read, never to change.
    `ticked(tick)`: after every tick, with its events final.
    `finished(final, result)`: once, after the decision; `final` is the trace's last record.
    A run stopped before its first tick (interrupted during set-up) calls `finished` only.
    `close()`: whoever opened the observer calls it once the run is over, even if the run failed
    (a file's last bytes, a server's sockets).
    """

    def started(self, header: Record, ctx: RunContext) -> None:
        """The run begins (see the class docstring)."""

    def ticked(self, tick: Tick) -> None:
        """One tick is done."""

    def finished(self, final: Record, result: EpisodeResult) -> None:
        """The run has decided."""

    def close(self) -> None:
        """Release what the observer holds; nothing here."""


class RecordObserver(RunObserver):
    """Hands every trace record (header, each tick, final) to `record`, as a trace file would
    hold them: for consumers that read traces, such as the live view's fold. `record` calls
    `callback`; a subclass may override it instead."""

    def __init__(self, callback: Callable[[Record], None] | None = None) -> None:
        self.callback = callback

    def record(self, rec: Record) -> None:
        if self.callback is not None:
            self.callback(rec)

    def started(self, header: Record, ctx: RunContext) -> None:
        self.record(header)

    def ticked(self, tick: Tick) -> None:
        self.record(tick.record)

    def finished(self, final: Record, result: EpisodeResult) -> None:
        self.record(final)


class EventObserver(RunObserver):
    """Hands each OutcomeEvent to `callback` at the end of the tick that emitted it."""

    def __init__(self, callback: Callable[[OutcomeEvent], None]) -> None:
        self.callback = callback

    def ticked(self, tick: Tick) -> None:
        for event in tick.events:
            self.callback(event)


class TickObserver(RunObserver):
    """Hands each Tick to `callback`."""

    def __init__(self, callback: Callable[[Tick], None]) -> None:
        self.callback = callback

    def ticked(self, tick: Tick) -> None:
        self.callback(tick)


def observers_from(on_event: Iterable[Callable[[OutcomeEvent], None]] = (),
                   on_tick: Iterable[Callable[[Tick], None]] = (),
                   on_record: Callable[[Record], None] | None = None) -> list[RunObserver]:
    """Plain callbacks as observers, for the API's `on_event` / `on_tick` keywords."""
    out: list[RunObserver] = [EventObserver(cb) for cb in on_event]
    out += [TickObserver(cb) for cb in on_tick]
    if on_record is not None:
        out.append(RecordObserver(on_record))
    return out
