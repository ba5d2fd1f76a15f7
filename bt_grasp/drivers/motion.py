"""Motions that run across ticks: a primitive is started, polled once per tick, and can be cancelled.

A leaf starts a primitive with `start_motion(driver, "grasp", pose=..., ...)` and polls the Motion
it gets back on every tick: `poll()` advances the motion by at most one control period (the
simulators step their physics; a real robot is asked for its status) and returns the Execution
once the motion has ended. `cancel()` stops it safely at once (a parent preempted it, a deadline
passed) and returns what was done so far, with `fault` saying why it stopped.

A driver that can run primitives incrementally implements `Streaming.start` (drivers/capabilities.py).
Any other driver (a blocking robot API, a user's own driver) still works: `BlockingMotion` makes
its blocking call on the first poll, so the leaf finishes within one tick, as a py_trees leaf
that blocks would.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from bt_grasp.drivers.base import HALTED, TIMEOUT, Driver, Execution
from bt_grasp.drivers.capabilities import Motion, Streaming
from bt_grasp.watchdog.telemetry import Telemetry

# Primitive name -> the blocking Driver method that runs it to the end (same keyword arguments).
PRIMITIVE_METHODS: dict[str, str] = {
    "grasp": "grasp", "lift": "lift", "place": "place", "open_gripper": "open_gripper",
    "push": "push", "nav_to": "nav_to", "gaze_at": "gaze_at", "look": "look", "open": "open",
    "close_articulated": "close_articulated",
}

# HALTED: Execution.fault of a motion its tree preempted; TIMEOUT: of one stopped at its deadline.
# Motion and Streaming (the contracts) live in drivers/capabilities.py with the other optional
# driver protocols; they are re-exported here for the code that imports them from this module.
__all__ = ["HALTED", "PRIMITIVE_METHODS", "TIMEOUT", "BlockingMotion", "Motion", "MotionHalted",
           "SteppedMotion", "Streaming", "run_to_end", "start_motion"]


class MotionHalted(Exception):
    """Thrown into a stepping motion to stop it; `fault` becomes the Execution's fault."""

    def __init__(self, fault: str = HALTED) -> None:
        super().__init__(fault)
        self.fault = fault


class BlockingMotion:
    """A primitive of a driver without `start`: the blocking call runs on the first poll."""

    def __init__(self, primitive: str, call: Callable[[], Execution]) -> None:
        self.primitive = primitive
        self._call = call
        self._result: Execution | None = None

    def poll(self) -> Execution | None:
        if self._result is None:
            self._result = self._call()
        return self._result

    def cancel(self, fault: str = HALTED) -> Execution:
        if self._result is None:  # never started: nothing moved
            self._result = Execution(Telemetry.empty(), 0.0, fault)
        return self._result

    def telemetry(self) -> Telemetry:
        return self._result.telemetry if self._result is not None else Telemetry.empty()

    @property
    def elapsed(self) -> float:
        return self._result.duration if self._result is not None else 0.0


class SteppedMotion:
    """A motion written as a generator that yields once per control period and returns its
    Execution. Cancelling throws MotionHalted into it: the generator stops the robot safely and
    returns the Execution so far (with `exc.fault`), exactly as it does on its own deadline.

    `telemetry` and `elapsed` are read from the driver while the motion runs (callables), since
    only the driver knows what it has recorded.
    """

    def __init__(self, primitive: str, steps: Generator[None, None, Execution],
                 telemetry: Callable[[], Telemetry], elapsed: Callable[[], float]) -> None:
        self.primitive = primitive
        self._steps = steps
        self._telemetry = telemetry
        self._elapsed = elapsed
        self._result: Execution | None = None
        self._started = False

    def poll(self) -> Execution | None:
        if self._result is None:
            self._started = True
            try:
                next(self._steps)
            except StopIteration as stop:
                self._result = stop.value
        return self._result

    def cancel(self, fault: str = HALTED) -> Execution:
        if self._result is not None:
            return self._result
        if not self._started:  # the generator never ran: nothing was commanded, nothing moved
            self._steps.close()
            self._result = Execution(Telemetry.empty(), 0.0, fault)
            return self._result
        try:
            self._steps.throw(MotionHalted(fault))
        except StopIteration as stop:
            self._result = stop.value
        else:  # the generator went on moving after being told to stop: a driver bug
            self._steps.close()
            raise RuntimeError(f"{self.primitive} motion did not stop when cancelled")
        return self._result

    def telemetry(self) -> Telemetry:
        return self._result.telemetry if self._result is not None else self._telemetry()

    @property
    def elapsed(self) -> float:
        return self._result.duration if self._result is not None else self._elapsed()


def start_motion(driver: Driver | None, primitive: str, /, **kwargs: Any) -> Motion:
    """Start `primitive` on `driver`: incrementally when it is Streaming, else as one blocking call."""
    if isinstance(driver, Streaming):
        return driver.start(primitive, **kwargs)
    method = getattr(driver, PRIMITIVE_METHODS.get(primitive, primitive), None)
    if method is None:
        raise AttributeError(f"driver {getattr(driver, 'name', type(driver).__name__)!r} has no "
                             f"primitive {primitive!r}")
    return BlockingMotion(primitive, lambda: method(**kwargs))


def run_to_end(motion: Motion) -> Execution:
    """Poll until the motion ends (the blocking Driver methods are this over `start`)."""
    while (execution := motion.poll()) is None:
        pass
    return execution
