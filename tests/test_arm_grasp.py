"""PyBulletArm primitives on hand-made scenes (256² images): grasp, empty, faults, guard, place, timeout."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("pybullet")
pytest.importorskip("airo_models")

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.base import Driver, Fault, GraspPose  # noqa: E402
from bt_grasp.drivers.capabilities import FaultInjectable, GroundTruth  # noqa: E402
from bt_grasp.drivers.pybullet_arm.driver import DOWN, PyBulletArm  # noqa: E402
from bt_grasp.profile import load_profile  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402

BOX = ObjectSpec("red box", "box", "red", "medium", "box", (0.05, 0.05, 0.06), (0.9, 0.1, 0.1, 1), 0.15)
CENTRE = np.array([0.5, 0.0, 0.03])



def _box_scene(arm: PyBulletArm) -> None:
    arm.clear_faults()
    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")


def _grasp(arm: PyBulletArm, pos=CENTRE, width=0.08, force=60.0, timeout=None):
    return arm.grasp(GraspPose(np.asarray(pos, float), DOWN, width), width, force, timeout=timeout)


def test_protocols(arm):
    assert isinstance(arm, Driver) and isinstance(arm, GroundTruth) and isinstance(arm, FaultInjectable)


def test_top_down_grasp_lifts_box_and_telemetry_shows_hold(arm):
    _box_scene(arm)
    ex = _grasp(arm)
    assert ex.fault is None
    assert arm.held_object() == "red box"
    tel = ex.telemetry
    assert set(np.unique(tel.phase)) == {p.value for p in Phase}
    hold = tel.phase == Phase.HOLD
    assert abs(np.median(tel.aperture_m[hold]) - 0.05) < 0.004  # stops at the object width
    assert np.median(tel.effort[hold]) > 0.5                      # at the force limit (60/100 N)
    assert tel.ee_height[hold].mean() - tel.ee_height[tel.phase == Phase.SETTLE].mean() > 0.01
    assert 0.5 < ex.duration < 6.0
    rate = len(tel) / ex.duration
    assert 60 <= rate <= 120


def test_a_grasps_hold_leaves_the_watchdog_a_second_window(arm):
    """One shift of the object in the grip breaks a settle window; the hold must have room for
    another, or the attempt ends with no stable signature (TIMEOUT) with the object in hand."""
    from bt_grasp.world import make_services

    th = make_services(load_profile("ur5e_robotiq")).thresholds
    _box_scene(arm)
    tel = _grasp(arm).telemetry
    t = tel.t[tel.phase == Phase.HOLD]
    assert t[-1] - t[0] >= 2 * th.settle_window_s


def test_contacts_of_a_held_box_name_both_fingers_and_nothing_else(arm):
    """What a launch is read with (tools/perf/launch_trace.py): every contact of one object."""
    _box_scene(arm)
    assert {what for what, _, _ in arm.contacts_of("red box")} == {"table"}
    assert _grasp(arm).fault is None
    held = arm.contacts_of("red box")
    assert {what for what, _, _ in held} == {"finger"}
    assert sum(force for _, _, force in held) == pytest.approx(2 * 60.0, rel=0.2)  # both pads at the grip
    assert arm.contacts_of("no such object") == []


def test_an_observer_sees_every_physics_step_with_the_arms_readout_until_removed(arm):
    """How a run is read step by step (tools/perf/launch_trace.py), without the driver's internals."""
    _box_scene(arm)
    seen = []
    remove = arm.observe_steps(lambda world: seen.append(arm.readout()))
    assert _grasp(arm).fault is None
    remove()
    steps = [r.step for r in seen]
    assert steps == list(range(steps[0], steps[0] + len(steps)))  # every step, in order
    assert {r.primitive for r in seen} == {"grasp"}
    assert [p.name.lower() for p in Phase] == list(dict.fromkeys(r.phase for r in seen))
    hold = seen[-1]
    assert hold.gap_m == pytest.approx(0.05, abs=0.004) and hold.reference_m < hold.gap_m  # squeezing
    assert hold.effort > 0.5 and hold.tcp_z > CENTRE[2]
    arm.open_gripper()
    assert len(seen) == len(steps)  # removed: no more calls


