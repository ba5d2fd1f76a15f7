"""Record labelled grasp telemetry on a simulated driver, inducing every Watchdog outcome.

This is labelling infrastructure, not policy:
- the grasp pose comes from the simulator's *true* object pose (`driver.object_pose(name)`), not
  from perception, because we want the outcome to be decided by the induced fault;
- the ground-truth label comes from the simulator's state (contacts, poses, masses, friction)
  observed during and after the attempt -- never from the classifier.

Induced outcomes (an *intent*; the stored label is the ground truth, which may differ):
  SUCCESS  no fault, grip force 30-90 % of the gripper maximum
  (all)    the grasp point gets a Gaussian xy error (sigma 4 mm); half the scenes have one or two
           distractor objects 9-18 cm from the target
  EMPTY    `remove_target_on_close` (the object vanishes while the fingers close) or
           `grasp_offset` 6-9 cm sideways (across the closing axis: the fingers close beside it)
  SLIP     `friction` (object lateral friction 0.001-0.02) and a mass of 0.3-2 kg; three in four
           grasped shallow (finger pads overlap the object's top 5-12 mm) so the 15 mm micro-lift
           pulls the fingers off it, one in four grasped normally -- then the object slides down
           between the pads while they stay clamped, which finger telemetry cannot see; only the
           wrist load (telemetry `load`) shows that the arm does not carry it
  WEAK     low grip force (8-22 % of the maximum) on a 0.15-0.6 kg object
  STALL    `block_lift` (the arm stops after 0-4 mm of the 15 mm micro-lift), `block_fingers` (the
           fingers jam part-way, between the opening and the object's width) or `never_finish`
           (the fingers stop moving at the start of the close) with a timeout that ends it
  TIMEOUT  a time budget of 30-85 % of the nominal grasp duration

Ground truth, decided in this order from simulator facts (see `ground_truth`):
  The Watchdog judges the *physical* grasp, so "held" means any object (usually the target; with
  a grasp offset it can be a neighbour). Whether the held object is the target is stored as
  `truth.target_held` -- that is the semantic verifier's question, not the Watchdog's.
  1. STALL    the sim saw a motion that did not progress: the fingers, commanded to close, moved
              < 2 mm over >= 0.5 s of CLOSE, or came to rest >= 3 mm open for the last 0.3 s of
              CLOSE..SETTLE, without an object between them; or the lift phases ran for
              at least their nominal 0.3 s and the tool centre point rose < 5 mm of the commanded 15 mm.
  2. TIMEOUT  the driver ended the primitive on its time budget (Execution.fault == "timeout").
  3. Held at the end of the grasp (`held_object()` is not None after the HOLD phase):
       SUCCESS  still held after a further 5 cm lift and `hold_s` (1 s) of simulated waiting, the
                grip safety factor SF = mu * sum(finger normal forces) / (m g) >= `sf_min` (2.0),
                mu = finger friction * object friction (Bullet multiplies them), and the mean pad
                normal force per finger >= `weak_grip_frac` (0.25) * the gripper's maximum force
       WEAK     otherwise: lost during the transport lift, or a low safety factor, or gripped below
                the firm-hold force. The last clause mirrors the label's definition ("held, but
                effort below the hold threshold") but is measured at the contacts by the physics
                engine, with a constant fixed here, not by the motor reading or the classifier's
                (calibrated) threshold.
  4. Not held at the end of the grasp:
       SLIP     an object touched both fingers, with the gap >= 3 mm (so it was between them, not
                touching their outsides), for >= 0.1 s during CLOSE..MICRO_LIFT (acquired)
       EMPTY    none did (nothing was between the fingers)

Sensor model: the driver's clean telemetry gets Gaussian noise on aperture, effort, velocity,
height and wrist load, then a reading latency (each reading reports the state `latency_s` earlier), with the
magnitudes in the profile's WatchdogThresholds (`aperture_noise_m`, ...).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Fault, GraspPose
from bt_grasp.outcomes import Label
from bt_grasp.watchdog.dataset import INDEX, Trace, save_trace
from bt_grasp.watchdog.telemetry import Phase, Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds

INTENTS: tuple[Label, ...] = (Label.SUCCESS, Label.EMPTY, Label.SLIP, Label.WEAK, Label.STALL, Label.TIMEOUT)
MIN_HELD_GAP_M = 0.003  # a finger gap below this cannot have an object between the pads
NOMINAL_GRASP_S = 2.8  # measured: approach ~1.6 s, close ~0.4, settle 0.3, micro-lift 0.3, hold 0.2
G = 9.81


@dataclass
class Scenario:
    """One planned attempt: which outcome we try to induce and how."""

    intent: Label
    object_index: int
    xy: tuple[float, float]
    yaw: float
    force_frac: float
    fault: Fault | None = None
    timeout: float | None = None
    extra_mass: float | None = None
    pad_overlap_m: float | None = None  # grasp so the fingertips sit this far below the object's top
    pose_error_m: list[float] = field(default_factory=lambda: [0.0, 0.0])  # xy error of the grasp point
    distractors: list[tuple[int, tuple[float, float]]] = field(default_factory=list)


@dataclass
class SensorModel:
    """Noise and latency added to clean simulator telemetry (values from WatchdogThresholds)."""

    aperture_noise_m: float
    effort_noise: float
    height_noise_m: float
    velocity_noise: float
    latency_s: float
    stroke_m: float = 0.085
    load_noise_n: float = 0.0

    @classmethod
    def from_thresholds(cls, th: WatchdogThresholds, stroke_m: float, enabled: bool = True) -> SensorModel:
        if not enabled:
            return cls(0.0, 0.0, 0.0, 0.0, 0.0, stroke_m)
        return cls(th.aperture_noise_m, th.effort_noise, th.height_noise_m, th.velocity_noise, th.latency_s,
                   stroke_m, th.load_noise_n)

    def as_dict(self) -> dict[str, float]:
        return {"aperture_noise_m": self.aperture_noise_m, "effort_noise": self.effort_noise,
                "height_noise_m": self.height_noise_m, "velocity_noise": self.velocity_noise,
                "latency_s": self.latency_s, "load_noise_n": self.load_noise_n}

    def apply(self, tel: Telemetry, rng: np.random.Generator) -> Telemetry:
        n = len(tel)
        if n == 0:
            return tel
        d = {k: np.array(v, copy=True) for k, v in tel.to_dict().items()}
        d["aperture_m"] = np.clip(d["aperture_m"] + rng.normal(0, self.aperture_noise_m, n), 0.0, None)
        d["aperture_norm"] = np.clip(d["aperture_m"] / self.stroke_m, 0.0, 1.0)
        d["effort"] = np.clip(d["effort"] + rng.normal(0, self.effort_noise, n), 0.0, None)
        d["velocity"] = d["velocity"] + rng.normal(0, self.velocity_noise, n)
        d["ee_height"] = d["ee_height"] + rng.normal(0, self.height_noise_m, n)
        if self.load_noise_n > 0:  # drawn last, so the other columns' noise matches older recordings
            d["load"] = d["load"] + rng.normal(0, self.load_noise_n, n)
        if self.latency_s > 0:
            src = np.clip(np.searchsorted(d["t"], d["t"] - self.latency_s, side="right") - 1, 0, n - 1)
            for k in ("aperture_m", "aperture_norm", "effort", "velocity", "ee_height", "load", "stalled",
                      "overload"):
                d[k] = d[k][src]  # commands and phase are the controller's own: not delayed
        return Telemetry(**d)


def plan(n: int, rng: np.random.Generator, n_objects: int) -> list[Scenario]:
    """n scenarios, intents cycled evenly (so every label is represented), parameters seeded."""
    out = []
    for i in range(n):
        intent = INTENTS[i % len(INTENTS)]
        sc = Scenario(intent=intent, object_index=int(rng.integers(n_objects)),
                      xy=(0.5 + rng.uniform(-0.08, 0.08), rng.uniform(-0.1, 0.1)), yaw=rng.uniform(-math.pi, math.pi),
                      force_frac=rng.uniform(0.3, 0.9), pose_error_m=rng.normal(0.0, 0.004, 2).tolist())
        if rng.random() < 0.5:  # a distractor or two near the target, for realism of contacts
            for _ in range(int(rng.integers(1, 3))):
                ang = rng.uniform(0, 2 * math.pi)
                r = rng.uniform(0.09, 0.18)
                sc.distractors.append((int(rng.integers(n_objects)),
                                       (sc.xy[0] + r * math.cos(ang), sc.xy[1] + r * math.sin(ang))))
        if intent is Label.EMPTY:
            if rng.random() < 0.5:
                sc.fault = Fault("remove_target_on_close", {}, primitive="grasp")
            else:
                sc.fault = Fault("grasp_offset", {"offset_m": rng.uniform(0.06, 0.09), "side": 1}, primitive="grasp")
        elif intent is Label.SLIP:
            sc.fault = Fault("friction", {"value": rng.uniform(0.001, 0.02)}, primitive="grasp")
            sc.extra_mass = rng.uniform(0.3, 2.0)
            if rng.random() < 0.75:  # a quarter are deep grasps: the slip is invisible to the fingers
                sc.pad_overlap_m = rng.uniform(0.005, 0.012)
        elif intent is Label.WEAK:
            sc.force_frac = rng.uniform(0.08, 0.22)
            sc.fault = Fault("mass", {"value": rng.uniform(0.15, 0.6)}, primitive="grasp")
        elif intent is Label.STALL:
            r = rng.random()
            if r < 0.4:
                sc.fault = Fault("block_lift", {"after_m": rng.uniform(0.0, 0.004)}, primitive="grasp")
            elif r < 0.7:  # where between the object and the opening: record_one turns it into at_norm
                sc.fault = Fault("block_fingers", {"at_frac": rng.uniform(0.3, 0.7)}, primitive="grasp")
            else:
                sc.fault = Fault("never_finish", {}, primitive="grasp")
                sc.timeout = 1.6 + rng.uniform(1.0, 2.0)
        elif intent is Label.TIMEOUT:
            sc.timeout = NOMINAL_GRASP_S * rng.uniform(0.3, 0.85)
        out.append(sc)
    return out


# ----------------------------------------------------------------------------------------------
# simulator observation (PyBullet-specific; only the recorder and tests use it)


class SimObserver:
    """Watches the simulator every physics tick of a primitive: finger/object contacts, gap, tcp z.

    It wraps the PyBullet driver's per-step hook (`_tick`) for the duration of one primitive.
    That is the simulator's ground truth, read for labelling only.
    """

    def __init__(self, driver: Any) -> None:
        self.d = driver
        self.rows: list[tuple[float, int, bool, float, float]] = []  # clock, phase, both-contact, gap, tcp z
        self._orig = None

    def __enter__(self) -> SimObserver:
        import pybullet as pb

        d = self.d
        orig = d._tick

        def tick() -> None:
            try:
                orig()
            finally:
                touching = [{c[2] for c in pb.getContactPoints(bodyA=d.robot, linkIndexA=j, physicsClientId=d.client)}
                            for j in d.finger_j]
                both = bool(set.intersection(*touching) & set(d.bodies))  # one object between both fingers
                gap = sum(s[0] for s in pb.getJointStates(d.robot, d.finger_j, physicsClientId=d.client))
                z = float(d.tcp_pose()[0][2])
                self.rows.append((d.clock, int(d._phase), bool(both), float(gap), z))

        self._orig = orig
        d._tick = tick
        return self

    def __exit__(self, *exc: Any) -> None:
        self.d.__dict__.pop("_tick", None)

    def facts(self, commanded_lift_m: float = 0.015, nominal_lift_s: float = 0.3) -> dict[str, Any]:
        if not self.rows:
            return {"ticks": 0}
        arr = np.array([(c, p, b, g, z) for c, p, b, g, z in self.rows], dtype=float)
        clock, ph, both, gap, z = arr.T
        dt = np.diff(clock, prepend=clock[0])
        acq_phases = (ph >= Phase.CLOSE) & (ph <= Phase.MICRO_LIFT)
        # "between the fingers": touching both while the gap stays open (an object touching the
        # outsides of both fingers while they close fully is not held between them)
        contact_s = float(np.sum(dt[acq_phases & (both > 0) & (gap >= MIN_HELD_GAP_M)]))
        close = ph == Phase.CLOSE
        finger_stalled = False
        if close.any():
            c_clock = clock[close]
            c_gap = gap[close]
            dur = float(c_clock[-1] - c_clock[0])
            finger_stalled = bool(dur >= 0.5 and (c_gap.max() - c_gap.min()) < 0.002
                                  and not (both[close] > 0).any())
        cs = (ph == Phase.CLOSE) | (ph == Phase.SETTLE)
        if cs.any() and not finger_stalled:  # jammed part-way (block_fingers): at rest, open, nothing between
            last = cs & (clock >= clock[cs][-1] - 0.3)
            finger_stalled = bool(clock[cs][-1] - clock[cs][0] >= 0.3 and gap[last].min() >= MIN_HELD_GAP_M
                                  and (gap[last].max() - gap[last].min()) < 0.002 and not (both[cs] > 0).any())
        lift_rise = None
        lift_s = 0.0
        lifting = ph >= Phase.MICRO_LIFT
        if lifting.any():
            z_before = z[ph <= Phase.SETTLE][-1] if (ph <= Phase.SETTLE).any() else z[0]
            lift_rise = float(z[lifting].max() - z_before)
            lift_s = float(clock[lifting][-1] - clock[lifting][0])
        # a lift cut short by the time budget is not a stall: it must have had its nominal time
        lift_stalled = bool(lift_rise is not None and lift_rise < 0.005 and lift_s >= nominal_lift_s)
        return {"ticks": len(self.rows), "contact_s": contact_s, "finger_stalled": finger_stalled,
                "lift_rise_m": lift_rise, "lift_s": lift_s, "lift_stalled": lift_stalled,
                "commanded_lift_m": commanded_lift_m}


def grip_safety_factor(driver: Any, body: int) -> tuple[float, float] | None:
    """(mu * sum of finger normal forces / (m g), mean normal force per finger in N) from the
    simulator's contacts; None if not touching."""
    import pybullet as pb

    from bt_grasp.drivers.pybullet_arm.gripper import FINGER_FRICTION

    c = driver.client
    if body not in driver.bodies:
        return None
    normal = 0.0
    for j in driver.finger_j:
        normal += sum(p[9] for p in pb.getContactPoints(driver.robot, body, j, -1, physicsClientId=c))
    info = pb.getDynamicsInfo(body, -1, physicsClientId=c)
    mass, mu_obj = float(info[0]), float(info[1])
    if mass <= 0:
        return None
    return float(FINGER_FRICTION * mu_obj * normal / (mass * G)), normal / len(driver.finger_j)


