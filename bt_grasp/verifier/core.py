"""verify_tree: search the tree's runs, then replay every claim on the real Runner.

A bound is reported only with a witness run reaching it, and a counterexample only as an
outcome sequence that makes the real Runner end without a decision: both are replayed here, with
the same oracles a user would use (ScriptedOracle), before they are believed.
"""

from __future__ import annotations

import time
from typing import Any

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import ScriptedOracle, SequenceOracle, scripts_of
from bt_grasp.registry import Registry
from bt_grasp.runner import EpisodeResult, Runner
from bt_grasp.verifier.machine import Machine
from bt_grasp.verifier.report import VerifyResult
from bt_grasp.verifier.running import RUNS_TO_MAX, expand_steps
from bt_grasp.verifier.search import ANY, Step, search, unroll
from bt_grasp.verifier.state import COUNTER
from bt_grasp.verifier.static import keys_read, static_bounds, unrouted_labels
from bt_grasp.verifier.summary_witness import run_costs

FIXED_KEYS = ("actions", "ticks", "perception")
# CPU seconds of search before the compositional summary is consulted (it costs ~0.4 s and its
# witnesses must reach every bound, so it only pays off for trees the search cannot settle soon;
# CPU time, so that a loaded machine does not make verify pay for it more often).
_QUICK = 2.0
# A long loop is replayed for at most this many choices (the run reaches the cap long before).
_MAX_REPLAY = 1_000_000


class _Setup:
    def __init__(self, spec: Any, registry: Registry, goal: dict[str, Any] | None) -> None:
        b = spec.budgets
        self.spec, self.registry = spec, registry
        self.limits = EpisodeLimits(b.actions, b.perception_streak, b.max_ticks)
        goal = goal if goal is not None else dict(getattr(spec, "goal", {}) or {})
        self.initial = {f"goal.{k}": v for k, v in goal.items()} or {"goal.object": "target object"}

    def replay(self, oracle: Any) -> EpisodeResult:
        ctx = RunContext(registry=self.registry, limits=self.limits, oracle=oracle,
                         blackboard=Blackboard(dict(self.initial)), explore_running=True)
        return Runner(self.spec, ctx).run()


def _as_steps(steps: list[Step]) -> list[dict[str, str]]:
    return [{"node": n, "outcome": o} for n, o in steps]


def verify_tree(spec: Any, registry: Registry | None = None, max_runs: int = 200_000,
                goal: dict[str, Any] | None = None, time_limit: float | None = None) -> VerifyResult:
    """Explore every run of `spec` (a TreeSpec) against the choice oracle.

    `max_runs` caps the partial runs executed and `time_limit` the seconds spent; reaching either
    gives an honest "incomplete" result (proven False, no counterexample), never a guess.
    """
    registry = registry or getattr(spec, "registry", None) or default_registry()
    setup = _Setup(spec, registry, goal)
    machine = Machine(spec, registry, setup.limits, setup.initial, keys_read(spec, registry))
    memo: dict = {}
    endings: dict[str, int] = {}
    start = time.perf_counter()
    # A quick search first: small trees are settled completely (every ending listed). Only if it
    # does not finish are the compositional bounds tried, then the search goes on where it was.
    found = search(machine, max_runs, time_limit, memo, endings, cpu_limit=_QUICK)
    if found.incomplete and machine.advances < max_runs:
        fast = _from_summary(spec, registry, setup)
        if fast is not None:
            fast.runs_explored += machine.advances
            return fast
        left = None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - start))
        found = search(machine, max_runs, left, memo, endings)
    result = VerifyResult(
        proven=False, bounds={}, runs_explored=found.advances, counterexample=None,
        unrouted=unrouted_labels(spec, registry), static_bounds=static_bounds(spec, registry),
        endings=dict(found.endings), states=found.states, complete=not found.incomplete)
    result.node_paths = {name: _path_to(node) for name, node in machine.state.by_name.items()}
    if found.incomplete:
        result.problem = (f"exploration limit ({max_runs} partial runs"
                          f"{'' if time_limit is None else f' or {time_limit} s'}) reached before "
                          "every run was checked: incomplete, not proven")
        return result
    if found.problem is not None:
        found.prefix = expand_steps(found.prefix, machine.max_ticks, machine.unobserved)
        found.cycle = expand_steps(found.cycle, machine.max_ticks, machine.unobserved)
        _counterexample(setup, found, result)
        return result
    bounds = {k: v for k, (v, _) in found.summary.items() if k != ANY and not k.startswith(COUNTER)}
    for key in FIXED_KEYS:
        bounds.setdefault(key, 0)
    result.bounds = dict(sorted(bounds.items()))
    any_run = found.summary[ANY][1]
    result.proven = True
    replayed: dict[tuple[Step, ...], Any] = {}  # a run several bounds share is replayed once

    def reaches(key: str, choices: list[Step]) -> int:
        sig = tuple(choices)
        if sig not in replayed:
            replayed[sig] = run_costs(setup.replay(ScriptedOracle(scripts_of(choices))))
        return replayed[sig].get(key, 0)

    for key in result.bounds:
        steps = unroll(found.summary.get(key, (0, any_run))[1])
        # Every bound but ticks is reached as well with the unobserved calls ending at once
        # (verifier/running.py: a call's twin): a short witness, unless its replay says otherwise.
        short = [s for s in steps if s[1] != RUNS_TO_MAX]
        full = expand_steps(steps, machine.max_ticks, machine.unobserved)
        choices = short if key != "ticks" and reaches(key, short) == result.bounds[key] else full
        result.witnesses[key] = _as_steps(choices)
        got = reaches(key, choices)
        if got != result.bounds[key]:
            result.proven = False
            result.problem = (f"internal error: the witness for {key} replays to {got}, not the "
                              f"bound {result.bounds[key]}; the state model missed something")
    return result


