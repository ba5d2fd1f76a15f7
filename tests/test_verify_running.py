"""The verifier with calls that span ticks (bt_grasp/verifier/compiled/search.py, module docstring).

- a primitive's call may run up to its max_ticks: the bounds count those ticks, and the witness
  for `ticks` replays on the Runner (explore_running) to exactly that many;
- where nothing observes how long a call runs, trying only its longest call gives the same
  verdict, bounds and endings as trying every length tick by tick;
- a timeout, a reactive composite and a parallel observe a running call: it is explored tick by
  tick, and a halt at any tick is among the runs;
- a tick cap too small for the longest call is a counterexample whose replay reaches the cap;
- the compositional summary counts max_ticks per call too.
"""

from __future__ import annotations

import pytest
from bt_strategies import (
    RunningOracle,
    blocking_registry,
    load_text,
    profile_settings,
    random_lengths,
    run_tracked,
    tree_texts,
)
from helpers import tree
from hypothesis import given

from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import RandomOracle, ScriptedOracle, scripts_of
from bt_grasp.tick_budget import episode_limits
from bt_grasp.verifier.compiled import running as running_mod
from bt_grasp.verifier.compiled.machine import Machine
from bt_grasp.verifier.compiled.running import unobserved_leaves
from bt_grasp.verifier.core import run_costs
from bt_grasp.verifier.core import verify_tree as _verify_tree
from bt_grasp.verifier.static import keys_read
from bt_grasp.verifier.summary.bounds import summary_bounds


def verify_tree(spec, *args, **kwargs):
    """This file pins the reference search (the compiled tree itself)."""
    return _verify_tree(spec, *args, engine="reference", **kwargs)

MAX = {name: default_registry().require(name).max_ticks for name in ("grasp", "lift", "open_gripper")}

GRASP_LIFT = """
    tree: t
    budgets: {actions: 2, max_ticks: 5000}
    root:
      selector:
        children:
          - sequence:
              children:
                - retry: {attempts: 2, child: {grasp: {id: g}}}
                - lift: {id: up}
                - finalize: {reason: lifted}
          - wait_clarify: {reason: failed}
"""


def _replay(spec, steps):
    from bt_grasp.blackboard import Blackboard
    from bt_grasp.context import RunContext
    from bt_grasp.runner import Runner
    from bt_grasp.tick_budget import episode_limits

    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec),
                     oracle=ScriptedOracle(scripts_of([(s["node"], s["outcome"]) for s in steps])),
                     blackboard=Blackboard({"goal.object": "target object"}), explore_running=True)
    return Runner(spec, ctx).run()


def test_the_tick_bound_counts_every_call_running_to_its_maximum_and_its_witness_reaches_it():
    spec = tree(GRASP_LIFT)
    res = verify_tree(spec)
    assert res.proven, res.problem
    # two grasps of max ticks each (the retry returns RUNNING when the first fails, the second
    # starts next tick), the lift starts in the tick the second grasp ends
    assert res.bounds["ticks"] == 2 * MAX["grasp"] + MAX["lift"] - 1
    run = _replay(spec, res.witnesses["ticks"])
    assert run_costs(run)["ticks"] == res.bounds["ticks"]
    assert res.bounds["actions"] == 2 and res.bounds["primitive:grasp"] == 2


def test_skipping_the_idle_ticks_of_a_longest_call_changes_no_result(monkeypatch):
    spec = tree(GRASP_LIFT)
    quick = verify_tree(spec)
    monkeypatch.setattr(Machine, "fast_forward", False)
    slow = verify_tree(spec)
    assert (quick.proven, quick.bounds, quick.endings) == (slow.proven, slow.bounds, slow.endings)
    assert quick.witnesses["ticks"] == slow.witnesses["ticks"]


@profile_settings(multiplier=5)
@given(text=tree_texts(max_leaves=8, max_ticks=400, reactive=True, repeat=True, timeouts_anywhere=True))
def test_the_extremes_of_unobserved_calls_give_the_verdict_of_every_length_on_generated_trees(text):
    # calls of at most 4 ticks, so that every length of every call can be explored too
    spec = load_text(text)
    spec.registry = blocking_registry(cap=4)
    quick = verify_tree(spec, max_runs=50_000)
    verdicts = [quick]
    for attr in ("fast_forward", "extremes"):  # idle ticks one by one; then every length
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(Machine, attr, False)
            verdicts.append(verify_tree(spec, max_runs=50_000))
    for other in verdicts[1:]:
        assert other.complete and quick.complete
        assert (quick.proven, quick.bounds, set(quick.endings)) == (
            other.proven, other.bounds, set(other.endings)), text