def ground_truth(exec_fault: str | None, facts: dict[str, Any], held_after_grasp: bool,
                 held_final: bool, sf: float | None, grip_frac: float | None, sf_min: float = 2.0,
                 weak_grip_frac: float = 0.25) -> tuple[Label, str]:
    """The label from simulator facts, in the order documented at the top of this module."""
    if facts.get("finger_stalled"):
        return Label.STALL, "fingers commanded to close did not move (no object contact)"
    if facts.get("lift_stalled"):
        return Label.STALL, f"micro-lift rose {1000 * facts['lift_rise_m']:.1f} mm of 15 mm"
    if exec_fault == "timeout":
        return Label.TIMEOUT, "driver ended the grasp on its time budget"
    if held_after_grasp:
        if not held_final:
            return Label.WEAK, "held after the grasp but lost during the transport lift"
        if sf is None or sf < sf_min:
            return Label.WEAK, f"held, grip safety factor {sf if sf is not None else float('nan'):.2f} < {sf_min}"
        if grip_frac is None or grip_frac < weak_grip_frac:
            return Label.WEAK, f"held, pad force {grip_frac or 0:.2f} of max < {weak_grip_frac}"
        return Label.SUCCESS, f"held after the transport lift and wait; safety factor {sf:.1f}, pad force " \
                              f"{grip_frac:.2f} of max"
    if facts.get("contact_s", 0.0) >= 0.1:
        return Label.SLIP, f"an object touched both fingers for {facts['contact_s']:.2f} s, then lost"
    return Label.EMPTY, "no object ever between both fingers"


