"""The verifier's explicit state: what two runs must share to be merged, and what a claim must survive.

- Three trees the frame-fingerprint verifier got wrong: two paths reaching the same tree state
  at different tick counts; a retry under a timeout reached with different deadlines; Nav2's
  navigator with recoveries all inside one tick.
- Every bound comes with a witness run that, replayed on the real Runner, reaches it.
- Every counterexample, replayed with a plain ScriptedOracle on the real Runner, ends without a
  decision.
- A saved run state, restored, continues exactly as the original run.
"""

from __future__ import annotations

import json

import pytest
from bt_strategies import blocking_calls, load_text, profile_settings, tree_texts  # noqa: F401 (autouse)
from helpers import ROOT, run_oracle, spec_of, tree
from hypothesis import given

from bt_grasp.blackboard import Blackboard
from bt_grasp.cli import main
from bt_grasp.compile import compile_tree
from bt_grasp.context import RunContext
from bt_grasp.interop.btcpp_import import import_btcpp
from bt_grasp.interop.common import interop_registry
from bt_grasp.oracles import RandomOracle, ScriptedOracle, scripts_of
from bt_grasp.runner import Runner
from bt_grasp.spec.loader import load_tree
from bt_grasp.tick_budget import episode_limits
from bt_grasp.verifier.compiled import search as search_mod
from bt_grasp.verifier.compiled.state import RunState
from bt_grasp.verifier.core import run_costs
from bt_grasp.verifier.core import verify_tree as _verify_tree


def verify_tree(spec, *args, **kwargs):
    """This file pins the reference search (the compiled tree itself)."""
    return _verify_tree(spec, *args, engine="reference", **kwargs)

NAV2 = ROOT / "tests" / "data" / "nav2"

# Path A (pick done, then a two-tick repeat) reaches the retry in tick 2; path B (pick fails,
# then a three-tick repeat) reaches the very same tree state in tick 3. From there the lift may
# fail 3 times, one tick each: A decides in tick 4, B in tick 5.
TICKS = """
    tree: late_merge
    budgets: {{max_ticks: {max_ticks}}}
    root:
      selector:
        children:
          - sequence:
              children:
                - selector:
                    children:
                      - sequence:
                          children:
                            - grasp: {{id: pick}}
                            - repeat: {{times: 2, child: {{inverter: {{child: {{label_is: {{key: "{{unset}}", label: x}}}}}}}}}}
                      - repeat: {{times: 3, child: {{inverter: {{child: {{label_is: {{key: "{{unset}}", label: x}}}}}}}}}}
                - selector:
                    children:
                      - retry: {{attempts: 3, child: {{lift: {{id: up}}}}}}
                      - wait_clarify: {{reason: "lift failed"}}
                - finalize: {{reason: lifted}}
          - wait_clarify: {{reason: "could not start"}}
"""

# Path A starts the inner timeout at clock 0.00 and spends a tick inside it (deadline 0.22);
# path B spends that tick before it (deadline 0.27). In tick 3 both are at the second grasp, at
# clock 0.10, with the same blackboard: only the deadline tells them apart.
DEADLINES = """
    tree: deadlines
    budgets: {actions: 40, max_ticks: 200}
    root:
      selector:
        children:
          - timeout:
              seconds: 100
              child:
                sequence:
                  children:
                    - selector:
                        children:
                          - open_gripper: {id: first}
                          - repeat: {times: 2, child: {inverter: {child: {label_is: {key: "{unset}", label: x}}}}}
                    - timeout:
                        id: inner
                        seconds: 0.22
                        child:
                          sequence:
                            children:
                              - selector:
                                  children:
                                    - inverter: {child: {label_is: {key: "{open_gripper.outcome}", label: done}}}
                                    - repeat: {times: 2, child: {inverter: {child: {label_is: {key: "{unset}", label: x}}}}}
                              - retry:
                                  attempts: 20
                                  child:
                                    sequence:
                                      children:
                                        - open_gripper: {id: reset}
                                        - grasp: {id: g}
                    - finalize: {reason: grasped}
          - wait_clarify: {reason: "timed out"}
"""


