"""Differential soundness of the verifier: random runs of the real Runner against its bounds.

Specification pinned here (DESIGN §3, "bounds are sound: ≥ every run, checked differentially"):
- no run of the real Runner (random outcomes, RandomOracle) costs more than `summarise()` says,
  for any key (actions, ticks, perception, calls per primitive), on trees drawn from a grammar
  with timeouts started at different clocks, BT.CPP controls (RecoveryNode, RoundRobin,
  PipelineSequence, Reactive*, RetryUntilSuccessful), opaque leaves that answer RUNNING, includes,
  scoped budgets and retries, and a tick cap close to the bound;
- a tree `summarise()` says decides (True) never ends on the tick cap or without a Decision;
- the same holds for the shipped trees (trees/*.yaml), which all decide;
- the same holds for `verify_tree()`: no run exceeds a PROVEN tree's bounds, and a PROVEN tree
  never ends on the tick cap or without a Decision;
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
from bt_grasp.verifier.bounds import summarise
from bt_grasp.verifier.summary_witness import play, run_costs
from bt_grasp.verify import verify_tree

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
