"""The PyBullet arm's primitives run across ticks: one control period per poll, the same result as a
blocking call, and a cancel that stops the arm and the fingers at once and leaves them usable."""

from __future__ import annotations

import numpy as np
import pybullet as pb
import pytest

pytest.importorskip("airo_models")

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.base import Fault, GraspPose  # noqa: E402
from bt_grasp.drivers.capabilities import Streaming  # noqa: E402
from bt_grasp.drivers.motion import run_to_end  # noqa: E402
from bt_grasp.drivers.pybullet_arm import scene  # noqa: E402
from bt_grasp.drivers.pybullet_arm.driver import DOWN, PyBulletArm  # noqa: E402
from bt_grasp.drivers.pybullet_arm.gripper import STROKE_M  # noqa: E402
from bt_grasp.drivers.pybullet_arm.motions import steps_per_period  # noqa: E402
from bt_grasp.errors import UserError  # noqa: E402
from bt_grasp.profile import resolve_profile_path, validate_profile  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402

BOX = ObjectSpec("red box", "box", "red", "medium", "box", (0.05, 0.05, 0.06), (0.9, 0.1, 0.1, 1), 0.15)
CENTRE = np.array([0.5, 0.0, 0.03])
STILL_MPS = 0.005  # tcp speed counted as stopped


ARM_IMAGE_SIZE = 64  # the arm fixture's camera (tests/conftest.py)


def _scene(arm: PyBulletArm, objects=(BOX,)) -> None:
    arm.clear_faults()
    arm.reset_scene(list(objects), [tuple(CENTRE)] * len(objects), target="red box")


def _start_grasp(arm: PyBulletArm, **kw):
    return arm.start("grasp", pose=GraspPose(CENTRE, DOWN, 0.08), width=0.08, force=60.0, **kw)


def _poll_until_phase(motion, phase: Phase, extra_polls: int = 0) -> int:
    """Poll until the latest telemetry sample is in `phase`, then `extra_polls` more; polls made."""
    n = 0
    while True:
        assert motion.poll() is None, f"the motion ended before reaching {phase.name}"
        n += 1
        tel = motion.telemetry()
        if len(tel) and tel.phase[-1] == phase:
            break
    for _ in range(extra_polls):
        assert motion.poll() is None
        n += 1
    return n


def _tcp_speed(arm: PyBulletArm) -> float:
    st = pb.getLinkState(arm.robot, arm.tcp_link, computeLinkVelocity=1, computeForwardKinematics=True,
                         physicsClientId=arm.client)
    return float(np.linalg.norm(st[6]))


def _physics(arm: PyBulletArm, steps: int) -> None:
    for _ in range(steps):
        pb.stepSimulation(physicsClientId=arm.client)


def test_the_arm_streams_with_the_profiles_control_period(arm):
    assert isinstance(arm, Streaming)
    assert arm.steps_per_period == 12 and arm.control_period == pytest.approx(0.05)
    assert steps_per_period(0.051) == 12 and steps_per_period(0.0001) == 1  # whole physics steps


def test_a_non_positive_control_period_is_refused_at_its_line(tmp_path):
    text = resolve_profile_path("ur5e_robotiq").read_text().replace("control_period_s: 0.05", "control_period_s: 0")
    bad = tmp_path / "arm.yaml"
    bad.write_text(text)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if s.startswith("control_period_s"))
    with pytest.raises(UserError) as err:
        validate_profile(bad)
    assert f":{line}:" in str(err.value) and "control_period_s" in str(err.value)


def test_polling_a_grasp_gives_exactly_the_blocking_result(arm):
    _scene(arm)
    blocking = arm.grasp(GraspPose(CENTRE, DOWN, 0.08), 0.08, 60.0)
    _scene(arm)
    motion = _start_grasp(arm)
    clocks = [arm.clock]
    while (polled := motion.poll()) is None:
        clocks.append(arm.clock)
    clocks.append(arm.clock)
    assert blocking.fault is None and blocking.info["held"] == "red box"
    assert polled.fault == blocking.fault and polled.info == blocking.info
    assert polled.duration == blocking.duration
    a, b = blocking.telemetry.to_dict(), polled.telemetry.to_dict()
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)
    steps = np.round(np.diff(clocks) / scene.TIMESTEP).astype(int)
    assert set(steps[:-1]) == {arm.steps_per_period} and steps[-1] <= arm.steps_per_period
    assert len(steps) > 20  # it really ran across many polls
    assert motion.poll() is polled and motion.cancel() is polled  # an ended motion keeps its result


@pytest.mark.parametrize("phase,extra", [(Phase.APPROACH, 0), (Phase.APPROACH, 4), (Phase.CLOSE, 1),
                                         (Phase.CLOSE, 4), (Phase.MICRO_LIFT, 2)])
def test_cancel_stops_the_arm_within_one_control_period_and_the_arm_stays_usable(arm, phase, extra):
    _scene(arm)
    motion = _start_grasp(arm)
    _poll_until_phase(motion, phase, extra)
    clock, samples = arm.clock, len(motion.telemetry())
    ex = motion.cancel()
    assert ex.fault == "halted" and arm.clock == clock  # no physics step after cancel()
    assert len(ex.telemetry) == samples and ex.duration == pytest.approx(motion.elapsed)
    gap_cmd, gap_ref = arm.gap_cmd, arm.gap_ref
    _physics(arm, arm.steps_per_period)
    assert _tcp_speed(arm) < STILL_MPS
    assert (arm.gap_cmd, arm.gap_ref) == (gap_cmd, gap_ref) and gap_cmd == gap_ref  # command frozen
    opened = arm.open_gripper()
    assert opened.fault is None and arm._finger_state()[0] > STROKE_M - 0.002
    _scene(arm)
    again = arm.grasp(GraspPose(CENTRE, DOWN, 0.08), 0.08, 60.0)
    assert again.fault is None and again.info["held"] == "red box"