def _replay(spec, steps, registry=None):
    choices = [(s["node"], s["outcome"]) for s in steps]
    oracle = ScriptedOracle(scripts_of(choices))
    ctx = RunContext(registry=registry or getattr(spec, "registry", None) or interop_registry(),
                     limits=episode_limits(spec),
                     oracle=oracle, blackboard=Blackboard({"goal.object": "target object"}),
                     explore_running=True)  # as the verifier replays: calls may span ticks
    return Runner(spec, ctx).run(), oracle.choices


def _witnesses_reach_their_bounds(spec, res, registry=None):
    assert res.proven, res.problem
    assert set(res.witnesses) == set(res.bounds)
    for key, steps in res.witnesses.items():
        run, _ = _replay(spec, steps, registry)
        assert run_costs(run).get(key, 0) == res.bounds[key], key


def test_a_state_reached_later_is_not_merged_with_the_same_state_reached_earlier():
    spec = tree(TICKS.format(max_ticks=4))
    res = verify_tree(spec)
    assert not res.proven and "tick cap" in res.problem
    run, choices = _replay(spec, res.counterexample)
    assert run.reason.startswith("tick cap")
    assert choices == [(s["node"], s["outcome"]) for s in res.counterexample]
    assert ("pick", "infeasible") in choices or ("pick", "fault") in choices  # the late path


def test_with_one_more_tick_allowed_the_same_tree_is_proven_and_the_late_path_is_the_tick_witness():
    spec = tree(TICKS.format(max_ticks=5))
    res = verify_tree(spec)
    assert res.bounds["ticks"] == 5
    _witnesses_reach_their_bounds(spec, res)


def test_a_retry_under_a_timeout_reached_with_a_later_deadline_counts_its_extra_attempts():
    spec = tree(DEADLINES)
    res = verify_tree(spec)
    late = run_oracle(spec, ScriptedOracle({"first": ["fault"], "g": ["fault"] * 20}))
    early = run_oracle(spec, ScriptedOracle({"first": ["done"], "g": ["fault"] * 20}))
    assert late.counters["primitive_calls"]["grasp"] > early.counters["primitive_calls"]["grasp"]
    assert res.bounds["primitive:grasp"] == late.counters["primitive_calls"]["grasp"]
    _witnesses_reach_their_bounds(spec, res)


def _nav2_without_running(name: str, tmp_path):
    """The navigator with a FollowPath that never stays RUNNING: every run lasts one tick."""
    text = (NAV2 / name).read_text().replace('_bt_grasp_outcomes="success;failure;running"',
                                              '_bt_grasp_outcomes="success;failure"')
    path = tmp_path / name
    path.write_text(text)
    return spec_of(import_btcpp(path))


@pytest.mark.parametrize("name", ["navigate_w_replanning_and_recovery.xml",
                                  "navigate_w_replanning_and_recovery_round_robin.xml"])
def test_nav2_recoveries_inside_one_tick_are_counted_round_by_round(name, tmp_path):
    spec = _nav2_without_running(name, tmp_path)
    res = verify_tree(spec, interop_registry())
    # every round: the costmap clearing, Spin and Wait fail, BackUp succeeds; navigation fails
    script = {"FollowPath": ["failure"] * 14, "ClearLocalCostmap-Context": ["success"] * 7,
              "ClearLocalCostmap-Subtree": ["failure"] * 6, "Spin": ["failure"] * 6,
              "Wait": ["failure"] * 6, "BackUp": ["success"] * 6, "GoalUpdated": ["failure"] * 6}
    run, _ = _replay(spec, [{"node": n, "outcome": o} for n, outs in script.items() for o in outs],
                     interop_registry())
    costs = run_costs(run)
    assert run.ticks == 1
    for key in ("Spin", "Wait", "BackUp"):
        assert costs[f"primitive:btcpp.{key}"] == 6
    assert costs["primitive:btcpp.ClearEntireCostmap"] == 13
    for key, value in costs.items():
        assert value <= res.bounds[key], key
    _witnesses_reach_their_bounds(spec, res, interop_registry())


