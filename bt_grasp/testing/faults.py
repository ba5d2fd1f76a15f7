"""Fault injection: a driver and a perceiver that fail on purpose, for testing what a run does
when the robot, its clock or its camera fails (docs/failures.md).

    from bt_grasp import api
    from bt_grasp.testing.faults import FakeArm, FaultDriver, FaultSpec
    robot = FaultDriver(FakeArm(), FaultSpec("poll", "raise"))     # or wrap your own driver
    result = api.run(tree, driver=robot, perceiver="fault")
    assert result.decision.value == "WAIT_CLARIFY" and "stop" in robot.calls

A FaultSpec names the moment and the kind of a fault:

- moments of the driver: factory (the plug-in factory raises), reset, observe, start (the
  primitive's start), poll, duration (the Execution a poll returns), clock (the motion's
  `elapsed`), now (a real-time driver's clock read: FakeArm(realtime=True)), halt (cancel), stop,
  close;
- moments of the perceiver: survey, locate;
- kinds: raise (RuntimeError), wrong_type (a value of the wrong type: '1.5 s', None, a list of
  None), non_finite (NaN or infinity), hang (the call never returns; `release()` lets it go).

`after` = n fails the n-th call at that moment (1: the first), with `repeat` every later one too. Everything else is passed to the
wrapped driver or perceiver. FakeArm and FakePerceiver (bt_grasp.testing.fake_arm) are a robot and a camera without physics
(motions take `periods` control periods and always succeed; one red mug is in view): enough for
what does not need physics, and fast.

As plug-ins (`--driver bt_grasp.testing.faults:fault_driver`, `--perception
bt_grasp.testing.faults:fault_perceiver`, or the same in a robot profile: FAULT_DRIVER and
FAULT_PERCEIVER; bt_grasp/plugins.py loads a `module:attr` name directly), the spec comes from the profile's `driver_options: {fault: "poll:raise", wrap: fake_arm}` or the
environment: BT_GRASP_DRIVER_FAULT="poll:raise[:n]" (wrapping the fake arm, or the driver plug-in
named by BT_GRASP_DRIVER_WRAP) and BT_GRASP_PERCEIVER_FAULT="locate:wrong_type[:n]" (wrapping the
fake perceiver, or the plug-in named by BT_GRASP_PERCEIVER_WRAP); BT_GRASP_FAULT_LOG names a file
the driver appends each call's moment to (to see from outside that `stop` was called).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from bt_grasp.drivers.base import HALTED, Execution, Observation
from bt_grasp.drivers.motion import start_motion
from bt_grasp.perception.types import Located, SceneGraph, SceneObject
from bt_grasp.testing.fake_arm import FakeArm, FakePerceiver, SimulatedTime
from bt_grasp.watchdog.telemetry import Telemetry

__all__ = ["FakeArm", "FakePerceiver", "SimulatedTime", "FaultDriver", "FaultPerceiver", "FaultSpec"]

FAULT_DRIVER = "bt_grasp.testing.faults:fault_driver"  # the plug-in names
FAULT_PERCEIVER = "bt_grasp.testing.faults:fault_perceiver"
DRIVER_MOMENTS = ("factory", "reset", "observe", "start", "poll", "duration", "clock", "now", "halt", "stop",
                  "close")
PERCEIVER_MOMENTS = ("survey", "locate")
KINDS = ("raise", "wrong_type", "non_finite", "hang")


@dataclass(frozen=True)
class FaultSpec:
    """Fail the `after`-th call at `moment` with a fault of `kind`."""

    moment: str
    kind: str = "raise"
    after: int = 1
    repeat: bool = False  # and every later call at that moment too

    def __post_init__(self) -> None:
        if self.moment not in DRIVER_MOMENTS + PERCEIVER_MOMENTS:
            raise ValueError(f"unknown fault moment {self.moment!r} (one of {', '.join(DRIVER_MOMENTS + PERCEIVER_MOMENTS)})")
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r} (one of {', '.join(KINDS)})")

    @classmethod
    def parse(cls, text: str) -> FaultSpec:
        """'poll:raise', 'locate:wrong_type:2' (the second call), 'locate:raise:1+' (every call)."""
        parts = text.strip().split(":")
        after = parts[2] if len(parts) > 2 else "1"
        return cls(parts[0], parts[1] if len(parts) > 1 else "raise", int(after.rstrip("+")), after.endswith("+"))


class Injector:
    """Counts calls per moment and says when the spec's one comes; holds hung calls."""

    def __init__(self, spec: FaultSpec | None, log: str | None = None) -> None:
        self.spec = spec
        self.counts: dict[str, int] = {}
        self.calls: list[str] = []
        self.released = threading.Event()
        self.log = log  # a file each call's moment is appended to (what a subprocess did)

    def due(self, moment: str) -> str | None:
        """The fault kind if this call at `moment` is to fail, else None; a `raise` or `hang`
        fault happens here."""
        self.calls.append(moment)
        if self.log:
            with open(self.log, "a", encoding="utf-8") as fh:
                fh.write(moment + "\n")
        self.counts[moment] = self.counts.get(moment, 0) + 1
        spec = self.spec
        if spec is None or spec.moment != moment or self.counts[moment] < spec.after or (
                self.counts[moment] > spec.after and not spec.repeat):
            return None
        if spec.kind == "raise":
            raise RuntimeError(f"injected fault: {moment} failed")
        if spec.kind == "hang":
            self.released.wait()  # never returns until release(): the run must not wait for it
            return None
        return spec.kind

    def release(self) -> None:
        """Let hung calls return (a test's clean-up)."""
        self.released.set()


