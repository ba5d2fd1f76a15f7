"""Differential soundness of the verifier: random runs of the real Runner against its bounds.

Specification pinned here (docs/semantics.md, "The verifier"; the bounds are sound: each is
≥ what every run spends, checked differentially):
- no run of the real Runner (random outcomes, RandomOracle) costs more than `summarise()` says,
  for any key (actions, ticks, perception, calls per primitive), on trees drawn from a grammar
  with timeouts started at different clocks, BT.CPP controls (RecoveryNode, RoundRobin,
  PipelineSequence, Reactive*, RetryUntilSuccessful), opaque leaves that answer RUNNING, includes,
  scoped budgets and retries, and a tick cap close to the bound;
- a tree `summarise()` says decides (True) never ends on the tick cap or without a Decision;
- the same holds for the shipped trees (trees/*.yaml), which all decide;
- the same holds for `verify_tree()`: no run exceeds a PROVEN tree's bounds, and a PROVEN tree
  never ends on the tick cap or without a Decision;
- ADVERSARIAL runs hold too: every call at its max_ticks, or each leaf fixed at its longest or
  at one tick (one branch at the maximum while another is cut), outcomes leaning to failure so
  that action budgets and attempts run out inside repeats and retries; a tree with no
  budgets.max_ticks is never longer than its structural cap (played with the cap lifted);
- the Nav2 navigators (tests/data/nav2) are bounded soundly, including the scripted run in which
  every system recovery fails clearing, Spin and Wait and succeeds on BackUp.

The CI profile draws a few trees; `BT_GRASP_HYPOTHESIS_PROFILE=thorough` draws many, and
tools/perf/verify_soundness.py runs ≥ 10,000 trees.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from bt_strategies import diff_tree_texts, load_text, profile_settings
from hypothesis import given
from hypothesis import strategies as st

from bt_grasp.default_registry import default_registry
from bt_grasp.interop.btcpp_import import import_spec
from bt_grasp.oracles import RandomOracle, ScriptedOracle
from bt_grasp.spec.loader import load_tree
from bt_grasp.testing.running import adversarial_oracle
from bt_grasp.tick_budget import structural_ticks, tick_cap
from bt_grasp.verifier.summary.bounds import summarise
from bt_grasp.verifier.summary.witness import BiasedOracle, play, run_costs, success_outcomes
from bt_grasp.verifier_api import verify_tree

RUNS = 1000          # random-oracle runs per drawn tree
VERIFY_RUNS = 4000   # exploration cap for verify_tree on drawn trees (unfinished -> not PROVEN)
NAV2 = Path(__file__).resolve().parent / "data" / "nav2"
UNDECIDED = ("tick cap", "no decision")


def violations(spec, bounds: dict, runs: int, must_decide: bool) -> list[str]:
    """Every way the `runs` random runs of `spec` break `bounds` (or the decision promise)."""
    registry = getattr(spec, "registry", None) or default_registry()
    out = []
    for seed in range(runs):
        oracle = RandomOracle(seed)
        res = play(spec, registry, oracle)
        for key, value in run_costs(res).items():
            bound = bounds.get(key, 0)
            if bound is not None and value > bound:
                out.append(f"seed {seed}: {key} = {value} > bound {bound}")
        if must_decide and any(word in res.reason for word in UNDECIDED):
            out.append(f"seed {seed}: ended with '{res.reason}' although proven to decide")
        if len(out) >= 5:
            break
    return out


def with_tick_cap(text: str, delta: int):
    """The tree, its tick cap moved next to the ticks its summary allows (delta ticks away)."""
    spec = load_text(text)
    spec.budgets.max_ticks = 200
    ticks = summarise(spec).bounds["ticks"] or 200
    spec.budgets.max_ticks = max(1, ticks + delta)
    return spec


@profile_settings()
@given(diff_tree_texts(), st.sampled_from([None, -2, -1, 0, 1]))
def test_no_random_run_exceeds_the_summary_bounds(text, delta):
    spec = load_text(text) if delta is None else with_tick_cap(text, delta)
    summary = summarise(spec)
    bad = violations(spec, summary.bounds, RUNS, must_decide=summary.decides is True)
    assert not bad, f"{bad}\n{text}\nmax_ticks={spec.budgets.max_ticks}\nsummary={summary}"


@profile_settings()
@given(diff_tree_texts(max_leaves=6))
def test_no_random_run_exceeds_what_verify_tree_proves(text):
    spec = load_text(text)
    result = verify_tree(spec, max_runs=VERIFY_RUNS)
    if not result.proven:
        return  # a counterexample or an unfinished search promises nothing
    bad = violations(spec, result.bounds, RUNS, must_decide=True)
    assert not bad, f"{bad}\n{text}\nverify_tree bounds={result.bounds}"


ADVERSARIAL_RUNS = 24
FAIL_LEANS = (0.5, 0.8, 0.95, 1.0)


def adversarial_runs(spec, runs: int):
    """Runner episodes with every call at its longest or longest/cut per leaf (see above)."""
    registry = getattr(spec, "registry", None) or default_registry()
    successes = success_outcomes(spec, registry)
    for seed in range(runs):
        outcomes = BiasedOracle(seed, FAIL_LEANS[(seed // 2) % len(FAIL_LEANS)], 0.0, successes)
        yield seed, play(spec, registry, adversarial_oracle(outcomes, spec, seed))


@profile_settings()
@given(diff_tree_texts())
def test_no_adversarial_run_exceeds_the_summary_bounds_or_the_structural_cap(text):
    spec = load_text(text)
    summary = summarise(spec)
    bad = []
    for seed, res in adversarial_runs(spec, ADVERSARIAL_RUNS):
        bad += [f"seed {seed}: {k} = {v} > {summary.bounds.get(k, 0)}" for k, v in run_costs(res).items()
                if summary.bounds.get(k, 0) is not None and v > summary.bounds.get(k, 0)]
        if summary.decides is True and any(word in res.reason for word in UNDECIDED):
            bad.append(f"seed {seed}: ended with '{res.reason}' although proven to decide")
    if tick_cap(spec).source in ("structure", "default floor"):
        bound = structural_ticks(spec)
        lifted = load_text(text)
        lifted.budgets.max_ticks = int(bound) + 100
        bad += [f"seed {seed}: {res.ticks} ticks > structural cap {bound:.0f}"
                for seed, res in adversarial_runs(lifted, ADVERSARIAL_RUNS) if res.ticks > bound]
    assert not bad, f"{bad[:5]}\n{text}\nsummary={summary}"


SHIPPED = sorted(p for p in (Path(__file__).resolve().parent.parent / "trees").rglob("*.yaml")
                 if "subtrees" not in p.parts)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_no_random_run_of_a_shipped_tree_exceeds_its_summary_bounds(path):
    spec = load_tree(str(path))
    summary = summarise(spec)
    assert summary.decides is True
    bad = violations(spec, summary.bounds, RUNS, must_decide=True)
    assert not bad, bad


# -- the Nav2 navigators ------------------------------------------------------------------------

def nav2(name: str):
    return import_spec(NAV2 / f"{name}.xml")


# Every system recovery: the clearing sequence fails, Spin fails, Wait fails, BackUp succeeds;
# planning always fails after its contextual costmap clear. All of it happens in one tick.
FAILING_RECOVERIES = {
    "ComputePathToPose": ["failure"] * 50, "ClearGlobalCostmap-Context": ["success"] * 50,
    "GoalUpdated": ["failure"] * 50, "ClearLocalCostmap-Subtree": ["failure"] * 50,
    "Spin": ["failure"] * 50, "Wait": ["failure"] * 50, "BackUp": ["success"] * 50,
}


def test_nav2_summary_is_sound_against_the_scripted_recovery_run():
    for name in ("navigate_w_replanning_and_recovery", "navigate_w_replanning_and_recovery_round_robin"):
        spec = nav2(name)
        res = play(spec, spec.registry, ScriptedOracle(FAILING_RECOVERIES))
        calls = res.counters["primitive_calls"]
        assert res.ticks == 1
        assert (calls["btcpp.Spin"], calls["btcpp.Wait"], calls["btcpp.BackUp"],
                calls["btcpp.ClearEntireCostmap"]) == (6, 6, 6, 13)
        summary = summarise(spec)
        for key, value in run_costs(res).items():
            assert value <= summary.bounds[key], (name, key, value, summary.bounds[key])


def test_nav2_summary_is_sound_against_random_runs():
    for name in ("navigate_w_replanning_and_recovery", "navigate_w_replanning_and_recovery_round_robin"):
        spec = nav2(name)
        summary = summarise(spec)
        assert summary.decides is not True  # FollowPath may stay RUNNING until the tick cap
        bad = violations(spec, summary.bounds, RUNS, must_decide=False)
        assert not bad, (name, bad)