@pytest.mark.parametrize("wrapper, observed", [
    ("sequence", False), ("retry", False), ("timeout", True), ("parallel", True),
    ("reactive_sequence", False),  # its earlier child is a pure label_is: it re-reads the same label
    ("reactive_selector_perceiving", True),
    ("reactive_sequence_listening", False),  # a guard: failing at any idle tick = failing at the last
    ("reactive_sequence_listen_or_stop", False),
    ("reactive_selector_listening", True),  # a selector's earlier children must be pure
])
def test_what_observes_a_running_call(wrapper, observed):
    body = {
        "sequence": "sequence: {children: [grasp: {id: g}]}",
        "retry": "retry: {attempts: 2, child: {grasp: {id: g}}}",
        "timeout": "timeout: {seconds: 1.0, child: {grasp: {id: g}}}",
        "parallel": "parallel: {children: [grasp: {id: g}]}",
        "reactive_sequence": 'reactive_sequence: {children: [label_is: {key: "{x}", label: y}, grasp: {id: g}]}',
        "reactive_selector_perceiving": "reactive_selector: {children: [survey_scene, grasp: {id: g}]}",
        "reactive_sequence_listening": "reactive_sequence: {children: [listen, grasp: {id: g}]}",
        "reactive_sequence_listen_or_stop":
            'reactive_sequence: {children: [selector: {children: [listen, wait_clarify: {reason: r}]}, grasp: {id: g}]}',
        "reactive_selector_listening": "reactive_selector: {children: [listen, grasp: {id: g}]}",
    }[wrapper]
    spec = tree(f"tree: t\nroot:\n  {body}\n")
    reg = default_registry()

    m = Machine(spec, reg, episode_limits(spec), {}, keys_read(spec, reg))
    assert ("g" not in unobserved_leaves(m.state.nodes)) == observed


def test_a_call_under_a_timeout_is_explored_tick_by_tick_and_every_halt_is_a_run():
    spec = tree("""
        tree: t
        budgets: {actions: 3, max_ticks: 200}
        root:
          selector:
            children:
              - sequence:
                  children:
                    - retry:
                        attempts: 3
                        child:
                          timeout: {seconds: 0.2, child: {grasp: {id: g}}}
                    - finalize: {reason: grasped}
              - wait_clarify: {reason: "timed out"}
    """)
    res = verify_tree(spec)
    assert res.proven, res.problem
    # every attempt runs until its deadline halts it (a tick period of clock per tick)
    longest, _ = run_tracked(spec, RunningOracle(ScriptedOracle({}, fallback="fault"), spec, lambda top: top))
    assert longest.reason == "timed out"
    assert res.bounds["ticks"] == longest.ticks > 3 * 0.2 / 0.05
    assert res.bounds["actions"] == 3
    run = _replay(spec, res.witnesses["ticks"])
    assert run.ticks == res.bounds["ticks"]
    halted = [e for e in run.events if e.metadata.get("halted") == "timeout"]
    assert halted and all(e.watchdog_label == "TIMEOUT" for e in halted)


def test_a_tick_cap_below_the_longest_call_is_a_counterexample_that_replays_to_the_cap():
    spec = tree(GRASP_LIFT.replace("max_ticks: 5000", "max_ticks: 700"))
    res = verify_tree(spec)
    assert not res.proven and "tick cap" in res.problem
    run = _replay(spec, res.counterexample)
    assert run.reason.startswith("tick cap") and run.ticks == 700


def test_the_summary_counts_max_ticks_per_call():
    spec = tree(GRASP_LIFT)
    summary = summary_bounds(spec)
    assert summary.decides is True
    assert summary.bounds["ticks"] >= verify_tree(spec).bounds["ticks"]
    assert summary.bounds["ticks"] <= 2 * MAX["grasp"] + MAX["lift"]


def test_runs_of_random_lengths_stay_within_the_proved_bounds():
    spec = tree(GRASP_LIFT)
    res = verify_tree(spec)
    for seed in range(30):
        oracle = RunningOracle(RandomOracle(seed), spec, random_lengths(seed))
        run, _ = run_tracked(spec, oracle)
        assert run.decision is not None
        for key, value in run_costs(run).items():
            assert value <= res.bounds.get(key, 0), (seed, key)


def test_a_reactive_guard_that_perceives_each_tick_is_bounded_by_the_perception_streak():
    spec = tree("""
        tree: t
        budgets: {actions: 2, perception_streak: 3, max_ticks: 2000}
        root:
          selector:
            children:
              - reactive_sequence:
                  children:
                    - survey_scene: {id: look}
                    - lift: {id: up}
                    - finalize: {reason: lifted}
              - wait_clarify: {reason: "lost it"}
    """)
    res = verify_tree(spec)
    assert res.proven, res.problem
    # the lift is no action: the re-ticked perception hits the streak in its 3rd re-check
    assert res.bounds["perception"] == 3 and res.bounds["ticks"] == 4
    assert any("perception loop" in e for e in res.endings)


