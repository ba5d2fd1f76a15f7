"""Physical faults, lift, push and stop on the PyBullet arm (256² images, isolated objects)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pybullet")
pytest.importorskip("airo_models")

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.base import FAULT_KINDS, Fault, GraspPose  # noqa: E402
from bt_grasp.drivers.pybullet_arm.driver import DOWN  # noqa: E402
from bt_grasp.profile import load_profile  # noqa: E402
from bt_grasp.watchdog.hold import hold_lost  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402
from bt_grasp.watchdog.thresholds import WatchdogThresholds  # noqa: E402

BOX = ObjectSpec("green box", "box", "green", "medium", "box", (0.05, 0.05, 0.06), (0.1, 0.8, 0.1, 1), 0.15)
CENTRE = (0.5, 0.0, 0.03)



def _grasp(arm, force=60.0, timeout=None):
    arm.reset_scene([BOX], [CENTRE])
    return arm.grasp(GraspPose(np.array(CENTRE), DOWN, 0.08), 0.08, force, timeout=timeout)


def test_unknown_fault_kind_rejected(arm):
    with pytest.raises(ValueError):
        arm.inject(Fault("gremlins"))
    assert len(FAULT_KINDS) == 10


def test_heavy_slippery_object_slips_during_lift(arm):
    arm.clear_faults()
    arm.inject(Fault("mass", {"value": 3.0}))
    arm.inject(Fault("friction", {"value": 0.05}))
    _grasp(arm, force=20.0)
    ex = arm.lift(0.08)
    assert arm.held_object() is None
    tel = ex.telemetry
    assert tel.aperture_norm[0] > 0.4 and tel.effort[0] > 0.15  # still squeezing at the start
    assert tel.aperture_norm[-1] < 0.05 and tel.effort[-1] < 0.05  # collapsed once the object stayed
    assert hold_lost(tel, WatchdogThresholds())[0]  # the hold check on lift/place sees the drop


def test_hold_check_passes_a_firm_carry_and_the_release(arm):
    th = WatchdogThresholds()
    arm.clear_faults()
    _grasp(arm, force=60.0)
    lifted = arm.lift(0.08)
    placed = arm.place("basket")
    assert not hold_lost(lifted.telemetry, th)[0]
    assert not hold_lost(placed.telemetry, th)[0], "the release at the basket is not a drop"
    assert placed.info["in_basket"]


def test_block_lift_keeps_height(arm):
    arm.clear_faults()
    arm.inject(Fault("block_lift", {"after_m": 0.0}))
    ex = _grasp(arm)
    tel = ex.telemetry
    rise = tel.ee_height[tel.phase == Phase.HOLD].mean() - tel.ee_height[tel.phase == Phase.SETTLE].mean()
    assert abs(rise) < 0.004
    ok = _grasp(arm)
    tel = ok.telemetry
    rise = tel.ee_height[tel.phase == Phase.HOLD].mean() - tel.ee_height[tel.phase == Phase.SETTLE].mean()
    assert rise > 0.01  # the fault was consumed (once)


def test_latency_shifts_telemetry(arm):
    arm.clear_faults()
    base = _grasp(arm).telemetry
    arm.inject(Fault("latency", {"seconds": 0.2}))
    late = _grasp(arm).telemetry
    first_contact = lambda tel: tel.t[np.argmax(tel.effort > 0.3)]  # noqa: E731
    assert first_contact(late) - first_contact(base) == pytest.approx(0.2, abs=0.03)


def test_lift_and_push(arm):
    arm.clear_faults()
    assert _grasp(arm).fault is None
    z0 = arm.tcp_pose()[0][2]
    ex = arm.lift(0.1)
    assert ex.fault is None and arm.tcp_pose()[0][2] - z0 == pytest.approx(0.1, abs=0.01)
    assert arm.held_object() == "green box"
    arm.open_gripper()
    arm.reset_scene([BOX], [CENTRE])
    ex = arm.push(np.array([0.5, -0.08]), np.array([0.5, 0.08]), height=0.03)
    assert ex.fault is None, ex.fault
    pos, _ = arm.object_pose("green box")
    assert pos[1] > 0.03  # pushed toward +y


def test_push_start_inside_object_is_infeasible(arm):
    arm.clear_faults()
    arm.reset_scene([BOX], [CENTRE])
    ex = arm.push(np.array([0.5, 0.0]), np.array([0.5, 0.1]), height=0.03)
    assert ex.fault is not None and ex.fault.startswith("infeasible: collision")
    assert len(ex.telemetry) == 0


def test_never_finish_without_timeout_is_capped(arm):
    arm.clear_faults()
    arm.reset_scene([], [])
    arm.inject(Fault("never_finish", primitive="open_gripper"))
    ex = arm.open_gripper()
    assert ex.fault == "timeout" and ex.duration == pytest.approx(30.0, abs=0.01)


def test_push_leaf_pushes_an_object_lower_than_the_fingertip_clearance():
    """The planner puts the push at half a low object's height (below the fingertip clearance);
    the driver raises it to the clearance and pushes. The leaf must not refuse it beforehand."""
    from helpers import tree

    from bt_grasp.episode import build_context
    from bt_grasp.runner import Runner
    from bt_grasp.world import build_world

    puck = ObjectSpec("red puck", "puck", "red", "medium", "cylinder", (0.03, 0.014), (0.85, 0.1, 0.1, 1), 0.05)
    spec = tree("""
        tree: push_low
        root:
          sequence:
            id: s
            children:
              - locate_object: {id: locate, target: "red puck"}
              - push: {id: push, target: "{target}", direction: right, distance: 0.08}
              - finalize: {id: done, reason: pushed}
        """)
    world = build_world(load_profile("ur5e_robotiq"), image_size=256)
    try:
        world.driver.reset_scene([puck], [(0.5, 0.0, 0.007)], target="red puck")
        before, _ = world.driver.object_pose("red puck")
        result = Runner(spec, build_context(spec, world, {"goal.object": "red puck"})).run()
        after, _ = world.driver.object_pose("red puck")
    finally:
        world.close()
    push = next(e for e in result.events if e.primitive == "push")
    assert result.reason == "pushed", push.metadata
    assert np.linalg.norm(after[:2] - before[:2]) > 0.03


def test_grasp_feasible_makes_the_checks_grasp_makes_and_consumes_no_fault(arm):
    """A grasp planned between the fingertips of a low object would put the tips below the
    table as a plain waypoint; grasp() raises it, and grasp_feasible agrees with grasp()."""
    puck = ObjectSpec("red puck", "puck", "red", "medium", "cylinder", (0.03, 0.014), (0.85, 0.1, 0.1, 1), 0.05)
    arm.clear_faults()
    arm.reset_scene([puck], [(0.5, 0.0, 0.007)])
    pose = GraspPose(np.array([0.5, 0.0, 0.007]), DOWN, 0.07)
    as_waypoint, why = arm.feasible([np.concatenate([pose.position, pose.orientation])])
    assert not as_waypoint and "table" in why
    arm.inject(Fault("latency", {"seconds": 0.1}, primitive="grasp"))
    assert arm.grasp_feasible(pose, 0.07) == (True, "")
    assert arm.faults.peek("grasp"), "checking must not consume the injected fault"
    ex = arm.grasp(pose, 0.07, 60.0)
    assert ex.fault is None and ex.info["height_clamped_m"] > 0
    assert arm.held_object() == "red puck"


def test_a_grasp_whose_finger_would_land_on_the_aimed_at_object_is_infeasible(arm):
    """Fingers opened narrower than the object come down on its top and are driven into it."""
    arm.clear_faults()
    arm.reset_scene([BOX], [CENTRE])
    narrow = GraspPose(np.array(CENTRE), DOWN, 0.01)
    ok, why = arm.grasp_feasible(narrow, 0.01)
    assert not ok and "green box (finger) at the grasp pose" in why
    assert arm.grasp_feasible(GraspPose(np.array(CENTRE), DOWN, 0.08), 0.08) == (True, "")


def test_the_whole_descent_is_checked_not_only_the_grasp_pose(arm, monkeypatch):
    """Something in the way 6 cm above a clear grasp pose (a neighbour leaning over it, a mug's
    rim) makes the grasp infeasible, named by where it is met."""
    arm.clear_faults()
    arm.reset_scene([BOX], [CENTRE])
    pose = GraspPose(np.array(CENTRE), DOWN, 0.08)
    grasp_z = arm._grasp_plan(pose, 0.08, [])["pos"][2]
    heights = []

    def in_the_way(pos, orn, gap, check_objects, ignore=None):
        heights.append(float(pos[2]) - grasp_z)
        return "leaning bar (finger)" if abs(float(pos[2]) - grasp_z - 0.06) < 0.006 else None

    monkeypatch.setattr(arm, "_collisions", in_the_way)
    ok, why = arm.grasp_feasible(pose, 0.08)
    assert not ok and "leaning bar (finger) 6 cm above the grasp pose" in why
    down = sorted(h for h in heights if h < 0.11)  # the pre-grasp, 12 cm up, has its own check
    assert down[0] == pytest.approx(0.0) and down[-1] == pytest.approx(0.06)
    assert max(np.diff(down)) <= 0.0101  # every centimetre from the grasp pose up to the hit


def test_a_push_whose_way_down_meets_an_object_is_refused_before_moving(arm, monkeypatch):
    """The push comes down 12 cm to its start with the fingers closed; an object met on the way
    (the top of a pile beside the start) refuses it, named by where, and nothing moves."""
    arm.clear_faults()
    arm.reset_scene([BOX], [CENTRE])
    start, end = np.array([0.5, -0.15]), np.array([0.5, -0.05])

    def in_the_way(pos, orn, gap, check_objects, ignore=None):
        return "pile top (finger)" if check_objects and 0.055 < float(pos[2]) - 0.02 < 0.075 else None

    monkeypatch.setattr(arm, "_collisions", in_the_way)
    before = arm.tcp_pose()[0]
    done = arm.push(start, end, 0.02)
    assert done.fault.startswith("infeasible: collision: pile top (finger)")
    assert done.fault.endswith("cm above the push start")
    assert np.allclose(arm.tcp_pose()[0], before)
