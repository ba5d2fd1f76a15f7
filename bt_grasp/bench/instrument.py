"""Timing and ground-truth probes around a World, without touching the driver or the perceivers.

The benchmark needs two things the tree never sees: where wall time goes (physics, rendering,
perception, the tree itself) and what really happened (which body a located mask covers, whether
the gripper really held something). Both are taken by thin proxies placed between the tree and
the World's driver / perceiver / planning services, so the measured code is exactly the code a
normal `bt-grasp run` executes. Scoring may read simulator ground truth; the tree never does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bt_grasp.bench.aim import aim_of, mask_body, recording_plans
from bt_grasp.services import Services

# Driver calls that step physics or run IK / collision queries (rendering is subtracted out).
DRIVER_CALLS = ("reset", "observe", "grasp", "push", "lift", "place", "open_gripper", "feasible",
                "grasp_feasible")


@dataclass
class Timings:
    """Wall seconds by bucket; `render` is nested inside driver calls and subtracted from physics."""

    driver: float = 0.0
    render: float = 0.0
    perception: float = 0.0
    reset: float = 0.0

    def shares(self, total: float) -> dict[str, float]:
        physics = max(0.0, self.driver - self.render)
        tree = max(0.0, total - self.driver - self.perception)
        return {"physics": physics, "render": self.render, "perception": self.perception,
                "tree": tree, "reset": self.reset}


@dataclass
class Probe:
    """Everything recorded during one episode."""

    timings: Timings = field(default_factory=Timings)
    grasps: list[dict[str, Any]] = field(default_factory=list)  # one per driver.grasp call
    locates: list[dict[str, Any]] = field(default_factory=list)  # one per perceiver.locate call
    plans: list[dict[str, Any]] = field(default_factory=list)  # one per plan_grasps call (aim.py)


class DriverProxy:
    """Delegates everything to the driver; times primitive calls and keeps grasp ground truth."""

    def __init__(self, driver: Any, probe: Probe) -> None:
        object.__setattr__(self, "_driver", driver)
        object.__setattr__(self, "_probe", probe)
        camera = getattr(driver, "camera", None)
        if camera is not None and not getattr(camera, "_bench_timed", False):
            inner = camera.render

            def render(*args: Any, **kwargs: Any) -> Any:
                t = time.perf_counter()
                try:
                    return inner(*args, **kwargs)
                finally:
                    driver._bench_probe.timings.render += time.perf_counter() - t

            camera.render = render  # instance attribute: the class is untouched
            camera._bench_timed = True
        driver._bench_probe = probe  # the render wrapper reads the current episode's probe

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._driver, name)
        if name == "start" and callable(attr):
            return self._start
        if name not in DRIVER_CALLS or not callable(attr):
            return attr
        probe = self._probe

        def timed(*args: Any, **kwargs: Any) -> Any:
            out = _timed(probe, name, lambda: attr(*args, **kwargs))
            _record(probe, name, out, kwargs.get("pose", args[0] if args else None))
            return out

        return timed

    def _start(self, primitive: str, /, **kwargs: Any) -> Any:
        """A streaming driver's primitive: its polls are timed and its end recorded, as a call."""
        motion = _timed(self._probe, primitive, lambda: self._driver.start(primitive, **kwargs))
        return TimedMotion(motion, self._probe, kwargs.get("pose"))


class TimedMotion:
    """A running primitive seen by the probe: poll and cancel time counts as the driver's, and
    the Execution it ends with is recorded once (a halted grasp too: the arm moved)."""

    def __init__(self, motion: Any, probe: Probe, pose: Any = None) -> None:
        self._motion, self._probe, self._recorded = motion, probe, False
        self._pose = pose
        self.primitive = motion.primitive

    def _timed(self, call: Callable[[], Any]) -> Any:
        out = _timed(self._probe, self.primitive, call)
        if out is not None and not self._recorded:
            self._recorded = True
            _record(self._probe, self.primitive, out, self._pose)
        return out

    def poll(self) -> Any:
        return self._timed(self._motion.poll)

    def cancel(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed(lambda: self._motion.cancel(*args, **kwargs))

    def telemetry(self) -> Any:
        return self._motion.telemetry()

    @property
    def elapsed(self) -> float:
        return self._motion.elapsed


def _timed(probe: Probe, name: str, call: Callable[[], Any]) -> Any:
    """call(), its wall time counted as the driver's (and as the scene reset's for `reset`)."""
    t = time.perf_counter()
    try:
        return call()
    finally:
        dt = time.perf_counter() - t
        probe.timings.driver += dt
        if name == "reset":
            probe.timings.reset += dt


def _record(probe: Probe, name: str, out: Any, pose: Any = None) -> None:
    """One grasp call for scoring: the object the planner aimed it at (aim.py), the body nearest
    the grasp point and what the simulator says is held (ground truth)."""
    if name != "grasp":
        return
    info = dict(getattr(out, "info", {}) or {})
    fault = getattr(out, "fault", None)
    probe.grasps.append({"object": info.get("object"), "held": info.get("held"), "fault": fault,
                         "executed": not (fault or "").startswith("infeasible"),
                         **aim_of(probe.plans, pose)})


class PerceiverProxy:
    """Delegates to the perceiver; times survey/locate and scores each located mask against the
    simulator's instance annotation (scoring only: the tree receives the perceiver's answer)."""

    def __init__(self, perceiver: Any, probe: Probe) -> None:
        self._perceiver = perceiver
        self._probe = probe

    def __getattr__(self, name: str) -> Any:
        return getattr(self._perceiver, name)

    def survey(self, obs: Any) -> Any:
        t = time.perf_counter()
        try:
            return self._perceiver.survey(obs)
        finally:
            self._probe.timings.perception += time.perf_counter() - t

    def locate(self, obs: Any, text: str, scene: Any = None) -> Any:
        t = time.perf_counter()
        try:
            out = self._perceiver.locate(obs, text, scene)
        finally:
            self._probe.timings.perception += time.perf_counter() - t
        rec: dict[str, Any] = {"text": text, "found": out is not None, "body": None, "purity": 0.0,
                               "name": getattr(out, "name", None)}
        instance = (getattr(obs, "annotations", None) or {}).get("instance")
        if out is not None and instance is not None:
            rec["body"], rec["purity"] = mask_body(out.mask, np.asarray(instance))
            alts = [scene.by_id(i) for i in getattr(out, "alternative_ids", ())] if scene is not None else []
            rec["alt_bodies"] = [mask_body(a.mask, np.asarray(instance))[0] for a in alts
                                 if a is not None and getattr(a, "mask", None) is not None]
        self._probe.locates.append(rec)
        return out


def timed_services(services: Services, probe: Probe) -> Services:
    """A copy of the services with the perception-side planners timed into `perception`."""
    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                probe.timings.perception += time.perf_counter() - t
        return timed

    return replace(services, plan_grasps=recording_plans(wrap(services.plan_grasps), probe.plans),
                   plan_push=wrap(services.plan_push))
