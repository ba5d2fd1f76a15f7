"""Every fault around the tree ends in a recorded decision (bt_grasp.testing.faults through the
Python API): a driver failing at each moment (reset, observe, start, poll, the Execution's
duration, the motion's clock, a real-time clock, halt, stop, close) in each way (raising, a
value of the wrong type, a non-finite value, never returning), a perceiver failing at survey
or locate, node code, observers and callbacks that raise. Each run: a decision, a valid trace
whose last line holds it (no NaN or Infinity in it), no traceback, and the driver stopped when
a call faulted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bt_grasp import api
from bt_grasp.observers import RunObserver
from bt_grasp.outcomes import Decision
from bt_grasp.testing.faults import (
    DEMO_TREE,
    FAULT_DRIVER,
    FAULT_PERCEIVER,
    FakeArm,
    FakePerceiver,
    FaultDriver,
    FaultPerceiver,
    FaultSpec,
    profile_yaml,
)
from bt_grasp.trace import read_trace

KINDS = ("raise", "wrong_type", "non_finite", "hang")
VALUE_MOMENTS = ("observe", "start", "poll", "duration", "clock", "halt")  # a value comes back
DRIVER_CASES = [(m, k) for m in VALUE_MOMENTS for k in KINDS] + [("reset", "raise"), ("reset", "hang")]
PERCEIVER_CASES = [(m, k) for m in ("survey", "locate") for k in KINDS]


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("profile") / "fault_arm.yaml"
    path.write_text(profile_yaml(call_timeout_s=0.3))
    return str(path)


def _strict_json(line: str) -> dict:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} in a trace line")
    return json.loads(line, parse_constant=refuse)


def check_recorded(result, trace: Path, capsys) -> dict:
    """The run decided, its trace is valid JSON whose last line is the decision, no traceback."""
    assert result.decision in (Decision.FINALIZE, Decision.WAIT_CLARIFY) and result.reason
    lines = [_strict_json(line) for line in trace.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "final"
    assert lines[-1]["decision"] == result.decision.value and lines[-1]["reason"] == result.reason
    read_trace(trace)  # the project's own reader accepts it
    assert "Traceback" not in capsys.readouterr().err
    return lines[-1]


def fired(robot, spec: FaultSpec) -> bool:
    return robot.calls.count(spec.moment) >= spec.after


def run(profile, robot, perceiver, trace, **kwargs):
    return api.run(api.from_yaml(DEMO_TREE), robot=profile, driver=robot, perceiver=perceiver,
                   trace=str(trace), **kwargs)


def test_without_faults_the_demo_tree_reaches_every_moment(profile, tmp_path, capsys) -> None:
    """The fault-free run finalizes and passes every moment a fault is injected at."""
    robot = FaultDriver(FakeArm(slow={"open_gripper": 100}))
    perceiver = FaultPerceiver()
    result = run(profile, robot, perceiver, tmp_path / "t.jsonl")
    check_recorded(result, tmp_path / "t.jsonl", capsys)
    assert result.decision is Decision.FINALIZE
    assert set(VALUE_MOMENTS + ("reset",)) <= set(robot.calls)
    assert {"survey", "locate"} <= set(perceiver.faults.calls)
    assert "stop" not in robot.calls  # nothing faulted: the robot is not stopped behind the tree's back


@pytest.mark.parametrize(("moment", "kind"), DRIVER_CASES)
def test_a_driver_fault_ends_in_a_recorded_decision(profile, tmp_path, capsys, moment, kind) -> None:
    spec = FaultSpec(moment, kind)
    robot = FaultDriver(FakeArm(slow={"open_gripper": 100}), spec)
    try:
        result = run(profile, robot, FakePerceiver(), tmp_path / "t.jsonl")
    finally:
        robot.release()
    assert fired(robot, spec)
    check_recorded(result, tmp_path / "t.jsonl", capsys)
    if moment == "reset":
        assert result.reason.startswith("setup failed: ") and result.exit_code == 3
    assert "stop" in robot.calls[robot.calls.index(moment):]
    if kind == "hang" and moment in ("observe", "start", "poll", "clock", "duration"):
        assert result.decision is Decision.WAIT_CLARIFY and "driver not responding" in result.reason


@pytest.mark.parametrize(("moment", "kind"), PERCEIVER_CASES)
def test_a_perception_fault_is_the_calls_fault_outcome(profile, tmp_path, capsys, moment, kind) -> None:
    """A perceiver that raises or hands back malformed objects makes its leaf's outcome `fault`
    with the reason in `{leaf}.error`; one that hangs ends the run as not responding."""
    spec = FaultSpec(moment, kind)
    robot = FaultDriver(FakeArm(slow={"open_gripper": 100}))
    perceiver = FaultPerceiver(spec=spec)
    try:
        result = run(profile, robot, perceiver, tmp_path / "t.jsonl")
    finally:
        perceiver.release()
    check_recorded(result, tmp_path / "t.jsonl", capsys)
    assert result.decision is Decision.WAIT_CLARIFY and "stop" in robot.calls
    if kind == "hang":
        assert "driver not responding" in result.reason
        return
    leaf = "survey" if moment == "survey" else "locate"
    writes = {}
    for rec in read_trace(tmp_path / "t.jsonl").ticks:
        writes.update(rec["blackboard"])
    outcome_key = "scene.outcome" if moment == "survey" else "target.outcome"
    assert writes[outcome_key] == "fault" and writes[f"{leaf}.error"]
    assert result.reason == "gave up"  # the tree's own route for a failed look


@pytest.mark.parametrize("kind", ["raise", "wrong_type", "non_finite"])
def test_a_real_time_clock_that_fails_ends_the_run_naming_the_node(profile, tmp_path, capsys, kind) -> None:
    """A real robot's clock read that raises, or reads '1.5 s' or infinity, is the run's fault:
    WAIT_CLARIFY 'fault in <node>: ...' after halting and stopping. (A clock read is not a
    driver call: it has no wall-clock limit, docs/failures.md.)"""
    spec = FaultSpec("now", kind, after=12)
    robot = FaultDriver(FakeArm(realtime=True, slow={"open_gripper": 100}), spec)
    result = run(profile, robot, FakePerceiver(), tmp_path / "t.jsonl")
    check_recorded(result, tmp_path / "t.jsonl", capsys)
    assert result.decision is Decision.WAIT_CLARIFY and result.reason.startswith("fault in ")
    assert "driver clock" in result.reason or "now failed" in result.reason
    assert "stop" in robot.calls


def test_an_on_tick_callback_that_raises_ends_the_run_with_the_callback_named(profile, tmp_path, capsys) -> None:
    def breaks(tick) -> None:
        if tick.tick == 5:  # the slow open_gripper is running: it is halted first
            raise ValueError("callback broke")

    robot = FaultDriver(FakeArm(slow={"open_gripper": 100}))
    result = run(profile, robot, FakePerceiver(), tmp_path / "t.jsonl", on_tick=breaks)
    check_recorded(result, tmp_path / "t.jsonl", capsys)
    assert result.reason == "fault in callback test_an_on_tick_callback_that_raises_ends_the_run_with_the_" \
                            "callback_named.<locals>.breaks: callback broke"
    assert robot.calls[-3:] == ["halt", "clock", "stop"]  # the running open halted, then stop()


class Failing(RunObserver):
    def __init__(self, where: str) -> None:
        self.where = where

    def started(self, header, ctx) -> None:
        if self.where == "started":
            raise OSError("observer could not start")

    def ticked(self, tick) -> None:
        if self.where == "ticked":
            raise OSError("observer could not write")

    def finished(self, final, result) -> None:
        if self.where == "finished":
            raise OSError("observer could not finish")


@pytest.mark.parametrize("where", ["started", "ticked"])
def test_an_observer_that_raises_ends_the_run_and_the_trace_keeps_its_final_line(profile, tmp_path, capsys,
                                                                                  where) -> None:
    robot = FaultDriver(FakeArm(slow={"open_gripper": 100}))
    result = run(profile, robot, FakePerceiver(), tmp_path / "t.jsonl", observers=[Failing(where)])
    final = check_recorded(result, tmp_path / "t.jsonl", capsys)
    assert final["reason"].startswith("fault in observer Failing: observer could")
    assert robot.calls[-1] == "stop"


def test_an_observer_failing_at_the_decision_is_one_warning_line(profile, tmp_path, capsys) -> None:
    robot = FaultDriver(FakeArm(slow={"open_gripper": 100}))
    result = run(profile, robot, FakePerceiver(), tmp_path / "t.jsonl", observers=[Failing("finished")])
    assert result.decision is Decision.FINALIZE
    err = capsys.readouterr().err
    assert err == "bt-grasp: warning: Failing could not record the decision: OSError: observer could not finish\n"


def test_node_code_that_raises_is_named_in_the_decision(tmp_path, capsys) -> None:
    """A bug in a node outside any driver call: WAIT_CLARIFY 'fault in <node id>: ...', the
    running motion halted first, the driver stopped."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    tree = api.from_yaml("""
