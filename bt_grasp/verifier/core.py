"""verify_tree: every run of a tree ends in a decision, with worst-case bounds, each proven.

The symbolic search explores the tree's model (model.py, ticker.py) with no tick passing idle
(symbolic/machine.py): it settles every ending, counterexample, action, call and perception bound;
the tick bound then puts the idle ticks back, symbolically (symbolic/tick_bound.py). A search still running
after QUICK_WORK (at once for a tree with a parallel) asks the compositional summary once
(summary/proof.py), which settles the tree when its bounds are proven and reached by replayed
witnesses. A tree with a node class
the model does not reproduce is explored by the reference search instead (reference.py). Either
way every bound's witness and every counterexample is replayed on the real Runner (replay.py).
"""

from __future__ import annotations

import gc
import math
from typing import Any

from bt_grasp.default_registry import default_registry
from bt_grasp.nodes.base import ENDS_NOW
from bt_grasp.oracles import ScriptedOracle, scripts_of
from bt_grasp.registry import Registry
from bt_grasp.verifier.clocks import on_logical_clock
from bt_grasp.verifier.compiled.reference import verify_reference
from bt_grasp.verifier.compiled.search import ANY, unroll
from bt_grasp.verifier.replay import FIXED_KEYS, Setup, Witnesses, as_steps, counterexample
from bt_grasp.verifier.report import VerifyResult
from bt_grasp.verifier.static import keys_read
from bt_grasp.verifier.summary.proof import QUICK_WORK, UPPER_WORK, from_summary, summary_first, undecided
from bt_grasp.verifier.summary.witness import run_costs
from bt_grasp.verifier.symbolic.explore import explore
from bt_grasp.verifier.symbolic.machine import ModelMachine
from bt_grasp.verifier.symbolic.model import NotModelled
from bt_grasp.verifier.symbolic.properties import property_results, unchecked
from bt_grasp.verifier.symbolic.tick_bound import TickBound, Unidle, tick_bound

__all__ = ["REPLAY_TICKS", "run_costs", "verify_tree"]

# The tick bound's witness is replayed on the Runner when at most this long: a tick of the
# compiled tree costs tens of microseconds, and the longest run of a shipped tree is 20 000 ticks
# (`verify --replay-all` and the test suite replay every witness whatever its length).
REPLAY_TICKS = 2000


def verify_tree(spec: Any, registry: Registry | None = None, max_runs: int = 200_000,
                goal: dict[str, Any] | None = None, time_limit: float | None = None,
                engine: str = "auto", replay_all: bool = False, upper: bool = True,
                clock: str = "wall") -> VerifyResult:
    """Explore every run of `spec` (a TreeSpec) against the choice oracle.

    `max_runs` caps the partial runs executed and `time_limit` the seconds spent; reaching either
    gives an honest "incomplete" result (proven False, no counterexample), never a guess.
    `engine`: "symbolic", "reference" (the compiled tree itself), or "auto": symbolic where the
    tree's node classes have a model. `replay_all`: replay the tick bound's witness on the
    Runner however long it is (else only up to REPLAY_TICKS ticks). `upper`: when the summary
    proves that every run decides but the search has not found every bound within UPPER_WORK
    more work (a count of the search's steps, never a clock: the answer is the same on any
    machine however busy), answer with the summary's upper bounds (`unreached`); False: search on.
    `clock`: what a timeout's deadline checks read (verifier/clocks.py): "wall", every timing a
    wall clock allows; "logical" (`bt-grasp verify`'s default), the simulated run's clock, with
    the wall clock's bounds beside where they differ.
    """
    # The search holds every state it met until it ends and makes little cyclic garbage, so
    # the cycle collector's full passes only re-scan live states (a quarter of the CPU on the
    # shipped trees, with peak memory the same): paused for the call, as it was before.
    collecting = gc.isenabled()
    gc.disable()
    try:
        result = _verify_tree(spec, registry, max_runs, goal, time_limit, engine, replay_all, upper)
        if clock == "logical" and result.timeouts:
            setup = Setup(spec, registry or getattr(spec, "registry", None) or default_registry(),
                          goal, clock="logical")
            result = _completed(on_logical_clock(setup, result, max_runs, time_limit), spec, setup)
        return result
    finally:
        if collecting:
            gc.enable()


