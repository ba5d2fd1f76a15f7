"""The reference search: the compiled tree itself explored tick by tick (machine.py, search.py).

It runs the very behaviours the Runner ticks, so it needs no model of them: the verifier uses it
for trees with a node class the symbolic model does not reproduce (model.NotModelled), and the
tests use it to check the symbolic search on trees small enough for both. Where something
observes how long a call runs it tries every length (running.py); elsewhere only the longest.
"""

from __future__ import annotations

import time
from typing import Any

from bt_grasp.verifier.compiled.machine import Machine
from bt_grasp.verifier.compiled.running import RUNS_TO_MAX, expand_steps
from bt_grasp.verifier.compiled.search import ANY, search, unroll
from bt_grasp.verifier.compiled.state import COUNTER
from bt_grasp.verifier.replay import FIXED_KEYS, Setup, Witnesses, counterexample
from bt_grasp.verifier.report import VerifyResult
from bt_grasp.verifier.static import keys_read
from bt_grasp.verifier.summary.proof import from_summary

# Work of the reference search (Machine.work, 60-150 CPU us each) before the summary is consulted,
# about two CPU seconds (summary_proof.QUICK_WORK): counted, not timed, so that whether the
# summary answers never depends on the machine's speed or load.
QUICK_WORK = 20_000


def verify_reference(setup: Setup, max_runs: int, time_limit: float | None) -> VerifyResult:
    """verify_tree by the reference search (see the module docstring)."""
    spec, registry = setup.spec, setup.registry
    machine = Machine(spec, registry, setup.limits, setup.initial, keys_read(spec, registry),
                      logical_deadlines=setup.clock == "logical")
    memo: dict[Any, Any] = {}
    endings: dict[str, int] = {}
    start = time.perf_counter()
    # A quick search first: small trees are settled completely (every ending listed). Only if it
    # does not finish are the compositional bounds tried, then the search goes on where it was.
    found = search(machine, max_runs, time_limit, memo, endings, work_limit=QUICK_WORK)
    if found.incomplete and machine.advances < max_runs:
        # (the summary's witnesses answer deadline checks as a wall clock may: not on a logical one)
        fast = from_summary(setup) if setup.clock == "wall" else None
        if fast is not None and not fast.unreached:
            fast.runs_explored += machine.advances
            return fast
        left = None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - start))
        found = search(machine, max_runs, left, memo, endings)
    result = setup.result(proven=False, runs_explored=found.advances, endings=dict(found.endings),
                          states=found.states, complete=not found.incomplete)
    if found.incomplete:
        return result
    if found.problem is not None:
        found.prefix = expand_steps(found.prefix, machine.max_ticks, machine.unobserved)
        found.cycle = expand_steps(found.cycle, machine.max_ticks, machine.unobserved)
        counterexample(setup, found, result)
        return result
    bounds = {k: v for k, (v, _) in found.summary.items() if k != ANY and not k.startswith(COUNTER)}
    for key in FIXED_KEYS:
        bounds.setdefault(key, 0)
    result.bounds = dict(sorted(bounds.items()))
    any_run = found.summary[ANY][1]
    result.proven = True
    witnesses = Witnesses(setup)
    for key in result.bounds:
        steps = unroll(found.summary.get(key, (0, any_run))[1])
        # Every bound but ticks is reached as well with the unobserved calls ending at once
        # (verifier/compiled/running.py: a call's twin): a short witness, unless its replay says otherwise.
        short = [s for s in steps if s[1] != RUNS_TO_MAX]
        full = expand_steps(steps, machine.max_ticks, machine.unobserved)
        reached = key != "ticks" and witnesses.costs(short).get(key, 0) == result.bounds[key]
        witnesses.check(result, key, short if reached else full)
    return result
