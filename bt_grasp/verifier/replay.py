"""Every claim of the verifier, replayed on the real Runner before it is believed.

A bound is reported only with a witness run reaching it, and a counterexample only as an outcome
sequence that makes the real Runner end without a decision: both are replayed here with the same
oracles a user would use (ScriptedOracle, SequenceOracle). Shared by both searches (core.py).
"""

from __future__ import annotations

from typing import Any

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.oracles import ScriptedOracle, SequenceOracle, scripts_of
from bt_grasp.registry import Registry
from bt_grasp.runner import EpisodeResult, Runner
from bt_grasp.tick_budget import TickCap, episode_limits, tick_cap
from bt_grasp.verifier.compiled.search import Step
from bt_grasp.verifier.report import VerifyResult
from bt_grasp.verifier.static import static_bounds, unrouted_labels
from bt_grasp.verifier.summary.witness import run_costs

FIXED_KEYS = ("actions", "ticks", "perception")
_MAX_REPLAY = 1_000_000  # a long loop is replayed for at most this many choices


class Setup:
    """One tree to verify: its registry, the budgets in force (the tick cap with where it came
    from), the goal on the blackboard at the start, and the clock its timeouts read: "wall" (the
    oracle answers each deadline check a wall clock leaves open) or "logical" (the Runner's
    logical clock decides, as in a simulated run)."""

    def __init__(self, spec: Any, registry: Registry, goal: dict[str, Any] | None,
                 clock: str = "wall") -> None:
        self.spec, self.registry, self.clock = spec, registry, clock
        self.cap: TickCap = tick_cap(spec, registry)
        self.limits = episode_limits(spec, registry)
        goal = goal if goal is not None else dict(getattr(spec, "goal", {}) or {})
        self.initial = {f"goal.{k}": v for k, v in goal.items()} or {"goal.object": "target object"}

    def replay(self, oracle: Any) -> EpisodeResult:
        return Runner(self.spec, self.context(oracle)).run()

    def context(self, oracle: Any) -> RunContext:
        """A run's context under `oracle`, its timeouts reading this setup's clock."""
        return RunContext(registry=self.registry, limits=self.limits, oracle=oracle,
                          blackboard=Blackboard(dict(self.initial)), explore_running=True,
                          logical_deadlines=self.clock == "logical")

    def result(self, *, proven: bool, runs_explored: int, **fields: Any) -> VerifyResult:
        """This tree's VerifyResult, whichever engine answers: the structure's findings (the
        labels no switch routes, the static call bounds) are the same for all."""
        fields.setdefault("bounds", {})
        return VerifyResult(proven=proven, runs_explored=runs_explored, counterexample=None,
                            unrouted=unrouted_labels(self.spec, self.registry),
                            static_bounds=static_bounds(self.spec, self.registry), **fields)


def as_steps(steps: list[Step]) -> list[dict[str, str]]:
    return [{"node": n, "outcome": o} for n, o in steps]