def test_nav2_with_an_endless_follow_path_is_a_loop_that_replays_to_the_tick_cap():
    spec = spec_of(import_btcpp(NAV2 / "navigate_w_replanning_and_recovery.xml"))
    res = verify_tree(spec, interop_registry())
    assert not res.proven and "loop" in res.problem
    run, _ = _replay(spec, res.counterexample, interop_registry())
    assert run.reason.startswith("tick cap")


@pytest.mark.parametrize("name", ["clutter.yaml", "open_loop.yaml", "remove_all.yaml",
                                  "fetch_and_place.yaml"])
def test_every_bound_of_a_shipped_tree_has_a_witness_that_reaches_it(name):
    spec = load_tree(ROOT / "trees" / name)
    res = verify_tree(spec)
    _witnesses_reach_their_bounds(spec, res)


def test_a_loop_counterexample_replays_with_a_plain_scripted_oracle():
    spec = tree("""
        tree: loop
        budgets: {max_ticks: 30}
        root:
          sequence:
            children:
              - grasp: {id: g}
              - repeat: {child: {force_success: {child: {lift: {id: up}}}}}
    """)
    res = verify_tree(spec)
    assert not res.proven and res.loop is not None
    run, choices = _replay(spec, res.counterexample)
    assert run.reason.startswith("tick cap") and run.ticks == 30
    assert choices == [(s["node"], s["outcome"]) for s in res.counterexample]


def test_a_search_stopped_by_its_limit_says_incomplete_never_proven():
    res = verify_tree(load_tree(ROOT / "trees" / "clutter.yaml"), max_runs=10)
    if res.runs_explored == 0 or res.states:  # the structural summary may prove it without search
        assert res.proven or not res.complete
    res = verify_tree(tree(TICKS.format(max_ticks=50)), max_runs=3)
    assert not res.proven and not res.complete and res.counterexample is None
    assert "incomplete" in res.problem


def _ctx(spec, oracle):
    return RunContext(registry=interop_registry(), oracle=oracle,
                      limits=episode_limits(spec),
                      blackboard=Blackboard({"goal.object": "target object"}))


def _ticks(root, ctx, n):
    seen = []
    for _ in range(n):
        ctx.tick += 1
        seen.append([(node.name, node.status.value) for node in root.tick()])
        ctx.clock.advance(ctx.clock.tick_period)
        ctx.publish_tick_events()
    return seen, ctx.ledger.snapshot(), ctx.clock.now


@pytest.mark.parametrize("text", [DEADLINES, TICKS.format(max_ticks=50)])
def test_a_restored_state_continues_exactly_as_the_original_run(text):
    spec = tree(text)
    oracle = RandomOracle(3)
    ctx = _ctx(spec, oracle)
    root = compile_tree(spec, ctx)
    state = RunState(root, ctx, set())
    _ticks(root, ctx, 2)
    saved, rng = state.save(), oracle.rng.getstate()
    original = _ticks(root, ctx, 4)
    _ticks(root, ctx, 3)  # wander off
    state.restore(saved)
    oracle.rng.setstate(rng)
    assert _ticks(root, ctx, 4) == original