def bad_value(kind: str, wrong: Any) -> Any:
    """The value a faulty call hands back: `wrong` (wrong_type) or infinity (non_finite)."""
    return wrong if kind == "wrong_type" else float("inf")


# -- the fault driver --------------------------------------------------------------------------------

class FaultMotion:
    """A motion of the wrapped driver that fails at poll, duration, clock or halt."""

    def __init__(self, inner: Any, faults: Injector) -> None:
        self.inner = inner
        self.primitive = getattr(inner, "primitive", "motion")
        self.faults = faults

    def poll(self) -> Execution | None:
        kind = self.faults.due("poll")
        if kind is not None:
            return bad_value(kind, "done")  # type: ignore[no-any-return]
        execution = self.inner.poll()
        if execution is not None:
            kind = self.faults.due("duration")
            if kind is not None:
                return Execution(execution.telemetry, bad_value(kind, "1.5 s"), execution.fault, execution.info)
        return execution  # type: ignore[no-any-return]

    def cancel(self, fault: str = HALTED) -> Execution:
        kind = self.faults.due("halt")
        execution = self.inner.cancel(fault)
        if kind is not None:
            return Execution(execution.telemetry, bad_value(kind, "1.5 s"), execution.fault, execution.info)
        return execution  # type: ignore[no-any-return]

    def telemetry(self) -> Telemetry:
        return self.inner.telemetry()  # type: ignore[no-any-return]

    @property
    def elapsed(self) -> float:
        kind = self.faults.due("clock")
        if kind is not None:
            return bad_value(kind, "1.5 s")  # type: ignore[no-any-return]
        return self.inner.elapsed  # type: ignore[no-any-return]


class FaultClock:
    """A real-time driver's clock whose `now` fails at the moment "now"."""

    def __init__(self, inner: Any, faults: Injector) -> None:
        self.inner, self.faults = inner, faults

    def now(self) -> float:
        kind = self.faults.due("now")
        return bad_value(kind, "1.5 s") if kind is not None else self.inner.now()  # type: ignore[no-any-return]

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


class FaultDriver:
    """Wraps a driver (a FakeArm by default) and fails as `spec` says; everything else is the
    wrapped driver's. Primitives always run through `start` (a blocking driver's calls become
    one-poll motions), so poll, clock and halt faults apply to any driver."""

    def __init__(self, inner: Any = None, spec: FaultSpec | None = None, log: str | None = None) -> None:
        self.inner: Any = FakeArm() if inner is None else inner
        self.faults = Injector(spec, log)
        self.name = f"fault({getattr(self.inner, 'name', type(self.inner).__name__)})"
        self.control_period = float(getattr(self.inner, "control_period", 0.05))
        self.realtime = bool(getattr(self.inner, "realtime", False))
        source = getattr(self.inner, "clock", None)
        if self.realtime and callable(getattr(source, "now", None)):
            self.clock = FaultClock(source, self.faults)

    @property
    def calls(self) -> list[str]:
        """Every call the runtime made, by moment, in order ('stop' when it stopped the robot)."""
        return self.faults.calls

    def release(self) -> None:
        self.faults.release()

    def __getattr__(self, name: str) -> Any:
        # only reached for what this class does not define: the wrapped driver's capabilities
        # (task, place_region, grasp_feasible, ...), so protocol checks see what it has
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def reset(self, episode: int = 0, seed: int = 0, **kwargs: Any) -> Observation:
        self.faults.due("reset")
        return self.inner.reset(episode=episode, seed=seed, **kwargs)  # type: ignore[no-any-return]

    def observe(self) -> Observation:
        kind = self.faults.due("observe")
        obs = self.inner.observe()
        if kind == "wrong_type":
            return None  # type: ignore[return-value]
        if kind == "non_finite":
            return Observation(obs.rgb, obs.depth, obs.K, np.full((4, 4), np.nan), obs.clock, obs.annotations)
        return obs  # type: ignore[no-any-return]

    def start(self, primitive: str, /, **kwargs: Any) -> FaultMotion:
        kind = self.faults.due("start")
        if kind is not None:
            return bad_value(kind, "started")  # type: ignore[no-any-return]
        return FaultMotion(start_motion(self.inner, primitive, **kwargs), self.faults)

    def stop(self) -> None:
        self.faults.due("stop")
        if callable(getattr(self.inner, "stop", None)):
            self.inner.stop()

    def close(self) -> None:
        self.faults.due("close")
        if callable(getattr(self.inner, "close", None)):
            self.inner.close()