def _from_summary(spec: Any, registry: Registry, setup: _Setup) -> VerifyResult | None:
    """The compositional summary's result, if the structure proves that every run decides
    within max_ticks and every bound's witness, replayed on the Runner, reaches it; else None."""
    # imported here: its numpy tables are needed only for trees the quick search cannot settle
    from bt_grasp.verifier.bounds import summarise

    try:
        summary = summarise(spec, registry)
    except Exception:  # a node type the summary rules do not know: the search handles it
        return None
    if summary.decides is not True or any(v is None for v in summary.bounds.values()):
        return None
    bounds = {k: int(v) for k, v in summary.bounds.items() if v is not None}
    witnesses = {}
    endings: dict[str, int] = {}
    for key, bound in bounds.items():
        steps = summary.witnesses.get(key)
        if steps is None:
            return None
        res = setup.replay(ScriptedOracle(scripts_of(steps)))
        if run_costs(res).get(key, 0) != bound or res.reason.startswith(("no decision", "tick cap")):
            return None
        witnesses[key] = _as_steps(list(steps))
        ending = f"{res.decision.value}: {res.reason}"
        endings[ending] = endings.get(ending, 0) + 1
    result = VerifyResult(
        proven=True, bounds=dict(sorted(bounds.items())), runs_explored=len(witnesses),
        counterexample=None, unrouted=unrouted_labels(spec, registry),
        static_bounds=static_bounds(spec, registry), witnesses=witnesses, states=0,
        endings=endings)
    result.method = "summary"
    return result


def _counterexample(setup: _Setup, found: Any, result: VerifyResult) -> None:
    """Replay the search's counterexample on the Runner; report the choices it really made."""
    result.problem = found.problem
    result.path = found.path
    if found.cycle and found.cycle_ticks == 0:
        result.problem = ("loop: the tree repeats a state inside one tick: a run never finishes "
                          "its tick")
        result.counterexample = _as_steps(found.prefix + found.cycle)
        result.loop = (len(found.prefix), len(found.cycle))
        return
    oracle: Any = SequenceOracle(found.prefix, found.cycle) if found.cycle else \
        ScriptedOracle(scripts_of(found.prefix))
    try:
        res = setup.replay(oracle)
    except ValueError as exc:  # the Runner asked for another leaf than the search recorded
        result.counterexample = _as_steps(found.prefix + found.cycle)
        result.problem = (f"internal error: the counterexample ({found.problem}) does not replay "
                          f"({exc}); the state model missed something")
        return
    choices = list(oracle.choices)
    result.counterexample = _as_steps(choices[:_MAX_REPLAY])
    if found.cycle:
        result.loop = (len(found.prefix), len(found.cycle))
    if not res.reason.startswith(("no decision", "tick cap")):
        result.problem = (f"internal error: the counterexample ({found.problem}) replays to "
                          f"'{res.reason}'; the state model missed something")


def _path_to(node: Any) -> list[str]:
    out = []
    while node is not None:
        out.append(node.name)
        node = node.parent
    return out[::-1]