def test_witness_flag_prints_the_run_as_paths_and_json_lists_every_witness(capsys):
    # remove_all: a shipped tree with grasps and pushes that proves in under a second (clutter's
    # witnesses are checked against real runs in test_every_bound_of_a_shipped_tree_has_...)
    path = str(ROOT / "trees" / "remove_all.yaml")
    assert main(["verify", path, "--witness", "primitive:grasp"]) == 0
    out = capsys.readouterr().out
    assert "witness for primitive:grasp" in out and " > " in out and " -> " in out
    assert main(["verify", path, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["witnesses"]) == set(data["bounds"])
    assert all(set(step) == {"node", "outcome"} for steps in data["witnesses"].values() for step in steps)


def test_an_unknown_witness_name_or_a_non_positive_limit_is_bad_input(capsys):
    tree = str(ROOT / "trees" / "open_loop.yaml")
    assert main(["verify", tree, "--witness", "nonsense"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no bound named 'nonsense'" in err[0] and "primitive:grasp" in err[0]
    with pytest.raises(SystemExit) as stop:
        main(["verify", tree, "--time-limit", "-3"])
    assert stop.value.code == 2 and "must be greater than 0" in capsys.readouterr().err


def _verify_unmerged(spec, **kwargs):
    """The verdict with no state merged into one a spare budget covers: what merging must match."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search_mod._Spare, "get", lambda self, key: None)
        return verify_tree(spec, **kwargs)


def _assert_same_verdict(merged, exact) -> None:
    """Both proven, with the same bounds and the same endings."""
    assert merged.proven and exact.proven
    assert merged.bounds == exact.bounds and set(merged.endings) == set(exact.endings)


# After `probe`, a run has taken 0 actions (lift done) or up to 2 (both pushes); then up to two
# grasps. The action count differs, the rest of the state is the same.
SPARE = """
    tree: spare_budget
    budgets: {{actions: {actions}}}
    root:
      selector:
        children:
          - sequence:
              children:
                - force_success:
                    child:
                      selector:
                        children:
                          - lift: {{id: probe}}
                          - sequence: {{children: [push: {{id: p1}}, push: {{id: p2}}]}}
                - selector:
                    children:
                      - retry: {{attempts: 2, child: {{grasp: {{id: pick}}}}}}
                      - wait_clarify: {{reason: "grasp failed"}}
                - finalize: {{reason: held}}
          - wait_clarify: {{reason: "could not start"}}
"""


def test_states_that_differ_only_in_an_action_count_the_budget_covers_are_explored_once():
    # 4: two pushes and two grasps just fit, so after the pushes the state is the one after the
    # lift; 3: the second grasp would pass the budget, so that state is explored on its own
    fits, short = verify_tree(tree(SPARE.format(actions=4))), verify_tree(tree(SPARE.format(actions=3)))
    assert verify_tree(tree(SPARE.format(actions=10))).states == fits.states < short.states
    assert fits.bounds["actions"] == 4
    _witnesses_reach_their_bounds(tree(SPARE.format(actions=4)), fits)


def test_a_state_whose_future_would_pass_the_budget_is_not_merged_with_one_that_had_room():
    spec = tree(SPARE.format(actions=3))
    res = verify_tree(spec)
    _witnesses_reach_their_bounds(spec, res)
    assert res.bounds["actions"] == 3
    assert any("action budget spent" in e for e in res.endings)  # two pushes, a grasp, refused
    run, _ = _replay(spec, [{"node": n, "outcome": o} for n, o in [
        ("probe", "fault"), ("p1", "done"), ("p2", "done"), ("pick", "fault")]])
    assert "action budget spent" in run.reason


@profile_settings(multiplier=10)
@given(text=tree_texts(max_leaves=8, reactive=True, repeat=True, timeouts_anywhere=True, unbounded=True))
def test_merging_action_counts_the_budget_covers_changes_no_verdict_and_no_bound(text):
    spec = load_text(text)
    merged = verify_tree(spec, max_runs=20_000)
    exact = _verify_unmerged(spec, max_runs=20_000)
    if merged.complete and exact.complete:
        assert (merged.proven, merged.bounds, merged.problem) == (exact.proven, exact.bounds, exact.problem)
        assert merged.states <= exact.states
        if merged.proven:
            assert set(merged.endings) == set(exact.endings)


# After `probe`, a run has taken no action (lift done) or one (the grasp, then maybe a place);
# `mid` is then the same state but for the action count. The named budget of 0 refuses the
# push only while the episode's budget still has room: with the action taken, the episode's
# budget refuses first and the run ends there.
SCOPED_EDGE = """
    tree: scoped_edge
    budgets: {actions: 1}
    root:
      selector:
        children:
          - sequence:
              children:
                - force_success:
                    child:
                      selector:
                        children:
                          - lift: {id: probe}
                          - sequence: {children: [grasp: {id: pick}, place: {id: o1}]}
                - lift: {id: mid}
                - budget: {actions: 0, child: {push: {id: shove}}}
                - finalize: {reason: pushed}
          - sequence: {children: [force_success: {child: {place: {id: o2}}}, finalize: {reason: fallback}]}
"""


def test_an_action_a_named_budget_refuses_keeps_the_action_count_at_the_edge_apart():
    spec = tree(SCOPED_EDGE)
    res = verify_tree(spec)
    assert res.proven, res.problem
    assert res.bounds["primitive:place"] == 2 and res.bounds["actions"] == 1
    assert any("action budget spent" in e for e in res.endings)
    _witnesses_reach_their_bounds(spec, res)
    run, _ = _replay(spec, [{"node": n, "outcome": o} for n, o in [
        ("probe", "fault"), ("pick", "done"), ("o1", "done"), ("mid", "done")]])
    assert "action budget spent" in run.reason


# The repeat starts the retry scope 2 to 4 times; afterwards nothing starts it again, so the
# states after it differ only in a count no retry compares with its attempts any more.
RETRY_COUNTS = """
    tree: retry_counts
    root:
      selector:
        children:
          - sequence:
              children:
                - repeat: {times: 2, child: {retry: {attempts: 4, child: {lift: {id: probe}}}}}
                - lift: {id: mid}
                - place: {id: drop}
                - finalize: {reason: done}
          - wait_clarify: {reason: "could not lift"}
"""


def test_states_that_differ_only_in_retry_starts_the_attempts_cover_are_explored_once():
    spec = tree(RETRY_COUNTS)
    merged = verify_tree(spec)
    exact = _verify_unmerged(spec)
    _assert_same_verdict(merged, exact)
    assert merged.states < exact.states
    _witnesses_reach_their_bounds(spec, merged)


# After `probe`, the perception streak is 0 (lift done) or 1 (a survey instead); the two
# surveys after `mid` come before the grasp that resets it.
STREAK = """
    tree: streak
    budgets: {{perception_streak: {streak}}}
    root:
      selector:
        children:
          - sequence:
              children:
                - force_success:
                    child:
                      selector:
                        children:
                          - lift: {{id: probe}}
                          - survey_scene: {{id: look}}
                - lift: {{id: mid}}
                - force_success: {{child: {{survey_scene: {{id: s1}}}}}}
                - force_success: {{child: {{survey_scene: {{id: s2}}}}}}
                - grasp: {{id: pick}}
                - force_success: {{child: {{survey_scene: {{id: s3}}}}}}
                - finalize: {{reason: done}}
          - wait_clarify: {{reason: "could not start"}}
"""


@pytest.mark.parametrize("streak", [2, 3, 5])
def test_states_that_differ_only_in_a_perception_streak_the_limit_covers_are_explored_once(streak):
    # 3 and more: both streaks stay below the limit up to the grasp, so `mid` is one state;
    # 2: the survey path reaches the limit at `s2` and that run ends there
    spec = tree(STREAK.format(streak=streak))
    merged = verify_tree(spec)
    exact = _verify_unmerged(spec)
    _assert_same_verdict(merged, exact)
    assert (merged.states < exact.states) == (streak >= 3)
    assert any("perception loop" in e for e in merged.endings) == (streak == 2)
    _witnesses_reach_their_bounds(spec, merged)


# The repeat starts the retry scope 2 or 3 times; 3 spends every attempt, but no retry of the
# scope is ticked again, so nothing compares the count any more.
SPENT_RETRY = """
    tree: spent_retry
    root:
      selector:
        children:
          - sequence:
              children:
                - repeat: {times: 2, child: {force_success: {child: {retry: {attempts: 3, child: {lift: {id: probe}}}}}}}
                - lift: {id: mid}
                - place: {id: drop}
                - finalize: {reason: done}
          - wait_clarify: {reason: "could not lift"}
"""


def test_a_retry_count_no_retry_reads_again_is_shared_even_when_spent():
    spec = tree(SPENT_RETRY)
    hits: list[str] = []
    real_get = search_mod._Spare.get

    def spy(self, key):
        found = real_get(self, key)
        if found is not None and ("retry_1", 3) in key[4]:
            hits.append(key[10])
        return found

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search_mod._Spare, "get", spy)
        merged = verify_tree(spec)
    exact = _verify_unmerged(spec)
    assert "mid" in hits  # the spent count met the state explored with 2 starts
    _assert_same_verdict(merged, exact)
    _witnesses_reach_their_bounds(spec, merged)