class FaultPerceiver:
    """Wraps a perceiver (a FakePerceiver by default) and fails at survey or locate."""

    def __init__(self, inner: Any = None, spec: FaultSpec | None = None) -> None:
        self.inner = FakePerceiver() if inner is None else inner
        self.faults = Injector(spec)
        self.name = f"fault({getattr(self.inner, 'name', type(self.inner).__name__)})"

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def release(self) -> None:
        self.faults.release()

    def survey(self, obs: Observation) -> SceneGraph:
        kind = self.faults.due("survey")
        scene = self.inner.survey(obs)
        if kind == "wrong_type":
            return SceneGraph([None], [])  # type: ignore[list-item]
        if kind == "non_finite":
            return SceneGraph([SceneObject(1, "red mug", "", (float("nan"), 0.5), 1)], [])
        return scene  # type: ignore[no-any-return]

    def locate(self, obs: Observation, text: str, scene: SceneGraph | None) -> Located | None:
        kind = self.faults.due("locate")
        located = self.inner.locate(obs, text, scene)
        if kind == "wrong_type":
            return "red mug"  # type: ignore[return-value]
        if kind == "non_finite":
            mask = np.zeros(obs.depth.shape, bool)
            return Located(1, "red mug", mask, (0, 0, 1, 1), np.full((4, 3), np.inf))
        return located  # type: ignore[no-any-return]


# -- as plug-ins -------------------------------------------------------------------------------------

def _spec(text: str | None) -> FaultSpec | None:
    return FaultSpec.parse(text) if text else None


def fault_driver(profile: Any, **options: Any) -> FaultDriver:
    """The fault driver plug-in (FAULT_DRIVER): the profile's driver_options (fault, wrap) or the environment
    (BT_GRASP_DRIVER_FAULT, BT_GRASP_DRIVER_WRAP) say what fails and what is wrapped."""
    from bt_grasp.plugins import make_driver

    settings = getattr(profile, "driver_options", {}) or {}
    spec = _spec(settings.get("fault") or os.environ.get("BT_GRASP_DRIVER_FAULT"))
    if spec is not None and spec.moment == "factory":
        raise RuntimeError("injected fault: robot unreachable")
    wrap = settings.get("wrap") or os.environ.get("BT_GRASP_DRIVER_WRAP") or "fake_arm"
    # the plug-in's fake arm opens its gripper slowly, so DEMO_TREE's timeout halts that motion
    inner = FakeArm(slow={"open_gripper": 100}) if wrap == "fake_arm" else make_driver(profile, wrap, **options)
    return FaultDriver(inner, spec, log=os.environ.get("BT_GRASP_FAULT_LOG"))


def fault_perceiver(**options: Any) -> FaultPerceiver:
    """The fault perceiver plug-in (FAULT_PERCEIVER): BT_GRASP_PERCEIVER_FAULT says what fails, and
    BT_GRASP_PERCEIVER_WRAP which plug-in it wraps (default: the fake perceiver)."""
    from bt_grasp.plugins import make_perceiver

    wrap = os.environ.get("BT_GRASP_PERCEIVER_WRAP")
    inner = make_perceiver(wrap, **options) if wrap else FakePerceiver()
    return FaultPerceiver(inner, _spec(os.environ.get("BT_GRASP_PERCEIVER_FAULT")))


# -- a tree and a robot profile to run them with -------------------------------------------------------

# Perceives, lets a `timeout` halt a slow motion (FakeArm(slow={"open_gripper": 100})), then moves:
# every moment of the fault driver and perceiver is reached.
DEMO_TREE = """\
tree: fault_demo
root:
  selector:
    id: episode
    children:
      - sequence:
          id: main
          children:
            - survey_scene: {id: survey}
            - locate_object: {id: locate, target: "{goal.object}"}
            - force_success:
                id: halted_open
                child:
                  timeout:
                    id: deadline
                    seconds: 0.2
                    child:
                      open_gripper: {id: slow_open}
            - lift: {id: lift_1}
            - place: {id: place_1, target: basket}
            - finalize: {id: done, reason: placed}
      - wait_clarify: {id: give_up, reason: gave up}
"""


def profile_yaml(fault: str | None = None, wrap: str = "fake_arm", call_timeout_s: float | None = 0.5,
                 perception: str = FAULT_PERCEIVER) -> str:
    """A robot profile running the `fault` driver (wrapping `wrap`) with `fault` ('poll:raise'),
    each call limited to `call_timeout_s` wall seconds (None: the default limit)."""
    options = {"wrap": wrap, **({"fault": fault} if fault else {})}
    lines = ["name: fault_arm", f"driver: {FAULT_DRIVER}", f"perception: {perception}",
             *([f"call_timeout_s: {call_timeout_s}"] if call_timeout_s is not None else []),
             f"driver_options: {options}",
             "camera: {width: 32, height: 32, fov_deg: 50.0, near: 0.05, far: 2.0,",
             "  T_cam_base: [[0, -1, 0, 0.5], [-1, 0, 0, 0], [0, 0, -1, 0.85], [0, 0, 0, 1]]}"]
    return "\n".join(lines) + "\n"
