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
