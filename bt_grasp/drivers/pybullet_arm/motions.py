"""The arm's primitives run across ticks: `start()` returns a Motion that each poll advances by one
control period (a whole number of 1/240 s physics steps), and that `cancel()` stops at once.

How: a primitive's body (primitives.py) yields after every physics step; `_stepped` wraps it and
yields to the Motion once every `steps_per_period` steps. The blocking methods poll that same
Motion to its end, so a blocking call and a polled one run the same steps and record the same
telemetry. One motion runs at a time: starting a primitive (or resetting the world) while one is
still running cancels it first, with fault "halted".

Safe state. A motion ends early when it is cancelled (`cancel(fault)`, fault "halted" or
"timeout"), reaches its own deadline (`timeout=`, fault "timeout") or is stopped (`stop()`, fault
"stopped"). It is then left, without stepping the physics any further, as:
- the arm held where it is: the joint position targets are the joints' current positions;
- the fingers stopped where they are: if they are squeezing something (not closing, their position
  reference inside the current gap) the reference stays where it is, so a gripped object stays
  gripped with the force it has now; otherwise the reference becomes the current gap, so they
  neither close nor open any further. The finger command (`gap_cmd`) is set to that reference,
  so nothing advances it until the next primitive commands the gripper again.
The Execution has the telemetry recorded so far and the fault.

Faults: `driver_exception` is raised from `start()` (before anything moves; the leaf turns the
exception into a `fault` outcome); `never_finish` runs, holding still, until it is cancelled or
reaches its deadline (the timeout, else NEVER_FINISH_CAP_S).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pybullet as pb

from bt_grasp.drivers.base import Execution, Fault
from bt_grasp.drivers.capabilities import Motion
from bt_grasp.drivers.motion import HALTED, MotionHalted, SteppedMotion
from bt_grasp.drivers.pybullet_arm import scene
from bt_grasp.drivers.pybullet_arm.contact import CONTACT
from bt_grasp.drivers.pybullet_arm.control import Planned, Steps, _Abort

STREAMED = ("grasp", "lift", "place", "open_gripper", "push")
SQUEEZE_MARGIN_M = 0.001  # a finger reference this far inside the gap, not closing, is squeezing something
# Fingers closing faster than this share of their free speed are still travelling, not squeezing.
# Not "at rest": an object shifting in a firm grip moves the fingers too.
CLOSING_SHARE = 0.25


def steps_per_period(control_period_s: float) -> int:
    """Physics steps in one control period: the profile's period rounded to whole steps (at least 1)."""
    return max(1, round(float(control_period_s) / scene.TIMESTEP))


class MotionsMixin:
    """`start(primitive, **kwargs) -> Motion` for the arm (the Streaming protocol of drivers/motion.py)."""

    # Provided by the host class PyBulletArm (driver.py) and its other mixins.
    gap_cmd: float
    gap_ref: float
    _apply_fingers: Any
    launch_watch: Any
    _begin: Any
    _execution: Any
    _faulted: Any
    _hold_arm: Any
    _q: Any
    _rec: Any
    _stop: Any
    _t0: Any
    client: Any
    clock: Any
    faults: Any
    finger_j: Any
    name: Any
    robot: Any

    control_period: float
    steps_per_period: int

    def _init_motions(self, control_period_s: float) -> None:
        self.steps_per_period = steps_per_period(control_period_s)
        self.control_period = self.steps_per_period * scene.TIMESTEP
        self._active: Motion | None = None

    def start(self, primitive: str, /, **kwargs: Any) -> Motion:
        """Check and start `primitive` (kwargs = the blocking method's); nothing moves until the
        first poll. A refused call (infeasible) is a Motion that ends on its first poll."""
        if primitive not in STREAMED:
            raise AttributeError(f"driver {self.name!r} has no primitive {primitive!r} "
                                 f"(it runs {', '.join(STREAMED)})")
        self._cancel_active()
        timeout = kwargs.pop("timeout", None)
        planned = getattr(self, f"_prepare_{primitive}")(**kwargs)
        if isinstance(planned, Execution):
            return _ended(primitive, planned)
        faults = self.faults.take(primitive)
        if any(f.kind == "driver_exception" for f in faults):
            raise RuntimeError(f"injected driver exception in {primitive}")
        self._begin(timeout, planned.phase)
        self._primitive = primitive
        steps = self._stepped(planned, faults)
        next(steps)  # to its first yield: started, no physics step yet (so cancel works at once)
        motion = SteppedMotion(primitive, steps,
                               telemetry=lambda: self._faulted(self._rec.telemetry(), faults),
                               elapsed=lambda: self.clock - self._t0)
        self._active = motion
        return motion

    def _cancel_active(self) -> None:
        """One motion at a time: a motion still running is cancelled ("halted") before another starts."""
        active, self._active = getattr(self, "_active", None), None
        if active is not None:
            active.cancel(HALTED)

    def _stepped(self, planned: Planned, faults: list[Fault]) -> Generator[None, None, Execution]:
        """Run the body, yielding once per control period; on cancel, deadline or stop(), hold safe."""
        body: Steps = planned.body(faults)
        fault: str | None = None
        try:
            yield
            self._check_stop()
            n = 0
            for _ in body:
                n += 1
                if n == self.steps_per_period:
                    n = 0
                    yield
                    self._check_stop()
        except _Abort as exc:  # raised by _tick (deadline, stop()) or above
            fault = exc.fault
        except MotionHalted as exc:
            fault = exc.fault
        except Exception:  # a failing step still leaves the arm safe, then the error goes on
            try:
                self._hold_safe()
            except pb.error:  # the physics client itself is gone: nothing left to hold
                pass
            raise
        finally:
            body.close()
            self._active = None
        if fault is not None:
            self._hold_safe()
        return self._execution(fault, planned.info, faults)

    def _check_stop(self) -> None:
        """stop() called between two polls ends the motion before any further step."""
        if self._stop:
            raise _Abort("stopped")

    def _hold_safe(self) -> None:
        """The safe state of the module docstring: arm held at its current joints, fingers stopped
        at their current gap unless they are squeezing something (then the grip stays)."""
        q = self._q()
        self.q_cmd = q
        self._hold_arm(q)
        states = pb.getJointStates(self.robot, self.finger_j, physicsClientId=self.client)
        gap = float(sum(s[0] for s in states))
        # the gap's rate, not each finger's: a gripped pair can drift sideways together (soft pads)
        closing = sum(s[1] for s in states) / 2 < -CLOSING_SHARE * CONTACT.finger_speed_mps
        if closing or self.gap_ref >= gap - SQUEEZE_MARGIN_M:
            self.gap_ref = gap
        self.gap_cmd = self.gap_ref
        self._apply_fingers()


def _ended(primitive: str, execution: Execution) -> Motion:
    """A Motion that never moves: a refused call, whose Execution every poll and cancel returns."""
    def steps() -> Generator[None, None, Execution]:
        try:
            yield
        except MotionHalted:
            pass
        return execution

    gen = steps()
    next(gen)
    return SteppedMotion(primitive, gen, telemetry=lambda: execution.telemetry, elapsed=lambda: 0.0)
