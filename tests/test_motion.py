"""Motions: a stepping motion advances one control period per poll and stops when cancelled; a
driver without `start` still runs, its blocking call made on the first poll."""

from __future__ import annotations

import pytest

from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.motion import (
    BlockingMotion,
    MotionHalted,
    SteppedMotion,
    Streaming,
    run_to_end,
    start_motion,
)
from bt_grasp.watchdog.telemetry import Telemetry


def _stepper(periods: int, log: list[str]):
    def steps():
        done = 0
        try:
            for _ in range(periods):
                done += 1
                log.append("step")
                yield
        except MotionHalted as halt:
            log.append("stopped safely")
            return Execution(Telemetry.empty(), done * 0.1, halt.fault)
        return Execution(Telemetry.empty(), done * 0.1, None)
    return steps()


def _motion(periods: int, log: list[str]) -> SteppedMotion:
    return SteppedMotion("grasp", _stepper(periods, log), Telemetry.empty, lambda: len(log) * 0.1)


def test_a_stepped_motion_runs_one_period_per_poll_and_then_keeps_its_result():
    log: list[str] = []
    motion = _motion(3, log)
    assert [motion.poll() is None for _ in range(3)] == [True, True, True]
    assert log == ["step"] * 3
    end = motion.poll()
    assert end is not None and end.fault is None and end.duration == pytest.approx(0.3)
    assert motion.poll() is end and motion.cancel() is end


def test_cancelling_stops_the_motion_safely_with_the_reason_as_fault():
    log: list[str] = []
    motion = _motion(10, log)
    motion.poll()
    motion.poll()
    end = motion.cancel("timeout")
    assert end.fault == "timeout" and log == ["step", "step", "stopped safely"]
    assert motion.poll() is end


def test_a_motion_that_ignores_cancel_is_reported_not_left_running():
    def stubborn():
        while True:
            try:
                yield
            except MotionHalted:
                pass
    motion = SteppedMotion("push", stubborn(), Telemetry.empty, lambda: 0.0)
    motion.poll()
    with pytest.raises(RuntimeError, match="did not stop"):
        motion.cancel()


class _BlockingDriver:
    name = "blocking"

    def __init__(self) -> None:
        self.calls: list[float] = []

    def lift(self, dz: float, timeout: float | None = None) -> Execution:
        self.calls.append(dz)
        return Execution(Telemetry.empty(), 1.5, None)


def test_a_driver_without_start_runs_its_blocking_call_on_the_first_poll():
    driver = _BlockingDriver()
    motion = start_motion(driver, "lift", dz=0.1, timeout=None)
    assert isinstance(motion, BlockingMotion) and not isinstance(driver, Streaming)
    assert driver.calls == []
    end = run_to_end(motion)
    assert driver.calls == [0.1] and end.duration == 1.5 and motion.elapsed == 1.5


def test_cancelling_a_blocking_motion_before_its_poll_moves_nothing():
    driver = _BlockingDriver()
    motion = start_motion(driver, "lift", dz=0.1)
    assert motion.cancel().fault == "halted" and driver.calls == []


def test_an_unknown_primitive_names_the_driver():
    with pytest.raises(AttributeError, match="'blocking' has no primitive 'fly'"):
        start_motion(_BlockingDriver(), "fly")


def test_cancelling_a_stepped_motion_before_its_first_poll_moves_nothing():
    log: list[str] = []
    motion = _motion(3, log)
    end = motion.cancel()
    assert end.fault == "halted" and end.duration == 0.0 and log == []
