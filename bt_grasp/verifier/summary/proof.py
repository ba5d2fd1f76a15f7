"""A proof from the compositional summary, for trees whose search would take long.

The summary (summary/bounds.py) bounds every run of a tree from its structure, in polynomial time, and is
sound on its own (tools/perf/verify_soundness.py checks it against random runs of the Runner). Its
bounds are upper bounds, not always reached; they are reported as the worst case only when each
has a witness run that, replayed on the real Runner, reaches it exactly, and only when the
structure proves that every run decides within the tick cap. Otherwise the search goes on; if it
does not settle the tree soon either, a structure that proves every run decides is still a proof
of that, and its bounds are reported as upper bounds, those no witness reached marked so
(`VerifyResult.unreached`).

The other way round, a witness run that does not decide within the tick cap is a counterexample
once it replays so on the Runner (`from_summary` hands it on unreplayed, method "witness";
`undecided` replays it): a tree whose search would take long is then settled by that run, though
not by its longest one (which only the search finds).
"""

from __future__ import annotations

from typing import Any

from bt_grasp.oracles import ScriptedOracle, scripts_of
from bt_grasp.verifier.replay import Setup, as_steps
from bt_grasp.verifier.report import VerifyResult
from bt_grasp.verifier.summary.witness import run_costs

__all__ = ["QUICK_WORK", "UPPER_WORK", "from_summary", "summary_first", "undecided"]

# Work of the search (ModelMachine.work: advances plus the choices of their ticks, 5-20 CPU us
# each) before the summary is consulted, one to two CPU seconds: the summary costs 0.1-0.4 s (its
# witness search), so it only pays off for trees the search cannot settle soon. Counted, not
# timed: which of the two answers, and so whether bounds are exact or upper bounds, must not
# depend on how fast or busy the machine is.
QUICK_WORK = 100_000
# Work the search is given, once the summary has proven that every run decides but not reached
# every bound, to find the exact bounds before the summary's upper bounds answer (about 0.3 s)
UPPER_WORK = 25_000
_PARALLELS = ("parallel", "btcpp_parallel")


def summary_first(spec: Any) -> bool:
    """Whether to ask the summary before searching: the branches of a parallel advance side by
    side, so the search meets every combination of their states (a product, exponential in the
    branches), while the summary composes them one by one."""
    return any(node.type in _PARALLELS for node in spec.root.walk())


def from_summary(setup: Setup) -> VerifyResult | None:
    """The summary's result, if the structure proves that every run decides within the tick cap,
    else None. Bounds whose witness, replayed on the Runner, does not reach them are listed in
    `unreached` (upper bounds, no witness kept): a proof with exact bounds has none."""
    # imported here: its numpy tables are needed only for trees the quick search cannot settle
    from bt_grasp.verifier.summary.bounds import summarise

    spec, registry = setup.spec, setup.registry
    try:
        summary = summarise(spec, registry)
    except Exception:  # a node type the summary rules do not know: the search handles it
        return None
    if summary.decides is False and summary.witnesses.get("decides"):
        # replayed only if it is the answer (undecided): a run up to a large cap costs seconds
        found = setup.result(proven=False, runs_explored=0, states=0, endings={}, method="witness")
        found.counterexample = as_steps(list(summary.witnesses["decides"]))
        return found
    if summary.decides is not True or any(v is None for v in summary.bounds.values()):
        return None
    bounds = {k: int(v) for k, v in summary.bounds.items() if v is not None}
    witnesses = {}
    unreached = []
    endings: dict[str, int] = {}
    for key, bound in bounds.items():
        steps = summary.witnesses.get(key)
        if steps is None:
            unreached.append(key)
            continue
        res = setup.replay(ScriptedOracle(scripts_of(steps)))
        if res.reason.startswith(("no decision", "tick cap")):
            return None  # the summary said every run decides: never believed against a run
        if run_costs(res).get(key, 0) != bound:
            unreached.append(key)
            continue
        witnesses[key] = as_steps(list(steps))
        ending = f"{res.decision.value}: {res.reason}"
        endings[ending] = endings.get(ending, 0) + 1
    return setup.result(proven=True, bounds=dict(sorted(bounds.items())), runs_explored=len(witnesses),
                        witnesses=witnesses, states=0, endings=endings, method="summary",
                        unreached=unreached)


def undecided(setup: Setup, steps: list[tuple[str, str]] | None) -> VerifyResult | None:
    """A counterexample from a witness run that ended on the tick cap or without a decision, if
    it replays so on the Runner with this setup's clock (else None: the search answers)."""
    if not steps:
        return None
    oracle = ScriptedOracle(scripts_of(steps))
    res = setup.replay(oracle)
    if not res.reason.startswith(("no decision", "tick cap")):
        return None
    result = setup.result(proven=False, runs_explored=0, states=0, endings={}, method="witness",
                          problem=(f"{res.reason} reached by a run of the structure's witness "
                                   f"search ({res.ticks} ticks, replayed on the Runner); the longest "
                                   "run was not searched for (`verify --exact` searches on)"))
    result.counterexample = as_steps(oracle.choices)
    return result