# ----------------------------------------------------------------------------------------------


def _catalogue() -> list[Any]:
    from bt_grasp.drivers.pybullet_arm import scene

    return [s for s in scene.local_catalogue() if s.shape in ("box", "cylinder", "sphere") and scene.fits_gripper(s)]


def _grasp_pose(spec: Any, pos: np.ndarray, orn: np.ndarray,
                pad_overlap_m: float | None = None) -> tuple[GraspPose, float]:
    """Top-down grasp at the object's true centre, closing across its narrower horizontal width."""
    import pybullet as pb

    from bt_grasp.drivers.pybullet_arm import scene

    wx, wy, wz = scene.nominal_widths(spec)
    yaw = pb.getEulerFromQuaternion(list(orn))[2]
    if wy < wx:
        yaw += math.pi / 2
    width = min(wx, wy)
    top = float(pos[2]) + wz / 2
    z = max(float(pos[2]), top - 0.03)
    if pad_overlap_m is not None:  # shallow grasp: fingertips pad_overlap_m below the top
        from bt_grasp.drivers.pybullet_arm.gripper import TCP_FROM_TIP_M
        z = top - pad_overlap_m + TCP_FROM_TIP_M
    q = np.array(pb.getQuaternionFromEuler([math.pi, 0.0, -yaw]))
    # gripper x (closing axis) for euler [pi, 0, -yaw] is (cos yaw, sin yaw, 0) up to sign
    return GraspPose(position=np.array([pos[0], pos[1], z]), orientation=q, width=width), width