def _verify_tree(spec: Any, registry: Registry | None, max_runs: int, goal: dict[str, Any] | None,
                 time_limit: float | None, engine: str, replay_all: bool, upper: bool) -> VerifyResult:
    registry = registry or getattr(spec, "registry", None) or default_registry()
    setup = Setup(spec, registry, goal)
    if getattr(spec, "properties", None):
        upper = False  # properties are checked on the exact search's run graph
    why = "asked for" if engine == "reference" else ""
    result = None
    if engine != "reference":
        try:
            result = _verify_model(setup, max_runs, time_limit, replay_all, upper)
        except (NotModelled, Unidle) as exc:
            if engine == "symbolic":
                raise
            why = str(exc)
    if result is None:
        result = verify_reference(setup, max_runs, time_limit)
        result.method = "reference" if result.method == "search" else result.method
        result.why_reference = why
    if not result.complete and result.problem is None:
        result.problem = (f"exploration limit ({max_runs} partial runs"
                          f"{'' if time_limit is None else f' or {time_limit} s'}) reached before "
                          "every run was checked: incomplete, not proven")
    return _completed(result, spec, setup)


def _completed(result: VerifyResult, spec: Any, setup: Setup) -> VerifyResult:
    """The fields every result carries, whichever search answered."""
    result.tick_cap = {"value": setup.cap.value, "source": setup.cap.source}
    result.tick_cap_text = setup.cap.describe()
    result.timeouts = sum(node.type == "timeout" for node in spec.root.walk())
    result.wall_clock = result.timeouts > 0 and result.clock == "wall"
    result.node_paths = _paths(spec)
    if getattr(spec, "properties", None) and not result.properties:
        result.properties = unchecked(spec.properties, _why_unchecked(result))
    return result


def _why_unchecked(result: VerifyResult) -> str:
    if result.method == "reference":
        return "the reference search keeps no run graph: only the symbolic search checks properties"
    return "not every run was explored (" + (result.problem or "the search did not settle") + ")"


def _verify_model(setup: Setup, max_runs: int, time_limit: float | None,
                  replay_all: bool, upper: bool) -> VerifyResult:
    spec, registry = setup.spec, setup.registry
    keys = keys_read(spec, registry)
    machines = [ModelMachine(spec, registry, setup.limits, setup.initial, keys, open_all=o)
                for o in (False, True)]
    machine = machines[0]
    endings: dict[str, int] = {}
    proofs: list[VerifyResult] = []

    def slow() -> float | None:
        """Asked when the search is slow: None stops it (the summary's proof answers)."""
        if proofs:  # the upper bounds have waited their turn
            return None if upper else math.inf
        proof = from_summary(setup)
        if proof is None:
            return math.inf
        proofs.append(proof)
        # exact bounds answer now; upper bounds or a run that does not decide (not the longest
        # one) give the search a little more work to answer exactly first
        return None if proof.proven and not proof.unreached else UPPER_WORK

    slow_after = 0 if summary_first(spec) else QUICK_WORK
    found = explore(machines, max_runs, time_limit, endings, slow_after, slow, _shares(machine),
                    HEAD_START)
    if proofs and found.incomplete and (upper or not proofs[0].unreached):
        answer: VerifyResult | None = proofs[0]
        if proofs[0].method == "witness":  # a run past the cap, if it replays so
            answer = undecided(setup, [(s["node"], s["outcome"]) for s in proofs[0].counterexample or ()])
        if answer is not None:
            answer.runs_explored += found.advances
            return answer
    result = setup.result(proven=False, runs_explored=found.advances, endings=dict(found.endings),
                          states=found.states, complete=not found.incomplete, method="symbolic")
    if found.incomplete:
        return result
    if found.problem is not None:
        auto = {f"{machine.m.name[i]}#running": ENDS_NOW for i in (*machine.longest, *machine.checks)}
        counterexample(setup, found, result, auto)
        return result
    assert found.graph is not None
    ticks = tick_bound(found.graph, found.root)
    result.longest = ticks.ticks
    if ticks.ticks > setup.limits.max_ticks:
        _cap_reached(setup, machine, ticks, result)
        return result
    bounds = {k: v for k, (v, _) in found.summary.items() if k != ANY}
    bounds["ticks"] = ticks.ticks
    idled = _idle_costs(found.graph, found.root)  # calls of checks repeated in idle ticks
    bounds.update({k: b.ticks for k, b in idled.items()})
    for key in FIXED_KEYS:
        bounds.setdefault(key, 0)
    result.bounds = dict(sorted(bounds.items()))
    result.proven = True
    any_run = found.summary[ANY][1]
    classes = outcome_classes(machine)
    result.properties = property_results(setup, found.graph, found.root, classes, found.over)
    # for --rates (probability/chances.py)
    result.graph, result.graph_root, result.outcome_classes = found.graph, found.root, classes
    witnesses = Witnesses(setup)
    for key in result.bounds:
        if key == "ticks":
            if replay_all or ticks.ticks <= REPLAY_TICKS:
                witnesses.check(result, key, ticks.steps)
            else:  # kept, and replayed by `verify --replay-all` and the test suite
                result.witnesses[key] = as_steps(ticks.steps)
                result.unreplayed.append(key)
            continue
        if key in idled:
            witnesses.check(result, key, idled[key].steps)
            continue
        witnesses.check(result, key, unroll(found.summary.get(key, (0, any_run))[1]))
    return result