class Witnesses:
    """Replays runs (once each, however many bounds share one) and keeps their costs."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.seen: dict[tuple[Step, ...], Any] = {}

    def costs(self, choices: list[Step]) -> Any:
        sig = tuple(choices)
        if sig not in self.seen:
            self.seen[sig] = run_costs(self.setup.replay(ScriptedOracle(scripts_of(choices))))
        return self.seen[sig]

    def check(self, result: VerifyResult, key: str, choices: list[Step]) -> None:
        """Keep `choices` as the witness of `key`; a replay short of the bound is an internal
        error, never hidden."""
        result.witnesses[key] = as_steps(choices)
        got = self.costs(choices).get(key, 0)
        if got != result.bounds[key]:
            result.proven = False
            result.problem = (f"internal error: the witness for {key} replays to {got}, not the "
                              f"bound {result.bounds[key]}; the state model missed something")


class _Filled:
    """SequenceOracle's answers in the recorded order (`steps` once, then `cycle` forever), and,
    in between, the questions the search answered itself (`auto`: question id -> answer: an
    unobserved call ending at its first poll, its longest call standing for every length)."""

    def __init__(self, steps: list[Step], cycle: list[Step], auto: dict[str, str]) -> None:
        self.recorded = SequenceOracle(steps, cycle)
        self.auto = auto
        self.choices: list[Step] = []

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        answer = self.auto.get(node_id)
        if answer is None:
            answer = self.recorded.choose(node_id, alphabet)
        self.choices.append((node_id, answer))
        return answer


def periodic_tail(choices: list[Step]) -> tuple[int, int] | None:
    """(start, period) of the shortest prefix + cycle that explains `choices`, which ends in a
    loop repeated to the tick cap. The search's own steps are coarser than the Runner's choices
    (one step may stand for several questions), so the loop is read off the replayed choices."""
    n = len(choices)
    best: tuple[int, int] | None = None
    for period in range(1, n // 2 + 1):
        if best is not None and period >= sum(best):
            break
        start = n - period
        while start > 0 and choices[start - 1] == choices[start - 1 + period]:
            start -= 1
        if n - start >= 2 * period and (best is None or start + period < sum(best)):
            best = (start, period)
    return best


def counterexample(setup: Setup, found: Any, result: VerifyResult,
                   auto: dict[str, str] | None = None) -> EpisodeResult | None:
    """Replay the search's counterexample on the Runner; report the choices it really made
    (`auto`: questions the search answered itself, see _Filled)."""
    result.problem = found.problem
    result.path = found.path
    if found.cycle and found.cycle_ticks == 0:
        result.problem = ("loop: the tree repeats a state inside one tick: a run never finishes "
                          "its tick")
        result.counterexample = as_steps(found.prefix + found.cycle)
        result.loop = (len(found.prefix), len(found.cycle))
        return None
    oracle: Any = _Filled(found.prefix, found.cycle, auto or {}) if found.cycle else \
        ScriptedOracle(scripts_of(found.prefix))
    res: EpisodeResult | None = None
    try:
        if found.cycle:
            res, choices = _replay_loop(setup, oracle)
        else:
            res = setup.replay(oracle)
            choices = list(oracle.choices)
    except ValueError as exc:  # the Runner asked for another leaf than the search recorded
        result.counterexample = as_steps(found.prefix + found.cycle)
        result.problem = (f"internal error: the counterexample ({found.problem}) does not replay "
                          f"({exc}); the state model missed something")
        return None
    result.counterexample = as_steps(choices[:_MAX_REPLAY])
    if found.cycle:
        result.loop = periodic_tail(choices[:_MAX_REPLAY]) or (len(found.prefix), len(found.cycle))
    if res is not None and not res.reason.startswith(("no decision", "tick cap")):
        result.problem = (f"internal error: the counterexample ({found.problem}) replays to "
                          f"'{res.reason}'; the state model missed something")
    return res


class _Repeats(Exception):
    def __init__(self, first: tuple[int, int]) -> None:
        super().__init__("the run repeats")
        self.first = first  # (tick, choices made by its end) where the state was first met


class _Watched(Runner):
    """The Runner, noting after each tick in the recorded cycle the run's merge key (state.py:
    everything that can change its future but the tick count) and where in the cycle the
    oracle is. Met twice, the run goes on from there exactly as it went on from the first time,
    period after period: it can only end at the tick cap."""

    def __init__(self, setup: Setup, oracle: _Filled) -> None:
        from bt_grasp.verifier.compiled.state import RunState
        from bt_grasp.verifier.static import keys_read

        ctx = setup.context(oracle)
        super().__init__(setup.spec, ctx)
        self.oracle = oracle
        self.state = RunState(self.root, ctx, keys_read(setup.spec, setup.registry))
        self.seen: dict[Any, tuple[int, int]] = {}
        self.marks: list[int] = []  # the choices made by the end of each tick

    def _tick(self) -> list[tuple[str, str]]:
        visited = super()._tick()
        made = len(self.oracle.choices)
        self.marks.append(made)
        recorded = self.oracle.recorded
        pos, before = len(recorded.choices), len(recorded.steps)
        if pos >= before:
            key = (self.state.key(), (pos - before) % len(recorded.cycle))
            first = self.seen.get(key)
            if first is not None:
                raise _Repeats(first)
            self.seen[key] = (self.ctx.tick, made)
        return visited


def _replay_loop(setup: Setup, oracle: _Filled) -> tuple[EpisodeResult | None, list[Step]]:
    """A loop's replay on the Runner, and the choices of the whole run up to the tick cap (at
    most _MAX_REPLAY). Stopped as soon as the state repeats (see _Watched): the rest of the run
    is the period between the two repeated ticks again and again, up to the cap, so it is
    written out rather than ticked (a loop of 100 000 ticks took seconds to tick)."""
    runner = _Watched(setup, oracle)
    try:
        return runner.run(), list(oracle.choices)
    except _Repeats as rep:
        t1, n1 = rep.first
        t2 = runner.ctx.tick
        choices = list(oracle.choices)
        period = choices[n1:]
        full, rem = divmod(setup.limits.max_ticks - t2, t2 - t1)
        if period:
            choices += period * min(full, _MAX_REPLAY // len(period) + 1)
        choices += period[:runner.marks[t1 + rem - 1] - n1]
        return None, choices[:_MAX_REPLAY]
