"""The run context handed to every node at compile time: world access, budgets, clock, events.

Nodes see the world only through `ctx.driver` and `ctx.perceiver`, or through `ctx.oracle` when
the verifier chooses outcomes instead of a robot.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from bt_grasp import seam
from bt_grasp.blackboard import Blackboard
from bt_grasp.call_limit import CallLimiter, call_limit
from bt_grasp.outcomes import Decision, ExecStatus, LeafCall, OutcomeEvent
from bt_grasp.registry import Registry
from bt_grasp.services import RunMemory, Services

if TYPE_CHECKING:  # typing only: the context does not depend on any driver or perceiver module
    from bt_grasp.drivers.base import Driver, Observation
    from bt_grasp.perception.types import Located, Perceiver, SceneGraph


class Oracle(Protocol):
    """Chooses a leaf's outcome in place of the world (the verifier's choice driver)."""

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str: ...


DEFAULT_MAX_TICKS = 1000  # the tick cap of a tree that gives none and whose structure bounds less


@dataclass
class EpisodeLimits:
    actions: int = 10
    perception_streak: int = 5
    max_ticks: int = DEFAULT_MAX_TICKS

    def actions_spent(self) -> str:
        """The reason of the WAIT_CLARIFY an action past the budget ends the episode with (the
        leaf guard and the MCP session's pre-check say it the same way)."""
        return f"action budget spent ({self.actions} grasp/push actions)"


@dataclass
class Ledger:
    """Everything counted in an episode. Counters only grow: budgets are never refilled."""

    actions: int = 0
    perception_streak: int = 0
    perception_calls: int = 0
    primitive_calls: dict[str, int] = field(default_factory=dict)
    retry_starts: dict[str, int] = field(default_factory=dict)
    scoped_actions: dict[str, int] = field(default_factory=dict)

    def snapshot(self) -> dict[str, Any]:
        return {"actions": self.actions, "perception_streak": self.perception_streak,
                "perception_calls": self.perception_calls,
                "primitive_calls": dict(self.primitive_calls),
                "retry_starts": dict(self.retry_starts),
                "scoped_actions": dict(self.scoped_actions)}


class EpisodeClock(Protocol):
    """Seconds of episode time, read by leaves, timeouts and the trace. `LogicalClock` (simulation,
    the verifier) and `WallClock` (a real robot) are the two kinds: siblings, not one a special
    case of the other, because only logical time can be advanced and set."""

    tick_period: float

    @property
    def realtime(self) -> bool:
        """True when time passes by itself (a wall clock): the run then waits out each tick."""
        ...

    @property
    def now(self) -> float: ...

    def advance(self, seconds: float) -> None:
        """Account for a call that took `seconds` (a wall clock ignores it: time passed anyway)."""
        ...

    def end_tick(self, tick_start: float) -> None:
        """Close a tick that began at `tick_start`: it lasts at least one tick period."""
        ...


class LogicalClock:
    """Seconds of episode time: leaves advance it by what their calls took (a running motion by
    what it ran in each poll), and a tick lasts at least `tick_period`. Its `now` is writable: the
    verifier restores a saved time."""

    realtime = False

    def __init__(self, tick_period: float = 0.05) -> None:
        self.now = 0.0
        self.tick_period = tick_period

    def advance(self, seconds: float) -> None:
        if seconds > 0:
            self.now += seconds

    def end_tick(self, tick_start: float) -> None:
        """Close a tick that began at `tick_start`: it lasts at least one tick period."""
        self.advance(tick_start + self.tick_period - self.now)


class WallClock:
    """Episode time on a real robot: seconds since the episode began, by the wall clock.

    Leaves cannot advance it (a motion takes the time it takes); closing a tick waits for the
    rest of the tick period, so a tree polls a real robot at a steady rate and a `timeout`
    preempts at a wall-clock deadline.
    """

    realtime = True

    def __init__(self, tick_period: float = 0.05, now: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.tick_period = tick_period
        self._now, self._sleep = now, sleep
        self._t0 = now()

    @property
    def now(self) -> float:  # read-only: leaves never set the time on a wall clock
        return self._now() - self._t0

    def advance(self, seconds: float) -> None:
        pass

    def end_tick(self, tick_start: float) -> None:
        rest = tick_start + self.tick_period - self.now
        if rest > 0:
            self._sleep(rest)


@dataclass
class RunContext:
    """Per-episode state shared by the nodes of one compiled tree."""

    registry: Registry
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    # The world, or None when the verifier's oracle chooses outcomes instead. Optional
    # capabilities are tested with isinstance against the protocols of drivers/capabilities.py.
    driver: Driver | None = None
    perceiver: Perceiver | None = None
    profile: Any = None
    oracle: Oracle | None = None
    blackboard: Blackboard = field(default_factory=Blackboard)
    clock: EpisodeClock = field(default_factory=LogicalClock)
    ledger: Ledger = field(default_factory=Ledger)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    decision: Decision | None = None
    reason: str = ""
    deadlines: list[float] = field(default_factory=list)
    tick: int = 0
    events: list[OutcomeEvent] = field(default_factory=list)  # this tick's events
    all_events: list[OutcomeEvent] = field(default_factory=list)
    # this tick's finished leaf calls; None: not kept (only a Runner with observers reports them)
    calls: list[LeafCall] | None = None
    action_scopes: list[tuple[str, int]] = field(default_factory=list)  # active budget decorators
    services: Services = field(default_factory=Services)  # planners, the Watchdog, hooks (read-only)
    memory: RunMemory = field(default_factory=RunMemory)  # what leaves keep for later ticks
    last_fault: str | None = None  # "node: why" of the latest call that faulted since a manipulation
    faults: int = 0  # calls that faulted this run: the runner stops the driver at the end if any
    halt_reason: str = "halted"  # what a leaf preempted now records (a timeout says "timeout")
    explore_running: bool = False  # verifier: the oracle may keep a multi-tick call running
    # verifier (`verify --clock logical`): under an oracle a deadline is certain at the latest
    # tick a logical clock allows (LogicalTimeout.limit), and `world_tick` is the tick in which a
    # leaf last called the world (a call that may take time: a timeout started after it in that
    # tick may start late in it)
    logical_deadlines: bool = False
    world_tick: int = -1
    # verifier replays: under an oracle a timeout still reads the clock (a run on a clock, not
    # the oracle's answers)
    deadlines_by_clock: bool = False
    # runs driver and perceiver calls under a wall-clock limit (bt_grasp.call_limit)
    limiter: CallLimiter = field(default_factory=CallLimiter)
    _trial: int = 0

    # -- the world ---------------------------------------------------------------------------
    def need_driver(self) -> Driver:
        """`driver`, for a leaf that talks to the robot (the verifier's oracle runs none)."""
        if self.driver is None:
            raise RuntimeError("this leaf talks to the robot, but the run context has no driver")
        return self.driver

    def need_perceiver(self) -> Perceiver:
        """`perceiver`, for a leaf that perceives (the verifier's oracle runs none)."""
        if self.perceiver is None:
            raise RuntimeError("this leaf perceives, but the run context has no perceiver")
        return self.perceiver

    def call_limit(self, max_ticks: int) -> float:
        """Wall-clock seconds one call of a node spanning `max_ticks` ticks may take."""
        return call_limit(self.profile, max_ticks)

    # Frames and perceptions pass the seam checks (bt_grasp.seam) here, the one way leaves get them.
    def observe(self) -> Observation:
        """A fresh frame from the driver, checked."""
        return seam.observation(self.need_driver().observe())

    def survey(self, obs: Observation) -> SceneGraph:
        """The perceiver's scene graph of `obs`, checked."""
        return seam.scene(self.need_perceiver().survey(obs))

    def locate(self, obs: Observation, text: str, scene: SceneGraph | None) -> Located | None:
        """The perceiver's grounding of `text` in `obs`, checked (None: not found)."""
        return seam.located(self.need_perceiver().locate(obs, text, scene))

    # -- decisions -------------------------------------------------------------------------
    def decide(self, decision: Decision, reason: str) -> None:
        """Record the episode's terminal decision; the first one wins."""
        if self.decision is None:
            self.decision = decision
            self.reason = reason

    @contextmanager
    def preempting(self, reason: str) -> Iterator[None]:
        """While active, a RUNNING leaf that is stopped records `reason` as why it was halted."""
        previous, self.halt_reason = self.halt_reason, reason
        try:
            yield
        finally:
            self.halt_reason = previous

    # -- time --------------------------------------------------------------------------------
    def remaining_time(self) -> float | None:
        """Seconds until the nearest enclosing timeout, or None when no timeout applies."""
        if not self.deadlines:
            return None
        return min(self.deadlines) - self.clock.now

    # -- events ------------------------------------------------------------------------------
    def new_trial_id(self) -> str:
        self._trial += 1
        return f"{self.run_id}-{self._trial:03d}"

    def emit(self, node: str, primitive: str, exec_status: ExecStatus, label: str | None = None,
             confidence: float | None = None, metadata: dict[str, Any] | None = None) -> OutcomeEvent:
        event = OutcomeEvent(trial_id=self.new_trial_id(), node=node, primitive=primitive,
                             watchdog_label=label, confidence=confidence, exec_status=exec_status,
                             clock=round(self.clock.now, 6), wall_time=time.time(),
                             metadata=metadata or {})
        self.events.append(event)
        self.all_events.append(event)
        return event

    def publish_tick_calls(self) -> list[LeafCall]:
        """This tick's finished leaf calls (when kept); the next tick starts a new batch."""
        calls = self.calls or []
        if self.calls is not None:
            self.calls = []
        return calls

    def publish_tick_events(self) -> list[OutcomeEvent]:
        """This tick's (now final) events; the next tick starts a new batch."""
        events, self.events = self.events, []
        return events