def test_the_running_module_documents_the_extremes():
    assert "RUNS_TO_MAX" in running_mod.__doc__ and "observe" in running_mod.__doc__


def test_a_listen_guard_halting_at_any_tick_gives_the_verdict_of_exploring_every_tick():
    # the guard may fail at any idle tick of the grasp (a revision halts it) or at its last one;
    # the calls are in the reactive sequence's last child, which nothing re-starts while it runs
    spec = load_text("""
tree: t
budgets: {max_ticks: 200, actions: 3}
root:
  selector:
    children:
      - retry:
          attempts: 2
          child:
            reactive_sequence:
              children:
                - selector: {children: [listen: {id: heard}, wait_clarify: {reason: revised}]}
                - sequence:
                    children:
                      - grasp: {id: g}
                      - lift: {id: up}
                      - finalize: {reason: done}
      - wait_clarify: {reason: spent}
""")
    spec.registry = blocking_registry(cap=5)
    quick = verify_tree(spec)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Machine, "extremes", False)
        every = verify_tree(spec)
    assert quick.proven and every.proven and quick.runs_explored < every.runs_explored
    assert (quick.bounds, set(quick.endings)) == (every.bounds, set(every.endings))


def test_a_deadline_of_whole_ticks_allows_that_many_tick_periods_after_its_start_tick():
    # 3 s of 0.05 s ticks is 60 periods: the deadline is certain at the 61st entry after the
    # start tick (the start may fall at the very end of its tick), and the witness replays to it
    spec = load_text("""
tree: t
budgets: {max_ticks: 100000}
root:
  selector:
    children:
      - sequence:
          children:
            - switch:
                on: "{grasp.outcome}"
                cases: {done: {finalize: {reason: r}}}
                default: {timeout: {seconds: 3.0, child: grasp}}
            - sequence:
                children:
                  - timeout: {seconds: 8.0, child: open_gripper}
                  - finalize: {reason: r}
      - wait_clarify: {reason: body failed}
""")
    res = verify_tree(spec)
    assert res.proven, res.problem
    # the grasp ends at tick 61 at the latest (its deadline is certain at the entry of tick 62);
    # the open_gripper starts in that tick, and its 8 s deadline is certain 161 entries later
    assert res.bounds["ticks"] == 61 + 161
    assert _replay(spec, res.witnesses["ticks"]).ticks == res.bounds["ticks"]


def test_states_met_inside_a_tick_merge_only_if_their_tick_ends_alike():
    # lift_1 ends in the tick its 0.5 s deadline is near, at once or overrunning it; lift_3's 8 s
    # timeout then starts inside that tick, 8 s before its deadline either way, but the tick's
    # end moves the clock by one period or by nothing: the two are different states
    spec = load_text("""
tree: t
budgets: {max_ticks: 100000}
root:
  selector:
    children:
      - sequence:
          children:
            - selector:
                children:
                  - open_gripper
                  - timeout: {seconds: 0.5, child: lift}
            - timeout:
                seconds: 8.0
                child:
                  switch:
                    on: "{grasp.outcome}"
                    cases: {done: lift}
                    default: {sequence: {children: [lift, {finalize: {reason: r}}]}}
      - wait_clarify: {reason: body failed}
""")
    res = verify_tree(spec)
    assert res.proven, res.problem


def test_a_call_before_a_later_child_of_a_reactive_sequence_is_explored_at_every_length():
    """Ending the lift moves the reactive sequence on to the grasp; the next tick starts a new
    lift call. A shorter lift call therefore makes more lift calls: the longest call does not
    stand for the others, and both searches find the four calls a replayed run reaches."""
    spec = tree("""
        tree: t
        budgets: {actions: 1, max_ticks: 400}
        root:
          selector:
            children:
              - sequence:
                  children:
                    - reactive_sequence: {children: [lift, grasp]}
                    - finalize: {reason: body succeeded}
              - wait_clarify: {reason: body failed}
    """)
    spec.registry = blocking_registry(cap=4)
    assert "lift_1" not in unobserved_leaves(Machine(spec, spec.registry, episode_limits(spec),
                                                      {}, set()).state.nodes)
    ref, sym = verify_tree(spec), _verify_tree(spec, engine="symbolic")
    assert ref.bounds == sym.bounds and ref.bounds["primitive:lift"] == 4
    steps = [(s["node"], s["outcome"]) for s in ref.witnesses["primitive:lift"]]
    res = run_tracked(spec, ScriptedOracle(scripts_of(steps)), explore_running=True)[0]
    assert run_costs(res)["primitive:lift"] == 4
