"""A revised instruction interrupts the running motion: the reactive guard (`listen`, first child of
a `sequence` without memory) hears the user at the tick it speaks, and the motion is halted then.

A fake streaming mobile robot stands in for the Stretch: its nav_to runs a given number of control
periods, and the simulated user's clock is the robot's time, so the user speaks mid-motion.
"""

from __future__ import annotations

import json

import pytest
from helpers import tree

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.motion import MotionHalted, SteppedMotion, run_to_end
from bt_grasp.mobile.user import Revision, SimulatedUser
from bt_grasp.outcomes import Decision
from bt_grasp.runner import Runner
from bt_grasp.tick_budget import episode_limits
from bt_grasp.watchdog.telemetry import Telemetry

PERIOD = 0.05
# Why a parent halted a running motion: a `sequence` without memory says "halted", a reactive
# composite "preempted"; either way not "timeout".
PREEMPTED = {"halted", "preempted"}


class FakeMobileRobot:
    """nav_to runs `periods` control periods; `t` is the robot's (and the user's) time."""

    name = "fake_mobile"
    control_period = PERIOD

    def __init__(self, periods: int) -> None:
        self.periods = periods
        self.user: SimulatedUser | None = None
        self.t = 0.0
        self.log: list[str] = []

    def start(self, primitive: str, /, **kwargs) -> SteppedMotion:
        self.log.append(f"start {primitive} at {self.t:.2f}")
        t0 = self.t

        def steps():
            try:
                for _ in range(self.periods):
                    self.t = round(self.t + PERIOD, 6)
                    yield
            except MotionHalted as halt:
                self.log.append(f"cancel {primitive} at {self.t:.2f}: {halt.fault}")
                return Execution(Telemetry.empty(), self.t - t0, halt.fault)
            return Execution(Telemetry.empty(), self.t - t0, None)

        return SteppedMotion(primitive, steps(), Telemetry.empty, lambda: self.t - t0)

    def nav_to(self, place, timeout: float | None = None) -> Execution:
        return run_to_end(self.start("nav_to", place=place, timeout=timeout))

    def gaze_at(self, point, timeout: float | None = None) -> Execution:  # MobileBase has both
        return run_to_end(self.start("gaze_at", point=point, timeout=timeout))


def _red_then_blue(after_reports: int, delay_s: float, clock) -> SimulatedUser:
    """A user asking for the red can who asks for the blue can instead `delay_s` seconds (on
    `clock`) after the robot's `after_reports`-th report."""
    return SimulatedUser("Bring me the red can", frozenset({"small red can"}),
                         Revision(after_reports, "Bring me the blue can", frozenset({"small blue can"}),
                                  delay_s=delay_s),
                         clock=clock)

GUARDED_DRIVE = """
    tree: guarded_drive
    budgets: {max_ticks: 1000}
    root:
      selector:
        children:
          - retry:
              attempts: 2
              child:
                sequence:
                  id: attempt
                  memory: false
                  children:
                    - listen: {id: guard}
                    - sequence:
                        children:
                          - nav_to: {id: go, receptacle: large table}
                          - label_is: {key: "{goal.object}", label: blue can}
                          - finalize: {reason: "arrived for the revised request"}
          - wait_clarify: {reason: "gave up"}
"""


def _run(robot: FakeMobileRobot, trace: str, goal: str = "red can"):
    spec = tree(GUARDED_DRIVE)
    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec),
                     driver=robot, blackboard=Blackboard({"goal.object": goal, "goal.text": f"Bring me the {goal}"}))
    return Runner(spec, ctx, trace_path=trace).run(), ctx


def test_a_revision_while_driving_halts_the_drive_at_the_tick_it_is_heard(tmp_path) -> None:
    robot = FakeMobileRobot(periods=40)  # a 2 s drive; the user speaks 0.5 s into it
    robot.user = user = _red_then_blue(after_reports=0, delay_s=0.5, clock=lambda: robot.t)
    trace = tmp_path / "t.jsonl"
    result, ctx = _run(robot, str(trace))
    assert result.decision == Decision.FINALIZE and result.reason == "arrived for the revised request"
    assert ctx.blackboard.get("goal.object") == "blue can" and ctx.blackboard.get("goal.revisions") == 1
    start, cancel, again = robot.log
    assert start == "start nav_to at 0.00" and again == "start nav_to at 0.50"
    assert cancel.startswith("cancel nav_to at 0.50: ") and cancel.split(": ")[1] in PREEMPTED
    halted, arrived = result.events
    assert halted.node == "go" and halted.metadata["halted"] in PREEMPTED and halted.exec_status.value == "FAIL"
    assert halted.metadata["duration"] == pytest.approx(0.5)  # stopped when the user spoke, not at the end
    assert arrived.metadata["outcome"] == "arrived"
    ticks = [r for r in map(json.loads, trace.read_text().splitlines()) if r["type"] == "tick"]
    heard = [r for r in ticks if ["guard", "FAILURE"] in r["visited"]]
    assert len(heard) == 1
    [event] = heard[0]["events"]  # the halted drive is logged in the very tick the guard heard the user
    assert event["node"] == "go" and event["metadata"]["halted"] in PREEMPTED
    before = [r for r in ticks if r["tick"] < heard[0]["tick"]]
    assert all(["go", "RUNNING"] in r["visited"] for r in before)  # it was moving until then
    assert user.revised_at == pytest.approx(0.5)


def test_without_a_revision_the_guard_lets_the_drive_run_to_its_end(tmp_path) -> None:
    robot = FakeMobileRobot(periods=40)
    robot.user = SimulatedUser("Bring me the blue can", frozenset({"small blue can"}))
    result, _ = _run(robot, str(tmp_path / "t.jsonl"), goal="blue can")
    assert result.decision == Decision.FINALIZE
    assert robot.log == ["start nav_to at 0.00"]
    [event] = result.events
    assert event.metadata["outcome"] == "arrived" and "halted" not in event.metadata


def test_the_user_speaks_its_revision_after_the_delay_on_its_clock_and_once() -> None:
    now = [10.0]
    user = _red_then_blue(after_reports=0, delay_s=2.0, clock=lambda: now[0])
    assert user.poll() is None  # the delay counts from the start (the user was created at 10.0)
    now[0] = 11.9
    assert user.poll() is None and user.goal == "Bring me the red can"
    now[0] = 12.3
    assert user.poll() == "Bring me the blue can" and user.poll() is None
    assert user.revised_at == pytest.approx(12.0) and user.targets == frozenset({"small blue can"})


def test_the_user_revises_on_time_even_when_nobody_listens() -> None:
    now = [0.0]
    user = _red_then_blue(after_reports=0, delay_s=3.0, clock=lambda: now[0])
    now[0] = 7.5
    user.speak_if_due()  # what a harness asks at the end of a run of a tree without `listen`
    assert user.goal == "Bring me the blue can" and user.revised_at == pytest.approx(3.0)


def test_a_delayed_revision_after_a_report_counts_from_that_report() -> None:
    now = [0.0]
    user = _red_then_blue(after_reports=1, delay_s=1.0, clock=lambda: now[0])
    now[0] = 5.0
    assert user.poll() is None
    user.report_seen([])
    now[0] = 5.5
    assert user.poll() is None
    now[0] = 6.0
    assert user.poll() == "Bring me the blue can" and user.revised_at == pytest.approx(6.0)