def test_the_close_presses_a_low_side_by_its_height_and_at_most_the_asked_force():
    """3 N per millimetre of side between the fingertips and the object's top, at least 10 N,
    never above the asked force; without the object's top, the asked force."""
    from bt_grasp.drivers.pybullet_arm.primitives import closing_force

    assert closing_force(60.0, None, 0.003) == 60.0
    assert closing_force(60.0, 0.0095, 0.003) == pytest.approx(19.5)
    assert closing_force(60.0, 0.004, 0.003) == 10.0
    assert closing_force(60.0, 0.10, 0.003) == 60.0
    assert closing_force(5.0, 0.0095, 0.003) == 5.0


@pytest.mark.parametrize("band_close", [3000.0, math.inf])
def test_a_domino_lying_flat_grasped_ten_degrees_off_square_is_held_only_with_the_soft_close(arm, band_close):
    """The pads meet 6.5 mm of a 9.5 mm tall tile's side. Closing at the full 60 N, a pad's corner
    drives the tile into the table and it slips out (EMPTY); closing at 3 N/mm of side (20 N),
    then gripping at 60 N, holds it (contact.py band_close_n_per_m)."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact

    tile = ObjectSpec("white tile", "box", "white", "small", "box", (0.076, 0.038, 0.0095),
                      (0.9, 0.9, 0.9, 1), 0.012, 0.6)
    arm.clear_faults()
    arm.reset_scene([tile], [(0.5, 0.0, 0.006)], target="white tile")
    yaw = np.deg2rad(100.0)  # 10 degrees off closing straight across the 38 mm
    down = np.array([np.cos(yaw / 2), np.sin(yaw / 2), 0.0, 0.0])  # (x, y, z, w): approach -z, closing at yaw
    set_contact(band_close_n_per_m=band_close)
    try:
        pose = GraspPose(np.array([0.5, 0.0, 0.005]), down, 0.058, metadata={"object_top_z": 0.0095})
        arm.grasp(pose, 0.058, 60.0)
    finally:
        reset_contact()
    assert (arm.held_object() == "white tile") == (band_close < math.inf)


def test_empty_grasp_closes_to_stop_with_no_effort(arm):
    arm.clear_faults()
    arm.reset_scene([], [])
    ex = _grasp(arm)
    hold = ex.telemetry.phase == Phase.HOLD
    assert ex.telemetry.aperture_norm[hold].max() < 0.02
    assert ex.telemetry.effort[hold].max() < 0.05
    assert arm.held_object() is None


def test_remove_target_on_close_gives_empty(arm):
    _box_scene(arm)
    arm.inject(Fault("remove_target_on_close"))
    ex = _grasp(arm)
    assert ex.info.get("removed") == "red box"
    hold = ex.telemetry.phase == Phase.HOLD
    assert ex.telemetry.aperture_norm[hold].max() < 0.02 and ex.telemetry.effort[hold].max() < 0.05
    assert arm.held_object() is None


def test_out_of_reach_is_infeasible_and_nothing_moves(arm):
    _box_scene(arm)
    q0 = arm._q().copy()
    clock0 = arm.clock
    ex = _grasp(arm, pos=[1.4, 0.0, 0.03])
    assert ex.fault is not None and ex.fault.startswith("infeasible: ik")
    assert len(ex.telemetry) == 0 and ex.duration == 0.0
    assert np.allclose(arm._q(), q0) and arm.clock == clock0


def test_grasp_into_the_table_is_infeasible(arm):
    _box_scene(arm)
    ok, why = arm.feasible([np.array([0.5, 0.2, -0.05])])
    assert not ok and "table" in why


def test_place_puts_held_object_in_basket(arm):
    _box_scene(arm)
    assert _grasp(arm).fault is None
    ex = arm.place("basket")
    assert ex.fault is None
    assert arm.object_in_basket("red box")
    assert arm.held_object() is None


def test_timeout_stops_a_primitive(arm):
    _box_scene(arm)
    ex = _grasp(arm, timeout=0.4)
    assert ex.fault == "timeout"
    assert ex.duration == pytest.approx(0.4, abs=0.01)
    assert ex.telemetry.t.max() <= 0.4 + 1e-6


def test_never_finish_runs_until_timeout(arm):
    _box_scene(arm)
    arm.inject(Fault("never_finish", primitive="grasp"))
    ex = _grasp(arm, timeout=3.0)
    assert ex.fault == "timeout"
    assert ex.duration == pytest.approx(3.0, abs=0.01)
    close = ex.telemetry.phase == Phase.CLOSE
    assert ex.telemetry.stalled[close].any()


def test_block_fingers_and_telemetry_faults(arm):
    _box_scene(arm)
    arm.inject(Fault("block_fingers", {"at_norm": 0.8}))
    arm.inject(Fault("nan_telemetry", {"from_frac": 0.5}))
    ex = _grasp(arm)
    tel = ex.telemetry
    n = len(tel)
    assert np.isnan(tel.effort[n // 2 + 1:]).all() and np.isfinite(tel.effort[: n // 2 - 1]).all()
    assert arm.held_object() is None  # the stop at 68 mm kept the fingers off the 50 mm box


def test_block_fingers_stops_part_way_without_grip_and_reads_as_stall(arm):
    from bt_grasp.outcomes import Label
    from bt_grasp.watchdog.classify import classify
    from bt_grasp.watchdog.thresholds import thresholds_from_profile

    _box_scene(arm)
    arm.inject(Fault("block_fingers", {"at_norm": 0.8}, primitive="grasp"))
    tel = _grasp(arm).telemetry
    settle = tel.phase == Phase.SETTLE
    assert np.median(tel.aperture_norm[settle]) == pytest.approx(0.8, abs=0.02)  # stopped at the jam
    assert tel.effort[settle].max() < 0.06        # jammed, not squeezing: no grip reading
    assert tel.stalled[settle].all()              # the driver's own stall flag
    assert arm.held_object() is None
    assert classify(tel, thresholds_from_profile(load_profile("ur5e_robotiq"))).label is Label.STALL


def test_recorder_records_block_fingers_as_stall(arm):
    """The recorder induces STALL with block_fingers too, and its ground truth agrees."""
    from bt_grasp.outcomes import Label
    from bt_grasp.watchdog import record as R
    from bt_grasp.watchdog.thresholds import WatchdogThresholds

    cat = R._catalogue()
    scs = [s for s in R.plan(60, np.random.default_rng(7), len(cat))
           if s.fault is not None and s.fault.kind == "block_fingers"][:3]
    assert scs, "plan() must induce STALL with block_fingers too"
    sensor = R.SensorModel.from_thresholds(WatchdogThresholds(), 0.085, enabled=False)
    labels = [R.record_one(arm, s, np.random.default_rng(0), sensor, cat) for s in scs]
    assert [r[1] for r in labels if r is not None].count(Label.STALL) >= 2


def test_driver_exception_and_once(arm):
    _box_scene(arm)
    arm.inject(Fault("driver_exception"))
    with pytest.raises(RuntimeError):
        arm.open_gripper()
    assert arm.open_gripper().fault is None  # consumed


def test_grasp_offset_misses(arm):
    _box_scene(arm)
    arm.inject(Fault("grasp_offset", {"offset_m": 0.06, "direction": [0, 1, 0]}))
    _grasp(arm)
    assert arm.held_object() is None
