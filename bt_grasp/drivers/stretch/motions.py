"""Stretch primitives that run across ticks: started, polled once per control period, cancelled.

Every primitive is a generator (`_steps_<primitive>`) that commands the robot with stretch_body's
non-blocking calls (`move_to` / `move_by` / `translate_by` / `rotate_by`, then `push_command()`),
then yields once per control period; after each yield it reads the status, records one telemetry
Sample and moves on to its next phase when the current one is done. `start()` wraps it in a
`SteppedMotion`; the blocking Driver methods run the same generator to its end, so polled and
blocking runs give the same Execution.

Time: in simulation a poll advances the simulated clock by one control period (the physics steps);
on hardware a poll never sleeps - the tree's tick paces it in wall time, and the blocking methods
sleep one control period between polls.

Stopping: a deadline passed inside the primitive (its `timeout`) or a cancel from the tree
(`MotionHalted`, thrown in at a yield) both end in `stop()` - steppers held at their braking
point, base velocity zero, head and wrist held, gripper held unless it is squeezing - and an
Execution with the telemetry so far and the fault ("timeout" or the cancel's fault).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.motion import (
    PRIMITIVE_METHODS,
    TIMEOUT,
    BlockingMotion,
    Motion,
    MotionHalted,
    SteppedMotion,
    run_to_end,
)
from bt_grasp.drivers.stretch.options import GRIPPER, Clock, StretchKinematics, StretchOptions
from bt_grasp.watchdog.telemetry import Phase, Sample, Telemetry

T = TypeVar("T")
Steps = Generator[None, None, T]  # yields once per control period, returns T

DEFAULT_CONTROL_PERIOD_S = 0.05


class _Timeout(Exception):
    """A primitive ran past its deadline (the driver stops the robot and reports 'timeout')."""


@dataclass
class Run:
    """One running primitive's record: when it started, its deadline, its samples and info."""

    primitive: str
    t0: float
    deadline: float = math.inf
    samples: list[Sample] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def control_period_of(profile: Any) -> float:
    """Seconds one poll advances a simulated motion (the robot profile's control_period_s)."""
    return float(getattr(profile, "control_period_s", None) or DEFAULT_CONTROL_PERIOD_S)


