"""Reactive composites: every tick they start again from the first child, and a RUNNING child that
an earlier one overrules is halted, its motion cancelled with the reason "preempted".

A fake streaming robot (tests/fakes.py) runs the motions; a quick lift in a parallel
branch writes the label that the reactive composite's condition re-checks every tick.
"""

from __future__ import annotations

from fakes import FakeStreamingRobot
from helpers import run_driver

from bt_grasp.composites import ReactiveSelector, ReactiveSequence
from bt_grasp.outcomes import Decision

GUARDED = """
    tree: t
    root:
      selector:
        children:
          - parallel:
              children:
                - lift: {{id: quick, outcome: "{{quick.outcome}}"}}
                - {kind}:
                    id: reactive
                    children:
                      - {guard}
                      - place: {{id: slow, outcome: "{{slow.outcome}}"}}
          - wait_clarify: {{reason: "guard"}}
"""


def test_a_reactive_sequence_halts_its_running_child_the_tick_its_condition_fails():
    # the guard holds while quick runs; quick's 3 periods end at its 4th poll (tick 4), "done"
    text = GUARDED.format(kind="reactive_sequence",
                          guard='inverter: {child: {label_is: {key: "{quick.outcome}", label: done}}}')
    robot = FakeStreamingRobot({"lift": 3, "place": 50})
    result, ctx = run_driver(text, robot)
    assert result.decision == Decision.WAIT_CLARIFY and result.reason == "guard"
    assert robot.log == ["start lift", "start place", "end lift", "cancel place: preempted"]
    slow = [e for e in result.events if e.node == "slow"]
    assert len(slow) == 1 and slow[0].metadata["halted"] == "preempted"
    assert slow[0].exec_status.value == "FAIL"
    assert ctx.blackboard.get("slow.halted") == "preempted"
    assert result.actions == 0 and result.counters["primitive_calls"]["place"] == 1  # counted once
    assert result.ticks == 4  # halted in the tick the label changed, not later


def test_a_reactive_selector_halts_its_running_child_when_a_higher_priority_child_succeeds():
    text = GUARDED.format(kind="reactive_selector",
                          guard='label_is: {key: "{quick.outcome}", label: done}')
    text = text.replace('wait_clarify: {reason: "guard"}', 'wait_clarify: {reason: "never"}')
    text = text.replace("      selector:\n        children:\n          - parallel:",
                        "      sequence:\n        children:\n          - parallel:")
    text = text.replace('- wait_clarify: {reason: "never"}', '- finalize: {reason: "quick won"}')
    robot = FakeStreamingRobot({"lift": 2, "place": 50})
    result, _ = run_driver(text, robot)
    assert result.decision == Decision.FINALIZE and result.reason == "quick won"
    assert robot.log == ["start lift", "start place", "end lift", "cancel place: preempted"]


def test_while_its_condition_holds_the_reactive_sequence_lets_the_motion_finish():
    text = GUARDED.format(kind="reactive_sequence",
                          guard='inverter: {child: {label_is: {key: "{quick.outcome}", label: fault}}}')
    robot = FakeStreamingRobot({"lift": 2, "place": 5})
    result, _ = run_driver(text, robot)
    assert "cancel place: preempted" not in robot.log and "end place" in robot.log
    assert result.ticks == 6


def test_sequence_and_selector_with_memory_false_are_the_reactive_composites():
    from helpers import tree

    from bt_grasp.blackboard import Blackboard
    from bt_grasp.compile import compile_tree
    from bt_grasp.context import RunContext
    from bt_grasp.default_registry import default_registry

    spec = tree("""
        tree: t
        root:
          sequence:
            memory: false
            children:
              - selector: {memory: false, children: [finalize]}
    """)
    root = compile_tree(spec, RunContext(registry=default_registry(), blackboard=Blackboard()))
    assert isinstance(root, ReactiveSequence) and isinstance(root.children[0], ReactiveSelector)