def _idle_costs(graph: Any, root: Any) -> dict[str, TickBound]:
    """Per cost some idle tick adds (a check repeated beside a task, symbolic/machine.py), the
    most any run spends, idle ticks included, with a run that spends it (tick_bound.py)."""
    keys = sorted({k for _, _, costs in graph.idle.values() for k in costs})
    return {key: tick_bound(graph, root, key) for key in keys}


# Chunks of advances the variant likely to finish first takes for each of the other's, after it
# ran alone for HEAD_START advances (the shipped trees settle within them): a right guess costs
# the likelier variant alone, or 1.25 times it beyond the head start; a wrong one HEAD_START
# plus 5 times the other variant.
FAVOURED_SHARE = 4
HEAD_START = 4096


def _shares(machine: ModelMachine) -> list[int]:
    """Turns of the two first-pass variants (counters kept, every counter left open), favouring
    the one likely to need fewer advances. Leaving the counters open merges runs that differ
    only in the actions spent, the perception streak or the starts of a retry (a search loop
    of ten rounds inside a retry of four attempts is met once, not once per count), which pays
    when a few action leaves are retried within the budget; keeping the action count lets the
    budget cut off what lies beyond it, which pays when the tree has more action
    leaves than the budget admits calls (a long chain of grasps: the open count would explore
    every block, also those no run with the budget reaches). In between (retried blocks of
    grasps nested several deep) either may win by far: equal turns. Either variant is exact,
    so the guess changes the time only, never a result."""
    m = machine.m
    leaves, budget = sum(m.action), machine.limits.actions
    if 2 * leaves <= budget:
        return [1, FAVOURED_SHARE]
    return [FAVOURED_SHARE, 1] if leaves > budget else [1, 1]


def outcome_classes(machine: ModelMachine) -> dict[str, dict[str, tuple[str, ...]]]:
    """A leaf whose outcome no node reads is answered with one outcome of each status in the
    search: per such leaf, each answer and the outcomes (of the same status) it stands for."""
    m, out = machine.m, {}
    for name, reps in machine.outcomes.items():
        i = m.index[name]
        out[name] = {r: tuple(o for o in m.alphabet[i] if (o in m.success[i]) == (r in m.success[i]))
                     for r in reps}
    return out


def _cap_reached(setup: Setup, machine: ModelMachine, ticks: TickBound, result: VerifyResult) -> None:
    """The longest run meets the tick cap: a counterexample (replayed), saying which call was
    running then, how long one may run, and the smallest cap that proves the tree."""
    cap = setup.limits.max_ticks
    oracle = ScriptedOracle(scripts_of(ticks.steps))
    res = setup.replay(oracle)
    result.counterexample = as_steps(oracle.choices)  # the run as far as the cap let it go
    if not res.reason.startswith("tick cap"):
        result.problem = (f"internal error: the run of {ticks.ticks} ticks replays to "
                          f"'{res.reason}' in {res.ticks} ticks; the state model missed something")
        return
    from bt_grasp.verifier.symbolic.ticker import ticker_for

    model = ticker_for(setup.spec, setup.registry, setup.limits, setup.initial, set())
    replay = iter(ticks.steps)
    ends = {f"{machine.m.name[i]}#running" for i in machine.checks}  # the search's own answers
    model.run(lambda node, alphabet: ENDS_NOW if node in ends else next(replay)[1], halt=False)
    running = model.running_calls()
    m = model.m
    where = ""
    if running:
        leaf = m.nodes[running[0]]
        where = (f" while '{leaf.name}' runs (one {leaf.node_type.name} call may span "
                 f"{leaf.max_ticks} ticks)")
    fix = ("give budgets.max_ticks at least that, or leave it out: the cap is then the tree's own "
           "bound" if setup.cap.source == "given" else "give budgets.max_ticks at least that")
    result.problem = (f"tick cap ({cap}) reached{where}: the longest run takes {ticks.ticks} "
                      f"ticks; {fix}")


def _paths(spec: Any) -> dict[str, list[str]]:
    """Node id -> the ids from the root down to it (for printing steps as paths)."""
    out: dict[str, list[str]] = {}

    def walk(node: Any, above: list[str]) -> None:
        path = above + [node.id]
        out[node.id] = path
        for child in node.sub_nodes():
            walk(child, path)

    walk(spec.root, [])
    return out
