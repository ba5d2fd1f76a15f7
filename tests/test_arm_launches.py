"""Launches are measured, not explained away: an object the simulator throws (faster than 1 m/s
sideways or upwards, not held) is recorded with its body, speed, phase and primitive; a fall, a
carried object and a quiet grasp are not launches."""

from __future__ import annotations

import numpy as np
import pybullet as pb
import pytest

pytest.importorskip("airo_models")

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.base import GraspPose  # noqa: E402
from bt_grasp.drivers.motion import run_to_end  # noqa: E402
from bt_grasp.drivers.pybullet_arm.driver import DOWN  # noqa: E402
from bt_grasp.drivers.pybullet_arm.launches import launch_speed  # noqa: E402

BOX = ObjectSpec("red box", "box", "red", "medium", "box", (0.05, 0.05, 0.06), (0.9, 0.1, 0.1, 1), 0.15)
CUBE = ObjectSpec("blue cube", "box", "blue", "small", "box", (0.03, 0.03, 0.03), (0.1, 0.1, 0.9, 1), 0.05)
CENTRE = np.array([0.5, 0.0, 0.03])


ARM_IMAGE_SIZE = 64  # the arm fixture's camera (tests/conftest.py)


def test_only_sideways_or_upward_speed_counts():
    assert launch_speed((0.0, 0.0, -3.0)) == 0.0          # falling
    assert launch_speed((0.6, 0.8, -3.0)) == pytest.approx(1.0)
    assert launch_speed((0.0, 0.0, 2.0)) == 2.0           # thrown up


def test_a_quiet_grasp_and_lift_throw_nothing(arm):
    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    run_to_end(arm.start("grasp", pose=GraspPose(CENTRE, DOWN, 0.08), width=0.08, force=60.0))
    run_to_end(arm.start("lift", dz=0.15))
    assert arm.held_object() == "red box"
    assert arm.launches() == []


def test_an_object_dropped_from_the_grip_falls_without_counting(arm):
    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    run_to_end(arm.start("grasp", pose=GraspPose(CENTRE, DOWN, 0.08), width=0.08, force=60.0))
    run_to_end(arm.start("lift", dz=0.3))
    run_to_end(arm.start("open_gripper"))
    assert arm.held_object() is None
    assert arm.launches() == []


def test_a_body_thrown_during_a_primitive_is_recorded_once_at_its_peak(arm):
    """The watch measures, whatever threw the body: here a cube given 2.5 m/s sideways while a
    lift runs (in the benchmark, a finger's penetration correction does it)."""
    arm.reset_scene([BOX, CUBE], [tuple(CENTRE), (0.35, 0.25, 0.015)], target="red box")
    motion = arm.start("lift", dz=0.1)
    cube = next(b for b, s in arm.bodies.items() if s.name == "blue cube")
    pb.resetBaseVelocity(cube, (2.5, 0.0, 0.3), (0, 0, 0), physicsClientId=arm.client)
    run_to_end(motion)
    thrown = arm.launches()
    assert [(t["body"], t["primitive"]) for t in thrown] == [("blue cube", "lift")]
    assert 1.0 < thrown[0]["speed"] <= 2.5 + 1e-6 and thrown[0]["phase"] == "micro_lift"
    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    assert arm.launches() == []  # a new episode starts with none


def test_one_flight_across_two_primitive_calls_is_one_launch(arm):
    arm.reset_scene([BOX, CUBE], [tuple(CENTRE), (0.35, 0.25, 0.015)], target="red box")
    motion = arm.start("open_gripper")
    cube = next(b for b, s in arm.bodies.items() if s.name == "blue cube")
    pb.resetBaseVelocity(cube, (0.5, 0.0, 8.0), (0, 0, 0), physicsClientId=arm.client)  # up for ~0.7 s
    run_to_end(motion)
    run_to_end(arm.start("lift", dz=0.05))
    thrown = arm.launches()
    assert len(thrown) == 1 and thrown[0]["primitive"] == "open_gripper"
    assert 7.0 < thrown[0]["speed"] <= 8.0  # sampled at 30 Hz: gravity has slowed it a little


def test_a_grasp_leaves_the_spot_it_starts_among_slowly_and_without_turning(arm):
    """A grasp starting where the last one ended (open_gripper leaves the fingers among the
    objects) rises its first DEPART_M at contact.py's depart_mps, keeping the gripper's
    orientation, and only then turns to the new grasp's and speeds up: a finger dragged up fast
    or swung through a neighbour throws it."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact
    from bt_grasp.drivers.pybullet_arm.params import DEPART_M

    cube_at = np.array([0.5, 0.12, 0.015])
    arm.reset_scene([BOX, CUBE], [tuple(CENTRE), tuple(cube_at)], target="blue cube")
    run_to_end(arm.start("grasp", pose=GraspPose(CENTRE, DOWN, 0.08), width=0.08, force=60.0))
    run_to_end(arm.start("open_gripper"))
    z0, orn0 = arm.tcp_pose()[0][2], arm.tcp_pose()[1]
    turned = np.array(pb.getQuaternionFromEuler([np.pi, 0.0, np.pi / 2]))
    set_contact(depart_mps=0.15)
    try:
        motion = arm.start("grasp", pose=GraspPose(cube_at, turned, 0.05), width=0.05, force=40.0)
        samples = []  # (sim clock, tcp z, |cos| of the turn from the start orientation)
        while motion.poll() is None:
            p, o = arm.tcp_pose()
            samples.append((arm.clock, float(p[2]), abs(float(np.dot(o, orn0)))))
            if p[2] > z0 + DEPART_M + 0.04:
                motion.cancel()
                break
    finally:
        reset_contact()
    slow = [s for s in samples if s[1] < z0 + DEPART_M - 0.005]
    speeds = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(slow, slow[1:], strict=False)]
    assert len(slow) > 5 and max(speeds) < 0.15 * 1.2
    assert min(s[2] for s in slow) > 0.999  # not turned while among the objects
    fast = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(samples, samples[1:], strict=False)
            if a[1] > z0 + DEPART_M + 0.005]
    assert fast and max(fast) > 0.4  # free transit once clear
    assert arm.launches() == []
