"""Random trees from the grammar, random leaf outcomes, the real Runner: termination and the verifier.

Specification pinned here (docs/semantics.md, "Episodes" and "The verifier"):
- every run of a tree `verify` proves ends in FINALIZE / WAIT_CLARIFY inside the reported bounds,
  with every call of a primitive running a random number of ticks up to its max_ticks, and
  reactive guards and deadlines halting running calls at random ticks;
- no episode budget is ever exceeded (actions, retry starts, perception streak, scoped budgets);
- an unproven tree's counterexample, replayed by a ScriptedOracle, really ends without a decision;
- the bounds are sound (no run exceeds them) and tight (the worst run reaches each of them, and
  replaying that run's choices reproduces it);
- an unbounded `repeat` around a failing `lift` is reported with a node/outcome counterexample.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import yaml
from bt_strategies import (
    RunningOracle,
    assert_decided_within,
    blocking_registry,
    bodies,
    enumerate_runs,
    load_shipped,
    load_text,
    profile_settings,
    random_lengths,
    run_tracked,
    tree_texts,
    wrap,
)
from helpers import run_oracle, tree
from hypothesis import assume, given
from hypothesis import strategies as st

from bt_grasp.oracles import RandomOracle, ScriptedOracle, scripts_of
from bt_grasp.outcomes import Decision
from bt_grasp.runner import EpisodeResult
from bt_grasp.verifier_api import verify_tree

MAX_RUNS = 20_000       # verifier exploration cap for generated trees
ENUMERATION_CAP = 3_000  # exhaustive enumeration cap for the tightness test
RANDOM_RUNS = 25         # random-oracle runs per generated tree

BOUNDED = {"reactive": True, "repeat": True, "timeouts_anywhere": True}
UNBOUNDED = {**BOUNDED, "unbounded": True}


def costs(res: EpisodeResult) -> Counter:
    """The verifier's cost vector of one run."""
    c: Counter = Counter({"actions": res.actions, "ticks": res.ticks,
                          "perception": res.counters["perception_calls"]})
    for name, n in res.counters["primitive_calls"].items():
        c[f"primitive:{name}"] = n
    return c


@profile_settings(multiplier=20)
@given(text=tree_texts(max_leaves=10, **BOUNDED), seed=st.integers(0, 2**16))
def test_random_outcomes_always_end_in_a_decision_within_the_verified_bounds(text: str, seed: int) -> None:
    spec = load_text(text)
    verdict = verify_tree(spec, max_runs=MAX_RUNS)
    for k in range(RANDOM_RUNS):
        oracle = RunningOracle(RandomOracle(seed + k), spec, random_lengths(seed + k))
        res, ledger = run_tracked(spec, oracle)
        assert_decided_within(res, ledger, spec, verdict)
        if verdict.proven:
            assert not res.reason.startswith(("no decision", "tick cap")), res.reason
    # helpers.run_oracle (the plain context) runs the same episode for the same choices
    plain = run_oracle(spec, RandomOracle(seed))
    tracked, _ = run_tracked(spec, RandomOracle(seed))
    assert (plain.decision, plain.reason, plain.ticks, plain.counters) == (
        tracked.decision, tracked.reason, tracked.ticks, tracked.counters)


def _looping(body: dict) -> dict:
    return {"repeat": {"child": {"force_success": {"child": body}}}}


@st.composite
def unproven_candidates(draw: Any) -> str:
    """Trees likely to be unproven: no decision wrapper, or an unbounded repeat somewhere."""
    if draw(st.booleans()):
        return draw(tree_texts(max_leaves=8, wrapped=False, max_ticks=150, **UNBOUNDED))
    first = draw(bodies(6, **BOUNDED))
    loop_body = draw(bodies(3, **BOUNDED))
    root = wrap({"sequence": {"children": [first, _looping(loop_body)]}})
    return yaml.safe_dump({"tree": "loops", "budgets": {"max_ticks": 150}, "root": root}, sort_keys=False)