def record_one(driver: Any, sc: Scenario, rng: np.random.Generator, sensor: SensorModel,
               catalogue: list[Any], hold_s: float = 1.0, sf_min: float = 2.0) -> tuple[Telemetry, Label, dict[str, Any]] | None:
    """One attempt: build the scene, grasp with the induced fault, observe, label. None if skipped."""
    import pybullet as pb

    spec = catalogue[sc.object_index]
    objs = [spec]
    from bt_grasp.drivers.pybullet_arm import scene
    from bt_grasp.drivers.pybullet_arm.gripper import STROKE_M

    positions = [(sc.xy[0], sc.xy[1], 0.5 * scene.nominal_widths(spec)[2] + 0.002)]
    orients = [tuple(pb.getQuaternionFromEuler([0, 0, sc.yaw]))]
    used = {spec.name}

    for k, xy in sc.distractors:
        ds = catalogue[k]
        if ds.name in used:
            continue
        used.add(ds.name)
        objs.append(ds)
        positions.append((xy[0], xy[1], 0.5 * scene.nominal_widths(ds)[2] + 0.002))
        orients.append((0, 0, 0, 1))
    driver.reset_scene(objs, positions, orients, target=spec.name, settle_s=0.4)
    pose = driver.object_pose(spec.name)
    if pose is None:
        return None
    gp, width = _grasp_pose(spec, *pose, pad_overlap_m=sc.pad_overlap_m)
    gp.position[:2] += np.asarray(sc.pose_error_m, float)
    target_body = next(b for b, s in driver.bodies.items() if s.name == spec.name)
    if sc.extra_mass is not None:
        pb.changeDynamics(target_body, -1, mass=float(sc.extra_mass), physicsClientId=driver.client)
    open_w = min(STROKE_M, width + 0.03)
    if sc.fault is not None:
        f = sc.fault
        if f.kind == "grasp_offset":
            R = np.array(pb.getMatrixFromQuaternion(list(gp.orientation))).reshape(3, 3)
            f = Fault("grasp_offset", {"offset_m": f.params["offset_m"], "direction": R[:, 1].tolist()},
                      primitive="grasp")
        elif f.kind == "block_fingers" and "at_frac" in f.params:  # jam between the object and the opening
            f = Fault("block_fingers", {"at_norm": (width + f.params["at_frac"] * (open_w - width)) / STROKE_M},
                      primitive="grasp")
        driver.inject(f)
    force = sc.force_frac * driver.max_force
    with SimObserver(driver) as obs:
        ex = driver.grasp(gp, open_w, force, timeout=sc.timeout)
    driver.clear_faults()
    if ex.fault and ex.fault.startswith("infeasible"):
        return None
    facts = obs.facts()
    held_name = driver.held_object()
    held_after = held_name is not None
    held_body = next((b for b, s in driver.bodies.items() if s.name == held_name), None)
    sfg = grip_safety_factor(driver, held_body) if held_body is not None else None
    sf, grip_frac = (sfg[0], sfg[1] / driver.max_force) if sfg else (None, None)
    held_final = False
    if held_after and ex.fault is None:
        lift = driver.lift(0.05)
        for _ in range(int(hold_s * 240)):
            pb.stepSimulation(physicsClientId=driver.client)
        held_final = driver.held_object() == held_name and lift.fault is None
    label, why = ground_truth(ex.fault, facts, held_after, held_final, sf, grip_frac, sf_min)
    tel = sensor.apply(ex.telemetry, rng)
    truth = {**facts, "held_after_grasp": held_after, "held_after_lift_and_wait": held_final,
             "held_object": held_name, "target_held": held_name == spec.name,
             "hold_s": hold_s, "safety_factor": sf, "sf_min": sf_min, "pad_force_frac": grip_frac,
             "weak_grip_frac": 0.25, "exec_fault": ex.fault, "why": why,
             "object": spec.name, "held_mass": float(pb.getDynamicsInfo(held_body, -1, physicsClientId=driver.client)[0])
             if held_body is not None else None, "force_n": force}
    return tel, label, truth