tree: t
nodes: ["fakes:Explodes"]
root:
  parallel:
    policy: success_on_all
    children:
      - open_gripper: {id: opening}
      - explodes: {id: bad_node, after: 2}
""")
    robot = FaultDriver(FakeArm(slow={"open_gripper": 100}))
    result = api.run(tree, driver=robot, perceiver=FakePerceiver(), trace=str(tmp_path / "t.jsonl"))
    check_recorded(result, tmp_path / "t.jsonl", capsys)
    assert result.reason == "fault in bad_node: node code failed"
    assert robot.calls[-3:] == ["halt", "clock", "stop"]  # the running motion halted, then stop()


def test_stop_and_close_failing_after_a_fault_are_warnings(profile, tmp_path, capsys) -> None:
    """A fault ends the run; stop() then raising is one warning line; the decision stands."""
    robot = FaultDriver(FakeArm(slow={"open_gripper": 100}), FaultSpec("stop", "raise"))
    result = run(profile, robot, FakePerceiver(), tmp_path / "t.jsonl",
                 on_tick=lambda tick: (_ for _ in ()).throw(RuntimeError("boom")) if tick.tick == 2 else None)
    assert result.reason.startswith("fault in callback") and "stop" in robot.calls
    err = capsys.readouterr().err
    assert err == "bt-grasp: warning: the driver did not stop: RuntimeError: injected fault: stop failed\n"


@pytest.mark.parametrize("kind", ["raise", "hang"])
def test_a_driver_plug_in_failing_to_close_is_one_warning_after_the_decision(tmp_path, capsys, kind) -> None:
    """The `fault` plug-in by name: api.run made the driver, so it closes it; close() raising or
    hanging past its limit is one warning line, the decision stands."""
    profile = tmp_path / "p.yaml"
    profile.write_text(profile_yaml(f"close:{kind}", call_timeout_s=0.3))
    result = api.run(api.from_yaml(DEMO_TREE), robot=str(profile), driver=FAULT_DRIVER, perceiver=FAULT_PERCEIVER,
                     trace=str(tmp_path / "t.jsonl"))
    assert result.decision is Decision.FINALIZE
    err = capsys.readouterr().err
    assert err.startswith("bt-grasp: warning: the robot did not close cleanly: ") and err.count("\n") == 1
    assert _strict_json((tmp_path / "t.jsonl").read_text().splitlines()[-1])["decision"] == "FINALIZE"


def test_a_driver_factory_that_raises_is_a_setup_decision(tmp_path, capsys) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(profile_yaml("factory:raise"))
    result = api.run(api.from_yaml(DEMO_TREE), robot=str(profile), driver=FAULT_DRIVER, perceiver=FAULT_PERCEIVER,
                     trace=str(tmp_path / "t.jsonl"))
    final = check_recorded(result, tmp_path / "t.jsonl", capsys)
    assert final["reason"] == "setup failed: RuntimeError: injected fault: robot unreachable"
    assert result.exit_code == 3