@profile_settings(multiplier=20)
@given(text=unproven_candidates())
def test_an_unproven_trees_counterexample_replays_to_a_run_without_a_decision(text: str) -> None:
    spec = load_text(text)
    verdict = verify_tree(spec, max_runs=MAX_RUNS)
    assume(not verdict.proven and verdict.counterexample is not None)
    assert verdict.problem
    choices = [(step["node"], step["outcome"]) for step in verdict.counterexample]
    oracle = ScriptedOracle(scripts_of(choices, repeat_last=spec.budgets.max_ticks))
    res, _ = run_tracked(spec, oracle, explore_running=True)  # as the verifier replays it
    assert res.decision == Decision.WAIT_CLARIFY
    assert res.reason.startswith(("no decision", "tick cap")), (
        f"counterexample {choices} ({verdict.problem}) replayed to a real decision: {res.reason}")
    assert oracle.choices[:len(choices)] == choices, "the replay follows the counterexample"


@profile_settings(multiplier=15)
@given(text=tree_texts(max_leaves=5, **BOUNDED))
def test_bounds_are_sound_and_tight_against_exhaustive_enumeration(text: str) -> None:
    spec = load_text(text)
    # every run enumerated: calls end in the tick that starts them (a blocking driver), so the
    # runs are few enough (calls spanning ticks: the witness replays inside verify_tree)
    spec.registry = blocking_registry()
    verdict = verify_tree(spec, max_runs=MAX_RUNS)
    assume(verdict.proven)
    runs = enumerate_runs(spec, ENUMERATION_CAP)
    assume(runs is not None)
    worst: Counter = Counter()
    worst_run: dict[str, list[tuple[str, str]]] = {}
    for res, choices in runs:
        assert res.decision in (Decision.FINALIZE, Decision.WAIT_CLARIFY)
        for key, value in costs(res).items():
            assert value <= verdict.bounds.get(key, 0), f"sound: {key} {value} > bound {verdict.bounds.get(key, 0)}"
            if value > worst[key] or key not in worst_run:
                worst[key] = max(worst[key], value)
                worst_run[key] = choices
    for key, bound in verdict.bounds.items():
        assert worst[key] == bound, f"tight: the worst of {len(runs)} runs has {key} {worst[key]}, bound {bound}"
    for key, choices in worst_run.items():  # replay each worst run: it reaches the bound again
        replay, _ = run_tracked(spec, ScriptedOracle(scripts_of(choices)))
        assert costs(replay)[key] == verdict.bounds.get(key, 0)


def test_unbounded_repeat_around_a_failing_lift_is_a_counterexample() -> None:
    spec = tree("""
        tree: forever
        budgets: {max_ticks: 2000}
        root:
          sequence:
            children:
              - repeat:
                  id: again
                  child:
                    force_success:
                      child:
                        lift: {id: lift}
              - finalize: {reason: "never reached"}
    """)
    verdict = verify_tree(spec)
    assert not verdict.proven
    assert verdict.counterexample, "a node/outcome sequence"
    assert all(set(step) == {"node", "outcome"} for step in verdict.counterexample)
    assert {step["node"].split("#")[0] for step in verdict.counterexample} == {"lift"}  # lift#running too
    assert "loop" in verdict.problem
    assert verdict.static_bounds["primitive:lift"] is None  # the structure alone does not bound it
    res = run_oracle(spec, ScriptedOracle({}, fallback="fault"))  # the lift fails every time
    assert res.decision == Decision.WAIT_CLARIFY and res.reason.startswith("tick cap")
    assert res.counters["primitive_calls"]["lift"] == 2000


def test_clutter_bounds_hold_for_many_random_runs() -> None:
    spec = load_shipped("clutter.yaml")
    verdict = verify_tree(spec)
    assert verdict.proven
    worst: Counter = Counter()
    for seed in range(150):
        oracle = RunningOracle(RandomOracle(seed), spec, random_lengths(seed))
        res, ledger = run_tracked(spec, oracle)
        assert_decided_within(res, ledger, spec, verdict)
        worst |= costs(res)
    assert all(worst[k] <= v for k, v in verdict.bounds.items())
