"""block_fingers: fingers jammed part-way do not grip, and the Watchdog reads that as STALL."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pybullet")
pytest.importorskip("airo_models")

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.base import Fault, GraspPose  # noqa: E402
from bt_grasp.drivers.pybullet_arm.driver import DOWN, PyBulletArm  # noqa: E402
from bt_grasp.outcomes import Label  # noqa: E402
from bt_grasp.profile import load_profile  # noqa: E402
from bt_grasp.watchdog.classify import classify  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402
from bt_grasp.watchdog.thresholds import thresholds_from_profile  # noqa: E402

BOX = ObjectSpec("red box", "box", "red", "medium", "box", (0.05, 0.05, 0.06), (0.9, 0.1, 0.1, 1), 0.15)
CENTRE = np.array([0.5, 0.0, 0.03])


@pytest.fixture(scope="module")
def arm():
    a = PyBulletArm(load_profile("ur5e_robotiq"), image_size=64)
    yield a
    a.close()


def test_block_fingers_stops_part_way_without_grip_and_reads_as_stall(arm):
    arm.clear_faults()
    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    arm.inject(Fault("block_fingers", {"at_norm": 0.8}, primitive="grasp"))
    ex = arm.grasp(GraspPose(CENTRE.copy(), DOWN, 0.08), 0.08, 60.0)
    tel = ex.telemetry
    settle = tel.phase == Phase.SETTLE
    assert np.median(tel.aperture_norm[settle]) == pytest.approx(0.8, abs=0.02)  # stopped at the jam
    assert tel.effort[settle].max() < 0.06        # jammed, not squeezing: no grip reading
    assert tel.stalled[settle].all()              # the driver's own stall flag
    assert arm.held_object() is None
    assert classify(tel, thresholds_from_profile(load_profile("ur5e_robotiq"))).label is Label.STALL


def test_recorder_records_block_fingers_as_stall():
    """The recorder induces STALL with block_fingers too, and its ground truth agrees."""
    from bt_grasp.watchdog import record as R
    from bt_grasp.watchdog.thresholds import WatchdogThresholds

    cat = R._catalogue()
    scs = [s for s in R.plan(60, np.random.default_rng(7), len(cat))
           if s.fault is not None and s.fault.kind == "block_fingers"][:3]
    assert scs, "plan() must induce STALL with block_fingers too"
    drv = PyBulletArm(load_profile("ur5e_robotiq"), image_size=64)
    sensor = R.SensorModel.from_thresholds(WatchdogThresholds(), 0.085, enabled=False)
    try:
        labels = [R.record_one(drv, s, np.random.default_rng(0), sensor, cat) for s in scs]
    finally:
        drv.close()
    assert [r[1] for r in labels if r is not None].count(Label.STALL) >= 2
