"""Record labelled grasp telemetry on a simulated driver, inducing every Watchdog outcome.

This is labelling infrastructure, not policy:
- the grasp pose comes from the simulator's *true* object pose (`driver.object_pose(name)`), not
  from perception, because we want the outcome to be decided by the induced fault;
- the ground-truth label comes from the simulator's state (contacts, poses, masses, friction)
  observed during and after the attempt -- never from the classifier. Those facts come through
  the driver's SimLabelling surface (drivers/capabilities.py), so one recorder serves every simulated
  arm (PyBullet, MuJoCo).

What each attempt induces is planned in bt_grasp.watchdog.induce, its noise added by
bt_grasp.watchdog.sensor, and its label decided by bt_grasp.watchdog.ground_truth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Fault, GraspPose
from bt_grasp.drivers.capabilities import SimLabelling
from bt_grasp.errors import UserError
from bt_grasp.outcomes import Label
from bt_grasp.watchdog.dataset import INDEX, Trace, save_trace
from bt_grasp.watchdog.ground_truth import SimObserver, grip_safety_factor, ground_truth
from bt_grasp.watchdog.induce import INTENTS, Scenario, plan
from bt_grasp.watchdog.rotations import matrix_of, quat_from_euler, yaw_of
from bt_grasp.watchdog.sensor import SensorModel
from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds


def _catalogue() -> list[Any]:
    from bt_grasp.drivers.pybullet_arm import scene

    return [s for s in scene.local_catalogue() if s.shape in ("box", "cylinder", "sphere") and scene.fits_gripper(s)]


def _grasp_pose(spec: Any, pos: np.ndarray, orn: np.ndarray,
                pad_overlap_m: float | None = None) -> tuple[GraspPose, float]:
    """Top-down grasp at the object's true centre, closing across its narrower horizontal width."""
    from bt_grasp.drivers.pybullet_arm import scene
    from bt_grasp.drivers.pybullet_arm.gripper import TCP_FROM_TIP_M  # both engines' gripper

    wx, wy, wz = scene.nominal_widths(spec)
    yaw = yaw_of(orn)
    if wy < wx:
        yaw += math.pi / 2
    width = min(wx, wy)
    top = float(pos[2]) + wz / 2
    z = max(float(pos[2]), top - 0.03)
    if pad_overlap_m is not None:  # shallow grasp: fingertips pad_overlap_m below the top
        z = top - pad_overlap_m + TCP_FROM_TIP_M
    q = np.array(quat_from_euler(math.pi, 0.0, -yaw))
    # gripper x (closing axis) for euler [pi, 0, -yaw] is (cos yaw, sin yaw, 0) up to sign
    return GraspPose(position=np.array([pos[0], pos[1], z]), orientation=q, width=width), width


def record_one(driver: Any, sc: Scenario, rng: np.random.Generator, sensor: SensorModel,
               catalogue: list[Any], hold_s: float = 1.0, sf_min: float = 2.0) -> tuple[Telemetry, Label, dict[str, Any]] | None:
    """One attempt: build the scene, grasp with the induced fault, observe, label. None if skipped."""
    from bt_grasp.drivers.pybullet_arm import scene
    from bt_grasp.drivers.pybullet_arm.gripper import STROKE_M  # both engines' gripper

    spec = catalogue[sc.object_index]
    objs = [spec]
    positions = [(sc.xy[0], sc.xy[1], 0.5 * scene.nominal_widths(spec)[2] + 0.002)]
    orients = [quat_from_euler(0.0, 0.0, sc.yaw)]
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
    pos, orn = pose
    gp, width = _grasp_pose(spec, pos, orn, pad_overlap_m=sc.pad_overlap_m)
    gp.position[:2] += np.asarray(sc.pose_error_m, float)
    target_body = next(b for b, s in driver.bodies.items() if s.name == spec.name)
    if sc.extra_mass is not None:
        driver.set_body_mass(target_body, float(sc.extra_mass))
    open_w = min(STROKE_M, width + 0.03)
    if sc.fault is not None:
        f = sc.fault
        if f.kind == "grasp_offset":
            R = matrix_of(gp.orientation)
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
        driver.step_holding(hold_s)
        held_final = driver.held_object() == held_name and lift.fault is None
    label, why = ground_truth(ex.fault, facts, held_after, held_final, sf, grip_frac, sf_min)
    tel = sensor.apply(ex.telemetry, rng)
    truth = {**facts, "held_after_grasp": held_after, "held_after_lift_and_wait": held_final,
             "held_object": held_name, "target_held": held_name == spec.name,
             "hold_s": hold_s, "safety_factor": sf, "sf_min": sf_min, "pad_force_frac": grip_frac,
             "weak_grip_frac": 0.25, "exec_fault": ex.fault, "why": why,
             "object": spec.name,
             "held_mass": driver.body_mass_friction(held_body)[0] if held_body is not None else None,
             "force_n": force}
    return tel, label, truth


def record(driver_factory: Callable[[], Any], n: int, out_dir: str | Path, seed: int = 0,
           th: WatchdogThresholds | None = None, robot: str = "", noise: bool = True,
           stroke_m: float = 0.085, progress: Callable[[str], None] | None = None,
           max_tries_factor: int = 3) -> list[dict[str, Any]]:
    """Record n labelled traces into out_dir (appending to its index.jsonl); returns index entries.

    driver_factory() must return a simulated arm (PyBulletArm, MujocoArm): reset_scene,
    object_pose, grasp, lift, inject, clear_faults, held_object, bodies, and the SimLabelling
    facts. Skipped scenarios (infeasible grasp poses) are replaced, up to max_tries_factor * n
    attempts.
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
        if not isinstance(driver, SimLabelling):
            raise UserError(f"{type(driver).__name__} has no simulator ground truth to label grasps with")
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
            fault: dict[str, Any] | None = (None if sc.fault is None
                                            else {"kind": sc.fault.kind, "params": sc.fault.params})
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