def test_fingers_cancelled_while_closing_on_nothing_close_no_further(arm):
    _scene(arm, objects=())
    motion = _start_grasp(arm)
    _poll_until_phase(motion, Phase.CLOSE, 2)
    assert motion.poll() is None
    gap = arm._finger_state()[0]
    assert 0.01 < gap < 0.075  # caught half-way through the close
    motion.cancel()
    lifted = arm.lift(0.05)  # a primitive that does not command the gripper
    assert lifted.fault is None
    assert arm._finger_state()[0] == pytest.approx(gap, abs=0.002)


def test_a_grip_cancelled_during_a_lift_keeps_the_object(arm):
    _scene(arm)
    assert arm.grasp(GraspPose(CENTRE, DOWN, 0.08), 0.08, 60.0).info["held"] == "red box"
    motion = arm.start("lift", dz=0.1)
    for _ in range(3):
        assert motion.poll() is None
    effort = arm._finger_state()[1]
    assert motion.cancel().fault == "halted"
    _physics(arm, arm.steps_per_period)
    assert _tcp_speed(arm) < STILL_MPS
    assert arm.lift(0.05).fault is None
    assert arm.held_object() == "red box" and arm._finger_state()[1] == pytest.approx(effort, abs=0.05)


def test_cancel_before_the_first_poll_moves_nothing(arm):
    _scene(arm)
    clock = arm.clock
    motion = _start_grasp(arm)
    ex = motion.cancel("timeout")
    assert ex.fault == "timeout" and len(ex.telemetry) == 0 and ex.duration == 0.0 and arm.clock == clock


def test_the_deadline_and_stop_end_a_polled_motion(arm):
    _scene(arm)
    motion = _start_grasp(arm, timeout=0.5)
    ex = run_to_end(motion)
    assert ex.fault == "timeout" and ex.duration == pytest.approx(0.5, abs=scene.TIMESTEP)
    _scene(arm)
    motion = _start_grasp(arm)
    assert motion.poll() is None
    clock = arm.clock
    arm.stop()
    stopped = motion.poll()
    assert stopped is not None and stopped.fault == "stopped" and arm.clock == clock
    motion = _start_grasp(arm)
    arm.stop()  # before the first poll
    stopped = motion.poll()
    assert stopped.fault == "stopped" and len(stopped.telemetry) == 0 and arm.clock == clock


def test_starting_a_primitive_cancels_the_one_still_running(arm):
    _scene(arm)
    first = _start_grasp(arm)
    for _ in range(3):
        first.poll()
    second = arm.start("open_gripper")
    assert first.poll().fault == "halted"
    assert run_to_end(second).fault is None


def test_never_finish_runs_until_cancelled(arm):
    _scene(arm)
    arm.inject(Fault("never_finish", primitive="lift"))
    motion = arm.start("lift", dz=0.05)
    for _ in range(40):  # 2 s: far beyond a 5 cm lift
        assert motion.poll() is None
    ex = motion.cancel()
    assert ex.fault == "halted" and ex.duration == pytest.approx(40 * arm.control_period)


def test_driver_exception_is_raised_from_start_before_anything_moves(arm):
    _scene(arm)
    arm.inject(Fault("driver_exception", primitive="grasp"))
    clock = arm.clock
    with pytest.raises(RuntimeError, match="injected driver exception"):
        _start_grasp(arm)
    assert arm.clock == clock
    assert run_to_end(_start_grasp(arm)).fault is None  # a `once` fault: consumed by that call


def test_a_refused_primitive_is_a_motion_that_ends_on_its_first_poll(arm):
    _scene(arm)
    clock = arm.clock
    motion = arm.start("push", start=np.array([0.5, 0.0]), end=np.array([0.5, 0.1]), height=0.03)
    ex = motion.poll()
    assert ex is not None and ex.fault.startswith("infeasible: collision") and arm.clock == clock
    assert motion.cancel() is ex


def test_an_unknown_primitive_is_refused(arm):
    with pytest.raises(AttributeError, match="no primitive 'nav_to'"):
        arm.start("nav_to", place="kitchen")


def test_a_step_that_fails_leaves_the_arm_held_and_the_error_raised(arm, monkeypatch):
    _scene(arm)
    motion = _start_grasp(arm)
    for _ in range(3):
        assert motion.poll() is None
    calls = []

    def failing_tick() -> None:
        calls.append(1)
        raise ValueError("sensor read failed")

    monkeypatch.setattr(arm, "_tick", failing_tick)
    with pytest.raises(ValueError, match="sensor read failed"):
        motion.poll()
    monkeypatch.undo()
    assert np.array_equal(arm.q_cmd, arm._q()) and arm.gap_cmd == arm.gap_ref
    _physics(arm, arm.steps_per_period)
    assert _tcp_speed(arm) < STILL_MPS
    assert arm.open_gripper().fault is None