class StretchMotions:
    """Mixin of StretchDriver: `start`, the blocking form over it, and the stepping helpers."""

    robot: Any
    opts: StretchOptions
    kin: StretchKinematics
    clock: Clock
    control_period: float
    _cmd_pct: float
    # provided by the other mixins / StretchDriver
    stop: Callable[[], None]
    _sample: Callable[..., Sample]
    _gripper: Callable[[], Any]
    _finish: Callable[..., Execution]

    # ------------------------------------------------------------------ start / blocking
    def start(self, primitive: str, /, **kwargs: Any) -> Motion:
        """Start `primitive` (grasp, lift, place, ...; kwargs = the blocking method's) and return
        its Motion. Nothing moves until the first poll. A primitive the driver has only in
        blocking form (added by a subclass or mixin) runs as one call on its first poll."""
        steps = getattr(self, f"_steps_{primitive}", None)
        if steps is None:
            method = getattr(self, PRIMITIVE_METHODS.get(primitive, primitive), None)
            if method is None:
                raise AttributeError(f"the Stretch driver has no primitive {primitive!r}")
            return BlockingMotion(primitive, lambda: method(**kwargs))
        run = Run(primitive, self.clock.now())
        guarded = self._guarded(run, steps(run, **kwargs))
        next(guarded)  # to its first yield, inside the guard: a cancel before any poll stops cleanly
        return SteppedMotion(primitive, guarded, lambda: Telemetry.from_samples(run.samples),
                             lambda: self.clock.now() - run.t0)

    def _blocking(self, primitive: str, **kwargs: Any) -> Execution:
        """The blocking Driver method: start, then poll to the end (wall-paced on hardware)."""
        motion = self.start(primitive, **kwargs)
        if self._simulated_time():
            return run_to_end(motion)
        while (execution := motion.poll()) is None:
            time.sleep(self.control_period)
        return execution

    def _drain(self, steps: Steps[T]) -> T:
        """Run stepping helpers to their end outside a primitive (reset's ready-pose motion)."""
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                return stop.value
            if not self._simulated_time():
                time.sleep(self.control_period)

    def _guarded(self, run: Run, body: Steps[Any]) -> Steps[Execution]:
        """The primitive's body under its deadline and cancel: either stops the robot, and the
        Execution keeps the telemetry so far. The body returns its fault (None when it went
        well) or an Execution of its own (a refusal, a dry run)."""
        try:
            yield  # start() primes to here
            result = yield from body
        except _Timeout as exc:
            self.stop()
            result, run.info["timeout_phase"] = TIMEOUT, str(exc)
        except MotionHalted as exc:
            self.stop()
            result = exc.fault
        except Exception:  # a driver or robot error mid-motion: stop what moves, then report it
            with contextlib.suppress(Exception):
                self.stop()
            raise
        if isinstance(result, Execution):
            return result
        return self._finish(run.primitive, Telemetry.from_samples(run.samples), run.t0, result, run.info)

    def _simulated_time(self) -> bool:
        return bool(getattr(self.clock, "simulated", False))

    @property
    def realtime(self) -> bool:
        """A real robot: its motions take wall time, so its episodes run on a wall clock."""
        return not self._simulated_time()

    def _deadline(self, timeout: float | None) -> float:
        return self.clock.now() + (timeout if timeout is not None else self.opts.primitive_timeout_s)

    # ------------------------------------------------------------------ stepping helpers
    def _wait(self, run: Run, phase: Phase, done: Callable[[], bool], max_s: float,
              min_s: float = 0.0) -> Steps[bool]:
        """Record one sample per control period until done() (after min_s) or max_s; False if
        max_s ran out. Raises _Timeout past the primitive's deadline."""
        start = self.clock.now()
        while True:
            run.samples.append(self._sample(run.t0, phase, run.samples[-1] if run.samples else None))
            now = self.clock.now()
            if now - start >= min_s and done():
                return True
            if now >= run.deadline:
                raise _Timeout(phase.name)
            if now - start >= max_s:
                return False
            yield
            if self._simulated_time():  # in simulation, a poll is one control period of physics
                now = self.clock.now()
                self.clock.sleep(min(self.control_period, max(1e-3, run.deadline - now)))

    def _move(self, run: Run, phase: Phase, lift: float | None = None, arm: float | None = None,
              base_dx: float | None = None, max_s: float = 15.0) -> Steps[bool]:
        """Queue lift/arm/base moves, push them together, record until they stop; True if arrived."""
        r = self.robot
        if lift is not None:
            r.lift.move_to(float(np.clip(lift, *self.kin.lift_range)))
        if arm is not None:
            r.arm.move_to(float(np.clip(arm, *self.kin.arm_range)))
        if base_dx is not None and abs(base_dx - float(r.base.status["x"])) > 1e-4:
            r.base.translate_by(base_dx - float(r.base.status["x"]))
        r.push_command()

        def stopped() -> bool:
            lm, am = r.lift.motor.status, r.arm.motor.status
            return not (lm["is_mg_moving"] or am["is_mg_moving"] or self._base_moving())

        yield from self._wait(run, phase, stopped, max_s, min_s=0.1)
        ok = True
        if lift is not None:
            ok = ok and abs(r.lift.status["pos"] - np.clip(lift, *self.kin.lift_range)) < 0.01
        if arm is not None:
            ok = ok and abs(r.arm.status["pos"] - np.clip(arm, *self.kin.arm_range)) < 0.01
        return ok

    def _base_moving(self) -> bool:
        b = self.robot.base
        return any(w.status.get("is_mg_moving", False) for w in (b.left_wheel, b.right_wheel))

    def _gripper_to(self, run: Run, pct: float, phase: Phase, max_s: float = 4.0) -> Steps[bool]:
        """Command the gripper and record until it reaches the command or stalls (0.3 s still)."""
        g = self._gripper()
        self._cmd_pct = float(np.clip(pct, -100.0, getattr(g, "pct_max_open", 50.0)))
        self.robot.end_of_arm.move_to(GRIPPER, self._cmd_pct)
        still_since: list[float | None] = [None]

        def settled() -> bool:
            st = g.status
            if abs(st["pos_pct"] - self._cmd_pct) < 1.5:
                return True
            if st["stalled"]:
                now = self.clock.now()
                since = now if still_since[0] is None else still_since[0]
                still_since[0] = since
                return now - since >= 0.3
            still_since[0] = None
            return False

        return (yield from self._wait(run, phase, settled, max_s, min_s=0.2))

    def _back_off(self) -> None:
        """Lower the squeeze after a grasp so the Dynamixel does not sit at stall current and overheat
        (stretch_body's sentry does a blunter version of this at stall_overload)."""
        g = self._gripper()
        st = g.status
        if st["stalled"] and abs(st["effort"]) > 0 and self._cmd_pct < st["pos_pct"]:
            self._cmd_pct = float(st["pos_pct"] - self.opts.hold_squeeze_pct)
            self.robot.end_of_arm.move_to(GRIPPER, self._cmd_pct)

    def _dry_steps(self, run: Run, phase: Phase) -> Steps[Execution]:
        """Dry run: read telemetry for a short window, command nothing."""
        t0 = self.clock.now()
        yield from self._wait(run, phase, lambda: False, self.opts.dry_run_window_s)
        return Execution(Telemetry.from_samples(run.samples), self.clock.now() - t0,
                         "dry_run: no motion commanded", {"primitive": run.primitive})

    def _dry(self, primitive: str, phase: Phase) -> Execution:
        """The dry run of a primitive written as one blocking call (a subclass's or mixin's)."""
        return self._drain(self._dry_steps(Run(primitive, self.clock.now()), phase))
