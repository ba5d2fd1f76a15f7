"""Leaves that run across ticks: start, poll each tick, halt when preempted, finish with an event.

A fake streaming robot (tests/fakes.py) stands in for a driver: its lift runs a given number of
control periods.
"""

from __future__ import annotations

import pytest
from fakes import LIFT_THEN_FINALIZE, LIFT_WITH_DEADLINE, PERIOD, FakeStreamingRobot
from helpers import run_driver

from bt_grasp.context import WallClock
from bt_grasp.default_registry import default_registry
from bt_grasp.drivers.base import Execution
from bt_grasp.outcomes import Decision
from bt_grasp.watchdog.telemetry import Telemetry


def test_a_motion_runs_across_ticks_and_its_event_comes_when_it_ends():
    robot = FakeStreamingRobot({"lift": 5})
    result, ctx = run_driver(LIFT_THEN_FINALIZE, robot)
    assert result.decision == Decision.FINALIZE
    # started and polled in tick 1, polled in ticks 2..5, ended at the 6th poll; finalize ticks 6
    assert robot.log == ["start lift", "end lift"]
    assert result.ticks == 6
    [event] = result.events
    assert event.node == "up" and event.metadata["outcome"] == "done"
    assert event.metadata["duration"] == pytest.approx(5 * PERIOD)
    # the clock followed the motion (one period per tick), not motion time plus tick time
    assert result.clock == pytest.approx(6 * PERIOD)


def test_the_trace_shows_the_leaf_running_across_ticks(tmp_path):
    import json

    robot = FakeStreamingRobot({"lift": 3})
    trace = tmp_path / "t.jsonl"
    run_driver(LIFT_THEN_FINALIZE, robot, trace=str(trace))
    ticks = [json.loads(line) for line in trace.read_text().splitlines()]
    statuses = [dict(map(tuple, r["visited"])).get("up") for r in ticks if r["type"] == "tick"]
    assert statuses[:4] == ["RUNNING", "RUNNING", "RUNNING", "SUCCESS"]


def test_a_timeout_halts_the_running_motion_at_its_deadline():
    robot = FakeStreamingRobot({"lift": 100})
    result, ctx = run_driver(LIFT_WITH_DEADLINE, robot)
    assert result.decision == Decision.WAIT_CLARIFY and result.reason == "too slow"
    assert robot.log == ["start lift", "cancel lift: timeout"]
    [event] = result.events
    assert event.watchdog_label == "TIMEOUT" and event.metadata["halted"] == "timeout"
    assert event.exec_status.value == "FAIL"
    assert event.metadata["duration"] == pytest.approx(0.2)  # stopped at the deadline, not later
    assert ctx.blackboard.get("up.halted") == "timeout"


def test_a_halted_action_still_counts_against_the_budget():
    text = """
        tree: t
        budgets: {actions: 2}
        root:
          sequence:
            children:
              - retry:
                  attempts: 5
                  child:
                    timeout:
                      seconds: 0.1
                      child:
                        push: {id: shove, target: "{nothing}"}
              - finalize: {reason: pushed}
    """
    # push with no located target is refused before it moves; still an action each time
    result, _ = run_driver(text, FakeStreamingRobot({}))
    assert result.decision == Decision.WAIT_CLARIFY and "action budget spent" in result.reason
    assert result.actions == 2


def test_a_motion_still_running_at_its_declared_maximum_is_cancelled_as_timed_out():
    registry = default_registry()
    max_ticks = registry.get("lift").max_ticks
    robot = FakeStreamingRobot({"lift": max_ticks + 50})
    result, _ = run_driver(LIFT_THEN_FINALIZE.replace("lifted", "x") + "    budgets: {max_ticks: 100000}\n", robot)
    assert robot.log == ["start lift", "cancel lift: timeout"]
    [event] = result.events
    assert event.metadata["fault"] == "timeout" and event.metadata["outcome"] == "done"
    assert result.ticks == max_ticks  # the lift spans its maximum; finalize ticks in its last


def test_a_driver_failing_mid_motion_becomes_a_fault_outcome_not_a_crash():
    robot = FakeStreamingRobot({"lift": 5}, fail_on_poll=3)
    result, ctx = run_driver(LIFT_THEN_FINALIZE, robot)
    assert result.decision == Decision.WAIT_CLARIFY  # the sequence failed: no decision
    assert ctx.blackboard.get("up.error") == "RuntimeError: encoder lost"
    assert ctx.blackboard.get("lift.outcome") == "fault"


def test_an_episode_ending_while_a_motion_runs_cancels_it():
    text = """
        tree: t
        budgets: {max_ticks: 4}
        root:
          lift: {id: up}
    """
    robot = FakeStreamingRobot({"lift": 100})
    result, _ = run_driver(text, robot)
    assert result.reason.startswith("tick cap")
    assert robot.log == ["start lift", "cancel lift: halted"]


class BlockingRobot:
    name = "blocking"

    def __init__(self) -> None:
        self.calls = 0

    def lift(self, dz: float, timeout: float | None = None) -> Execution:
        self.calls += 1
        return Execution(Telemetry.empty(), 1.5, None)


def test_a_blocking_driver_finishes_the_leaf_in_the_tick_that_starts_it():
    robot = BlockingRobot()
    result, _ = run_driver(LIFT_THEN_FINALIZE, robot)
    assert result.decision == Decision.FINALIZE and result.ticks == 1 and robot.calls == 1
    assert result.clock == pytest.approx(1.5)  # the call's time; the tick lasted longer than a period


def test_on_a_wall_clock_a_tick_waits_out_its_period_and_timeouts_use_wall_time():
    now = [100.0]
    slept: list[float] = []

    def sleep(dt: float) -> None:
        slept.append(dt)
        now[0] += dt

    clock = WallClock(0.05, now=lambda: now[0], sleep=sleep)
    robot = FakeStreamingRobot({"lift": 2})
    result, _ = run_driver(LIFT_THEN_FINALIZE, robot, clock=clock)
    assert result.decision == Decision.FINALIZE
    assert len(slept) == result.ticks and all(dt == pytest.approx(0.05) for dt in slept)
    assert result.clock == pytest.approx(0.05 * result.ticks)


def test_an_episode_on_a_real_time_driver_runs_on_that_drivers_clock():
    from bt_grasp.episode import episode_clock
    from bt_grasp.testing.fake_arm import SimulatedTime

    class RealRobot:
        realtime = True

        def __init__(self) -> None:
            self.clock = SimulatedTime()
            self.clock.t = 7.0  # the driver's own time does not start at the episode's 0

    robot = RealRobot()
    clock = episode_clock(robot)
    assert isinstance(clock, WallClock) and clock.now == 0.0
    clock.end_tick(0.0)
    assert robot.clock.t == pytest.approx(7.05) and clock.now == pytest.approx(0.05)
    assert not isinstance(episode_clock(FakeStreamingRobot({})), WallClock)


def test_a_wall_clock_is_not_a_logical_clock_and_only_logical_time_can_be_set():
    """The two clocks are siblings: a check for logical time (the verifier restores a saved time)
    never accepts a wall clock, and a wall clock's `now` cannot be assigned."""
    from bt_grasp.context import LogicalClock

    wall, logical = WallClock(0.05, now=lambda: 3.0, sleep=lambda dt: None), LogicalClock()
    assert not isinstance(wall, LogicalClock) and not isinstance(logical, WallClock)
    assert (wall.realtime, logical.realtime) == (True, False)
    logical.now = 1.5
    assert logical.now == 1.5
    with pytest.raises(AttributeError):
        wall.now = 1.5  # type: ignore[misc]
