"""The seam checks (bt_grasp.seam) refuse values of the wrong type or not finite, in one line, and
accept what the drivers and perceivers are meant to return; the call limiter (bt_grasp.call_limit)
bounds a call's wall time, hands back its value or exception, and can be cancelled."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from bt_grasp import seam
from bt_grasp.call_limit import CallLimiter, NotResponding, call_limit
from bt_grasp.drivers.base import Execution
from bt_grasp.perception.types import SceneGraph, SceneObject
from bt_grasp.testing.faults import FakeArm, FakePerceiver, FaultSpec
from bt_grasp.watchdog.telemetry import Telemetry


@pytest.mark.parametrize("value", ["1.5 s", None, True, [1.0], float("nan"), float("inf"), -0.1])
def test_a_time_that_is_not_finite_seconds_is_refused_in_one_line(value) -> None:
    """Text, None, bools, lists, NaN, infinity and negative times are no durations."""
    with pytest.raises(seam.SeamFault) as err:
        seam.seconds(value, "lift elapsed")
    assert "\n" not in str(err.value) and str(err.value).startswith("lift elapsed ")


@pytest.mark.parametrize("value", [0, 0.05, np.float32(2.5), np.int64(3)])
def test_numbers_of_seconds_pass(value) -> None:
    assert seam.seconds(value, "t") == float(value)


def test_an_execution_needs_finite_seconds_text_fault_and_telemetry() -> None:
    good = Execution(Telemetry.empty(), 0.5, None)
    assert seam.execution(good, "lift") is good
    for bad in ("done", Execution(Telemetry.empty(), float("nan")), Execution(Telemetry.empty(), 1.0, 7),
                Execution([], 1.0)):  # type: ignore[arg-type]
        with pytest.raises(seam.SeamFault):
            seam.execution(bad, "lift")


def test_a_frame_needs_a_finite_camera_pose_and_intrinsics() -> None:
    obs = FakeArm().observe()
    assert seam.observation(obs) is obs
    obs.T_cam_base = np.full((4, 4), np.inf)
    with pytest.raises(seam.SeamFault, match="T_cam_base holds NaN"):
        seam.observation(obs)
    with pytest.raises(seam.SeamFault, match="not an Observation"):
        seam.observation(None)


def test_a_scene_of_none_or_nan_points_is_refused() -> None:
    """The malformed scene that once crashed the trace writer is a fault at the seam instead."""
    obs = FakeArm().observe()
    assert seam.scene(FakePerceiver().survey(obs))
    with pytest.raises(seam.SeamFault, match="object 0 is None"):
        seam.scene(SceneGraph([None], []))  # type: ignore[list-item]
    with pytest.raises(seam.SeamFault, match="point2d"):
        seam.scene(SceneGraph([SceneObject(1, "mug", "", (float("nan"), 0.5), 1)], []))


def test_a_located_object_needs_finite_points_or_is_none() -> None:
    obs = FakeArm().observe()
    perceiver = FakePerceiver()
    found = perceiver.locate(obs, "red mug", None)
    assert seam.located(found) is found and seam.located(None) is None
    with pytest.raises(seam.SeamFault, match="not a Located"):
        seam.located("red mug")
    found.points_base = np.array([[np.inf, 0, 0]])
    with pytest.raises(seam.SeamFault, match="points_base"):
        seam.located(found)


def test_a_limited_call_returns_its_value_and_raises_its_exception() -> None:
    limiter = CallLimiter()
    assert limiter.call(lambda: 42, 1.0, "answer") == 42
    with pytest.raises(ZeroDivisionError):
        limiter.call(lambda: 1 / 0, 1.0, "divide")


def test_a_call_past_its_limit_is_abandoned_and_the_next_runs_on_a_fresh_worker() -> None:
    limiter = CallLimiter()
    gate = threading.Event()
    start = time.monotonic()
    with pytest.raises(NotResponding, match="driver not responding: poll gave no answer within 0.2 s"):
        limiter.call(gate.wait, 0.2, "poll")
    assert time.monotonic() - start < 2.0
    assert limiter.call(lambda: threading.current_thread().name, 1.0, "next") == "bt-grasp-driver-call"
    gate.set()


def test_a_waiting_call_can_be_cancelled_from_another_thread() -> None:
    limiter = CallLimiter()
    gate = threading.Event()
    threading.Timer(0.1, lambda: limiter.cancel("the client went away")).start()
    with pytest.raises(NotResponding, match="cancelled: the client went away"):
        limiter.call(gate.wait, 30.0, "lift poll")
    gate.set()
    assert not limiter.busy and not limiter.cancel("nothing runs")


def test_the_call_limit_comes_from_the_profile_or_max_ticks_with_a_floor() -> None:
    class Profile:
        call_timeout_s = None
        control_period_s = 0.1

    assert call_limit(Profile(), 1) == 30.0  # the floor
    assert call_limit(Profile(), 600) == pytest.approx(60.0)  # 600 periods of 0.1 s
    Profile.call_timeout_s = 0.5
    assert call_limit(Profile(), 600) == 0.5


def test_fault_specs_parse_and_refuse_unknown_moments() -> None:
    assert FaultSpec.parse("locate:raise:2+") == FaultSpec("locate", "raise", 2, True)
    with pytest.raises(ValueError, match="unknown fault moment"):
        FaultSpec.parse("teleport:raise")


def test_a_thread_bound_driver_is_called_on_the_callers_thread() -> None:
    """A driver whose resources belong to its thread (the MuJoCo arm's EGL context) declares
    thread_bound: its calls run inline, so without a wall-clock limit."""
    from bt_grasp.call_limit import limiter_for

    class Bound:
        thread_bound = True

    class Free:
        pass

    here = threading.current_thread().name
    assert limiter_for(Bound()).call(lambda: threading.current_thread().name, 1.0, "observe") == here
    assert limiter_for(Free()).call(lambda: threading.current_thread().name, 1.0, "observe") != here