def record(driver_factory: Callable[[], Any], n: int, out_dir: str | Path, seed: int = 0,
           th: WatchdogThresholds | None = None, robot: str = "", noise: bool = True,
           stroke_m: float = 0.085, progress: Callable[[str], None] | None = None,
           max_tries_factor: int = 3) -> list[dict[str, Any]]:
    """Record n labelled traces into out_dir (appending to its index.jsonl); returns index entries.

    driver_factory() must return a simulated driver with the PyBulletArm surface used here
    (reset_scene, object_pose, grasp, lift, inject, clear_faults, held_object, bodies). Skipped
    scenarios (infeasible grasp poses) are replaced, up to max_tries_factor * n attempts.
    """
    th = th or WatchdogThresholds()
    rng = np.random.default_rng(seed)
    catalogue = _catalogue()
    sensor = SensorModel.from_thresholds(th, stroke_m, enabled=noise)
    scenarios = plan(n * max_tries_factor, rng, len(catalogue))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    start = len((out / INDEX).read_text().splitlines()) if (out / INDEX).exists() else 0
    entries: list[dict[str, Any]] = []
    counts = dict.fromkeys(INTENTS, 0)
    per_intent = math.ceil(n / len(INTENTS))
    driver = driver_factory()
    t0 = time.time()
    try:
        for k, sc in enumerate(scenarios):
            if len(entries) >= n:
                break
            if counts[sc.intent] >= per_intent:
                continue
            noise_rng = np.random.default_rng([seed, k])
            res = record_one(driver, sc, noise_rng, sensor, catalogue)
            if res is None:
                continue
            tel, label, truth = res
            counts[sc.intent] += 1
            tid = f"{start + len(entries):05d}"
            fault = None if sc.fault is None else {"kind": sc.fault.kind, "params": sc.fault.params}
            if sc.extra_mass is not None:
                fault = {**(fault or {}), "mass_kg": sc.extra_mass}
            if sc.pad_overlap_m is not None:
                fault = {**(fault or {}), "pad_overlap_m": sc.pad_overlap_m}
            meta = {"intent": sc.intent.value, "fault": fault, "seed": seed, "scenario": k,
                    "force_frac": sc.force_frac, "pose_error_m": sc.pose_error_m,
                    "timeout": sc.timeout, "robot": robot, "noise": sensor.as_dict(), "truth": truth}
            entries.append(save_trace(out, Trace(id=tid, label=label, telemetry=tel, meta=meta)))
            if progress:
                progress(f"[{len(entries)}/{n}] intent {sc.intent.value:7s} -> truth {label.value:7s} "
                         f"({truth['why']}) {time.time() - t0:.1f}s")
    finally:
        close = getattr(driver, "close", None)
        if close:
            close()
    return entries
