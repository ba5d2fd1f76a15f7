"""Composites and decorators with bt_grasp semantics, built on py_trees' tick machinery.

sequence/selector/parallel/inverter/force_* are py_trees' own semantics, re-implemented in
bt_grasp.py_trees_controls so that their state is plain data (bt_grasp.resumable). `reactive_sequence` and
`reactive_selector` are py_trees' memory=False Sequence / Selector (BT.CPP ReactiveSequence /
ReactiveFallback): every tick starts again from the first child, and a RUNNING child that an
earlier one overrules is halted with the reason "preempted". The rest differ from the py_trees or
BT.CPP versions on purpose: `retry` counts starts per episode and is never refilled, `timeout`
reads the logical clock, `switch` routes on a blackboard label, `budget` scopes the action budget.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import py_trees
from py_trees.behaviour import Behaviour
from py_trees.common import Status

from bt_grasp.context import RunContext
from bt_grasp.py_trees_controls import (
    ForceFailure,
    ForceSuccess,
    Inverter,
    Parallel,
    QuietDecorator,
    Selector,
    Sequence,
    finish_tick,
)
from bt_grasp.resumable import Resumable

PREEMPTED = "preempted"  # why a reactive composite halted a RUNNING child (the leaf's event says it)
# What an oracle answers a timeout asking whether its deadline has passed (LogicalTimeout._due).
DEADLINE_NOT_YET, DEADLINE_PASSED = "not yet", "passed"
DEADLINE_OUTCOMES = (DEADLINE_NOT_YET, DEADLINE_PASSED)


def tick_allowance(seconds: float, tick_period: float) -> int:
    """Tick entries after a timeout's start by which `seconds` have passed on any clock whose
    ticks last at least `tick_period` (the start tick itself may be all but over)."""
    if tick_period <= 0:
        return 1
    return math.ceil(round(seconds / tick_period, 9)) + 1


class _Preempting:
    """A reactive composite: ticked with memory off, it halts a RUNNING child as "preempted"
    (the leaf's event says so)."""

    def __init__(self, name: str, children: list[Behaviour], ctx: RunContext) -> None:
        super().__init__(name, memory=False, children=children)  # type: ignore[call-arg]
        self.ctx = ctx

    def halt_child(self, child: Behaviour) -> None:
        with self.ctx.preempting(PREEMPTED):
            child.stop(Status.INVALID)


class ReactiveSequence(_Preempting, Sequence):
    """Re-tick the children from the first on every tick; a child that fails (or runs) halts the
    RUNNING children after it. A guard condition before a long motion is thus re-checked each
    tick, and the motion is cancelled the tick it stops holding."""


class ReactiveSelector(_Preempting, Selector):
    """Re-tick the children from the first on every tick; a higher-priority child that succeeds
    (or runs) halts the RUNNING lower-priority child."""


def _time_left(deadline: float, now: float) -> float:
    """Seconds before a deadline, rounded (float noise of summed tick periods): the one value a
    timeout both acts on and is merged by in the verifier."""
    return round(deadline - now, 9)


def _tick_within(node: py_trees.decorators.Decorator, scopes: list[Any], entry: Any) -> Iterator[Behaviour]:
    """Tick the decorator's child with `entry` on a context stack (the deadlines, the action
    scopes) that the leaves below read, popped even when the tick is abandoned; then finish."""
    scopes.append(entry)
    try:
        yield from node.decorated.tick()
    finally:
        scopes.pop()
    finish_tick(node, node.update())
    yield node


class BudgetedRetry(Resumable, QuietDecorator, py_trees.decorators.Decorator):
    """Start the child at most `attempts` times per episode (shared by `scope`).

    Unlike py_trees.Retry and BT.CPP RetryUntilSuccessful, nothing resets the count: not halting,
    not a parent re-entering. That is what makes the worst case a static number.
    """

    def __init__(self, name: str, child: Behaviour, attempts: int, scope: str, ctx: RunContext) -> None:
        super().__init__(name=name, child=child)
        self.attempts = attempts
        self.scope = scope
        self.ctx = ctx

    @property
    def used(self) -> int:
        return self.ctx.ledger.retry_starts.get(self.scope, 0)

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        if self.decorated.status != Status.RUNNING:
            if self.used >= self.attempts or self.ctx.decision is not None:
                self.feedback_message = f"attempts spent ({self.used}/{self.attempts})"
                finish_tick(self, Status.FAILURE)
                yield self
                return
            self.ctx.ledger.retry_starts[self.scope] = self.used + 1
        yield from self.decorated.tick()
        finish_tick(self, self.update())
        yield self

    def update(self) -> Status:
        child = self.decorated.status
        if child == Status.FAILURE:
            if self.used < self.attempts and self.ctx.decision is None:
                self.feedback_message = f"attempt {self.used}/{self.attempts} failed, retrying"
                return Status.RUNNING
            self.feedback_message = f"attempts spent ({self.used}/{self.attempts})"
            return Status.FAILURE
        return child


class Repeat(Resumable, QuietDecorator, py_trees.decorators.Decorator):
    """Run a succeeding child again, `times` successes in all (None = forever); fail on failure."""

    RESET = ("successes",)

    def __init__(self, name: str, child: Behaviour, times: int | None) -> None:
        super().__init__(name=name, child=child)
        self.times = times
        self.successes = 0

    def initialise(self) -> None:
        self.successes = 0

    def _canonical(self, reset: tuple[Any, ...], now: float) -> tuple[Any, ...]:
        """Repeating forever, the count of successes so far changes nothing."""
        return (None,) if self.times is None else reset

    def update(self) -> Status:
        child = self.decorated.status
        if child == Status.SUCCESS:
            self.successes += 1
            if self.times is not None and self.successes >= self.times:
                return Status.SUCCESS
            return Status.RUNNING
        return child


class LogicalTimeout(Resumable, QuietDecorator, py_trees.decorators.Decorator):
    """Fail when the child runs past `seconds` of episode time (logical in simulation, wall on a
    real robot): a child still RUNNING at the deadline is halted, its motion cancelled as "timeout".

    While the child ticks, the deadline is also visible to primitives (ctx.remaining_time()), so
    a motion started near the deadline is stopped by the driver at the deadline.

    Under an outcome oracle (the verifier, property tests) time is not measured but bounded: a
    tick lasts at least one tick period, so after `tick_allowance` tick entries the deadline has
    certainly passed, and before that it may already have (a slow call, a long tick). The oracle
    is asked `<id>#deadline` at every check the deadline is not certain at, except the one that
    starts the timeout; a run of the real clock is one of the answers. With
    `ctx.logical_deadlines` it is certain at the latest tick a logical clock allows (`limit`).
    """

    RESET = ("deadline", "ticks_run", "checking", "limit")

    def __init__(self, name: str, child: Behaviour, seconds: float, ctx: RunContext) -> None:
        super().__init__(name=name, child=child)
        self.seconds = seconds
        self.ctx = ctx
        self.deadline = 0.0
        self.ticks_run = 0  # tick entries since the one that started it (the oracle's clock)
        # which check asks the oracle ("entry", "after" the child; "" otherwise): the two
        # questions look alike but have different futures, so a state must tell them apart
        self.checking = ""
        self.limit = 0  # tick entries after its start by which the deadline has passed (_limit)

    def initialise(self) -> None:
        self.deadline = self.ctx.clock.now + self.seconds
        self.ticks_run = 0
        self.limit = self._limit()

    def _limit(self) -> int:
        """Tick entries after the start by which the deadline has passed, under an oracle. On a
        logical clock a tick lasts exactly its period unless a call takes time: started before
        any call of its tick, the timeout starts at the tick's start, and the deadline has passed
        `ceil(seconds / period)` entries later. Otherwise (a wall clock, or a call before it in
        its tick that may have taken up to a period) one entry more: `tick_allowance`."""
        ctx, period = self.ctx, self.ctx.clock.tick_period
        if ctx.logical_deadlines and ctx.world_tick != ctx.tick and period > 0:
            return max(1, math.ceil(round(self.seconds / period, 9)))
        return self.tick_allowance

    @property
    def tick_allowance(self) -> int:
        """Tick entries after its start by which the deadline has passed on any clock: the start
        may fall anywhere in its tick, and every later tick lasts at least one tick period."""
        return tick_allowance(self.seconds, self.ctx.clock.tick_period)

    def _canonical(self, reset: tuple[Any, ...], now: float) -> tuple[Any, ...]:
        """Only the time left matters, not when the episode started (rounded: float noise);
        under an oracle only the ticks run count."""
        if self.ctx.oracle is not None and not self.ctx.deadlines_by_clock:
            return (reset[1], reset[2], reset[3])
        return (_time_left(reset[0], now),)

    def _due(self, starting: bool = False, check: str = "after") -> bool:
        """The deadline has come. On a clock: judged on the time left rounded as in `_canonical`,
        so that the summed tick periods' float noise never moves it by a tick (60 ticks of 0.05 s
        reach a 3 s deadline). Under an oracle: certain after `limit` entries, never at the
        start (unless `seconds` is 0), else the oracle's answer; with `ctx.deadlines_by_clock`
        (a verifier replay on a clock) the clock's."""
        ctx = self.ctx
        if ctx.oracle is None or ctx.deadlines_by_clock or self.seconds <= 0:
            return _time_left(self.deadline, ctx.clock.now) <= 0
        if starting:
            return False
        if self.ticks_run >= self.limit:
            return True
        self.checking = check
        try:
            return ctx.oracle.choose(f"{self.name}#deadline", DEADLINE_OUTCOMES) == DEADLINE_PASSED
        finally:
            self.checking = ""

    def tick(self) -> Iterator[Behaviour]:
        starting = self.status != Status.RUNNING
        if starting:
            self.initialise()
        else:
            self.ticks_run += 1
        if self._due(starting, "entry"):
            self._halt_child()
            finish_tick(self, Status.FAILURE)
            yield self
            return
        yield from _tick_within(self, self.ctx.deadlines, self.deadline)

    def _halt_child(self) -> None:
        """Halt a running child as "timeout" and say TIMEOUT; the caller fails."""
        if self.decorated.status == Status.RUNNING:
            with self.ctx.preempting("timeout"):
                self.decorated.stop(Status.INVALID)
        self.ctx.blackboard.set(f"{self.name}.label", "TIMEOUT")
        self.feedback_message = f"timed out after {self.seconds} s"

    def update(self) -> Status:
        child = self.decorated.status
        if child == Status.RUNNING and self._due():
            self._halt_child()
            return Status.FAILURE
        return child


class ActionBudget(Resumable, QuietDecorator, py_trees.decorators.Decorator):
    """A named sub-budget of manipulation actions for the subtree below (never refilled)."""

    def __init__(self, name: str, child: Behaviour, actions: int, scope: str, ctx: RunContext) -> None:
        super().__init__(name=name, child=child)
        self.limit = actions
        self.scope = scope
        self.ctx = ctx

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        yield from _tick_within(self, self.ctx.action_scopes, (self.scope, self.limit))

    def update(self) -> Status:
        return self.decorated.status


class Switch(Resumable, py_trees.composites.Composite):
    """Route to the child whose case equals a blackboard label; `default` otherwise.

    The case is chosen when the switch starts and kept while that child is RUNNING.
    """

    RESET = ("chosen_index",)

    def __init__(self, name: str, key: str, cases: dict[str, Behaviour], default: Behaviour | None,
                 ctx: RunContext) -> None:
        children = list(cases.values()) + ([default] if default is not None else [])
        super().__init__(name=name, children=children)
        self.key = key
        self.cases = cases
        self.default = default
        self.ctx = ctx
        self.chosen: Behaviour | None = None

    @property
    def chosen_index(self) -> int | None:
        return None if self.chosen is None else self.children.index(self.chosen)

    @chosen_index.setter
    def chosen_index(self, index: int | None) -> None:
        self.chosen = None if index is None else self.children[index]

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING or self.chosen is None:
            self.initialise()
            label = self.ctx.blackboard.get(self.key)
            self.chosen = self.cases.get(str(label), self.default) if label is not None else self.default
        if self.chosen is None:
            self.feedback_message = f"no case for {self.key}={self.ctx.blackboard.get(self.key)!r}"
            self.current_child = None
            finish_tick(self, Status.FAILURE)
            yield self
            return
        self.current_child = self.chosen
        yield from self.chosen.tick()
        finish_tick(self, self.chosen.status)
        yield self

    def stop(self, new_status: Status = Status.INVALID) -> None:
        for child in self.children:
            if child.status == Status.RUNNING:
                child.stop(Status.INVALID)
        if new_status == Status.INVALID:
            self.chosen = None
        super().stop(new_status)

    def update(self) -> Status:  # pragma: no cover - tick() sets the status directly
        return self.status


# -- factories: (node_id, params, children, ctx) -> Behaviour ----------------------------------

def _policy(name: str) -> py_trees.common.ParallelPolicy.Base:
    if name == "success_on_one":
        return py_trees.common.ParallelPolicy.SuccessOnOne()
    return py_trees.common.ParallelPolicy.SuccessOnAll(synchronise=True)


def build_sequence(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    if not params.get("memory", True):  # memory: false is a reactive sequence
        return ReactiveSequence(node_id, children, ctx)
    return Sequence(node_id, memory=True, children=children)


def build_selector(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    if not params.get("memory", True):
        return ReactiveSelector(node_id, children, ctx)
    return Selector(node_id, memory=True, children=children)


def build_reactive_sequence(node_id: str, params: dict[str, Any], children: list[Behaviour],
                            ctx: RunContext):
    return ReactiveSequence(node_id, children, ctx)


def build_reactive_selector(node_id: str, params: dict[str, Any], children: list[Behaviour],
                            ctx: RunContext):
    return ReactiveSelector(node_id, children, ctx)


def build_parallel(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return Parallel(node_id, policy=_policy(params.get("policy", "success_on_all")), children=children)


def build_retry(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return BudgetedRetry(node_id, children[0], int(params["attempts"]),
                         str(params.get("scope") or node_id), ctx)


def build_repeat(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    times = params.get("times")
    return Repeat(node_id, children[0], int(times) if times is not None else None)


def build_timeout(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return LogicalTimeout(node_id, children[0], float(params["seconds"]), ctx)


def build_budget(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return ActionBudget(node_id, children[0], int(params["actions"]),
                        str(params.get("scope") or node_id), ctx)


def build_inverter(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return Inverter(node_id, children[0])


def build_force_success(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return ForceSuccess(node_id, children[0])


def build_force_failure(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return ForceFailure(node_id, children[0])
