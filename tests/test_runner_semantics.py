"""Episode semantics (docs/semantics.md, Episodes): decisions, non-refillable budgets, logical time, events."""

from __future__ import annotations

from helpers import run_oracle, tree

from bt_grasp.composites import tick_allowance
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.outcomes import Decision


def test_terminal_leaf_ends_the_episode_after_its_tick():
    spec = tree("""
        tree: t
        root:
          sequence:
            children:
              - finalize: {reason: "all good"}
              - grasp: {id: never}
    """)
    res = run_oracle(spec, ScriptedOracle({}))
    assert res.decision == Decision.FINALIZE and res.reason == "all good"
    assert res.counters["primitive_calls"] == {}
    assert res.ticks == 1


def test_root_finishing_without_decision_is_wait_clarify_no_decision():
    spec = tree("""
        tree: t
        root:
          sequence:
            children:
              - open_gripper: {id: open}
    """)
    res = run_oracle(spec, ScriptedOracle({"open": ["done"]}))
    assert res.decision == Decision.WAIT_CLARIFY
    assert res.reason.startswith("no decision")


def test_retry_budget_is_not_refilled_when_the_parent_re_enters():
    # The repeat re-enters the selector three times; the retry below it may start its child
    # only twice in the whole episode.
    spec = tree("""
        tree: t
        root:
          sequence:
            children:
              - repeat:
                  times: 3
                  child:
                    selector:
                      children:
                        - retry:
                            id: r
                            attempts: 2
                            child:
                              open_gripper: {id: open}
                        - force_success:
                            child:
                              label_is: {key: "{nothing}", label: x}
              - finalize: {reason: end}
    """)
    res = run_oracle(spec, ScriptedOracle({}, fallback="fault"))
    assert res.decision == Decision.FINALIZE
    assert res.counters["primitive_calls"]["open_gripper"] == 2
    assert res.counters["retry_starts"]["r"] == 2


def test_retry_stops_on_success_and_scopes_share_one_budget():
    spec = tree("""
        tree: t
        root:
          sequence:
            children:
              - force_success:
                  child:
                    retry: {id: a, attempts: 3, scope: shared, child: {open_gripper: {id: o1}}}
              - force_success:
                  child:
                    retry: {id: b, attempts: 3, scope: shared, child: {open_gripper: {id: o2}}}
              - finalize: {reason: end}
    """)
    res = run_oracle(spec, ScriptedOracle({"o1": ["fault", "done"]}, fallback="fault"))
    # o1: fault, done (2 starts); o2 gets the 1 start left in the shared scope.
    assert res.counters["retry_starts"] == {"shared": 3}
    assert res.counters["primitive_calls"]["open_gripper"] == 3


def test_action_budget_ends_the_episode_with_wait_clarify():
    spec = tree("""
        tree: t
        budgets: {actions: 3}
        root:
          repeat:
            child:
              force_success:
                child:
                  grasp: {id: g}
    """)
    res = run_oracle(spec, ScriptedOracle({}, fallback="done"))
    assert res.decision == Decision.WAIT_CLARIFY
    assert "action budget" in res.reason
    assert res.actions == 3 and res.counters["primitive_calls"]["grasp"] == 3


def test_perception_streak_guard_ends_a_perception_loop():
    spec = tree("""
        tree: t
        budgets: {perception_streak: 5}
        root:
          repeat:
            child:
              survey_scene: {id: s}
    """)
    res = run_oracle(spec, ScriptedOracle({}, fallback="found"))
    assert res.decision == Decision.WAIT_CLARIFY
    assert "perception loop" in res.reason
    assert res.counters["perception_calls"] == 5


def test_a_manipulation_resets_the_perception_streak():
    spec = tree("""
        tree: t
        budgets: {perception_streak: 2, actions: 2}
        root:
          repeat:
            child:
              sequence:
                children:
                  - survey_scene: {id: s}
                  - locate_object: {id: l, target: "{goal.object}"}
                  - force_success: {child: {grasp: {id: g}}}
    """)
    res = run_oracle(spec, ScriptedOracle({}, fallback="found"))
    assert "action budget" in res.reason  # never the perception guard
    assert res.counters["perception_calls"] == 6


def test_tick_cap_is_a_hard_stop():
    spec = tree("""
        tree: t
        budgets: {max_ticks: 7}
        root:
          repeat:
            child:
              label_is: {key: "{k}", label: "None"}
    """)
    res = run_oracle(spec, ScriptedOracle({}))
    assert res.decision == Decision.WAIT_CLARIFY and "tick cap" in res.reason
    assert res.ticks == 7


def test_under_an_oracle_a_deadline_passes_when_the_oracle_says_and_at_the_latest_tick():
    # The oracle stands for any clock: the deadline may pass at any check after the start, and
    # has certainly passed once `tick_allowance` tick periods have gone by since the start tick.
    spec = tree("""
        tree: t
        root:
          selector:
            children:
              - timeout:
                  id: limit
                  seconds: 5
                  child:
                    repeat:
                      child:
                        lift: {id: up}
              - finalize: {reason: timed out}
    """)
    # checks: after the first tick's lift, then at each later tick's entry and after its lift
    early = {"limit#deadline": ["not yet", "not yet", "passed"]}
    res = run_oracle(spec, ScriptedOracle(early, fallback="done"))
    assert res.decision == Decision.FINALIZE and res.reason == "timed out"
    assert res.counters["primitive_calls"]["lift"] == 2 and res.ticks == 2
    late = run_oracle(spec, ScriptedOracle({"limit#deadline": []}, fallback="done"))  # "not yet"
    assert tick_allowance(5.0, 0.05) == 101
    assert late.reason == "timed out" and late.ticks == 102
    assert late.counters["primitive_calls"]["lift"] == 101


def test_switch_routes_on_the_watchdog_label_and_fails_without_a_case():
    spec = tree("""
        tree: t
        root:
          selector:
            children:
              - sequence:
                  children:
                    - grasp: {id: g}
                    - force_success: {child: {evaluate_grasp: {id: w}}}
                    - switch:
                        "on": "{grasp.label}"
                        cases:
                          SUCCESS: {finalize: {reason: held}}
                          EMPTY: {wait_clarify: {reason: empty}}
              - finalize: {reason: "unrouted label"}
    """)
    cases = {"SUCCESS": "held", "EMPTY": "empty", "SLIP": "unrouted label"}
    for label, reason in cases.items():
        res = run_oracle(spec, ScriptedOracle({"g": ["done"], "w": [label]}))
        assert res.reason == reason, label


def test_every_primitive_attempt_emits_one_event_with_the_watchdog_label():
    spec = tree("""
        tree: t
        root:
          sequence:
            children:
              - grasp: {id: g}
              - evaluate_grasp: {id: w}
              - lift: {id: up}
              - finalize: {reason: ok}
    """)
    res = run_oracle(spec, ScriptedOracle({"g": ["done"], "w": ["SUCCESS"], "up": ["done"]}))
    assert [e.primitive for e in res.events] == ["grasp", "lift"]
    grasp = res.events[0]
    assert grasp.watchdog_label == "SUCCESS" and grasp.exec_status.value == "SUCCESS"
    assert grasp.node == "g" and grasp.trial_id and grasp.clock > 0
    assert res.events[1].watchdog_label is None
