"""Aim: a grasp is attributed to the object its plan was made for (by the instance ids under that
object's mask), not to the body nearest the fingers; aim accuracy counts holds of that object."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from bt_grasp.bench.aim import aim_counts, aim_of, neighbour_grasps, recording_plans, yaw_deg
from bt_grasp.bench.instrument import DriverProxy, Probe, timed_services
from bt_grasp.drivers.base import GraspPose
from bt_grasp.services import Services


def _pose(x: float, yaw: float = 0.0, width: float = 0.05) -> GraspPose:
    half = math.radians(yaw) / 2
    return GraspPose(np.array([x, 0.0, 0.03]), np.array([0.0, 0.0, math.sin(half), math.cos(half)]), width)


def _frame() -> SimpleNamespace:
    """A 4x4 frame: body 7 on the left half, body 9 on the right (instance ids, scoring only)."""
    instance = np.full((4, 4), -1)
    instance[:, :2], instance[:, 2:] = 7, 9
    return SimpleNamespace(annotations={"instance": instance})


def _located(name: str, cols: slice) -> SimpleNamespace:
    mask = np.zeros((4, 4), bool)
    mask[:, cols] = True
    return SimpleNamespace(name=name, mask=mask)


def test_a_pose_is_aimed_at_the_object_its_plan_was_made_for():
    plans: list = []
    ball, can = [_pose(0.1), _pose(0.11)], [_pose(0.3)]
    planner = recording_plans(lambda obs, loc: {"green ball": ball, "purple can": can}[loc.name], plans)
    obs = _frame()
    planner(obs, _located("green ball", slice(0, 2)))
    planner(obs, _located("purple can", slice(2, 4)))
    aim = aim_of(plans, ball[1])
    assert (aim["aimed_body"], aim["aimed_as"], aim["aimed_purity"]) == (7, "green ball", 1.0)
    assert aim["plan"]["rank"] == 1 and aim["plan"]["candidates"] == 2
    assert aim_of(plans, _pose(0.3))["aimed_body"] == 9  # an equal pose, not the same object
    assert aim_of(plans, _pose(0.9))["aimed_body"] is None  # no plan proposed it: unknown, not a miss


@pytest.mark.parametrize("yaw", [0.0, 45.0, 90.0, -120.0])
def test_the_plan_summary_gives_the_closing_axis_heading(yaw):
    assert yaw_deg(_pose(0.0, yaw).orientation) == pytest.approx(yaw)


def test_the_bench_probe_records_the_aim_of_every_grasp_the_driver_runs():
    """Through the benchmark's proxies: the planner service is wrapped, the driver's grasp call is
    matched to the plan its pose came from, and the body the driver calls nearest is kept apart."""
    probe = Probe()
    services = timed_services(Services(plan_grasps=lambda obs, loc: [_pose(0.1 if loc.name == "ball" else 0.3)]), probe)
    info = {"object": "red can", "held": "red can"}
    driver = SimpleNamespace(grasp=lambda pose, width, force: SimpleNamespace(info=info, fault=None))
    proxy = DriverProxy(driver, probe)
    obs = _frame()
    pose = services.plan_grasps(obs, _located("ball", slice(0, 2)))[0]
    services.plan_grasps(obs, _located("can", slice(2, 4)))
    proxy.grasp(pose, pose.width, 60.0)
    (g,) = probe.grasps
    assert g["aimed_body"] == 7 and g["aimed_as"] == "ball" and g["object"] == "red can" and g["executed"]


def test_aim_accuracy_counts_only_executed_holds_with_a_known_aim():
    attempts = [{"aimed": "ball", "held": "ball", "executed": True},
                {"aimed": "ball", "held": "can", "executed": True},
                {"aimed": "ball", "held": None, "executed": True},  # empty: not a hold
                {"aimed": None, "held": "can", "executed": True},  # aim unknown
                {"aimed": "ball", "held": "ball", "executed": False}]
    assert aim_counts(attempts) == (1, 2)
    assert [a["held"] for a in neighbour_grasps(attempts, "ball")] == ["can"]
    assert neighbour_grasps(attempts, None) == []


def test_a_task_built_around_a_goal_text_keeps_its_own_key():
    """Replaying the scene a goal chooses (tools/aim_replay.py --goal) never reuses a name episode's key."""
    from bt_grasp.bench.tasks import Task

    plain = Task("trees/clutter.yaml", "geometric", "easy", 300, 2, 512)
    aimed = Task("trees/clutter.yaml", "geometric", "easy", 300, 2, 512, goal="the large green ball")
    assert plain.key == "clutter|geometric|easy|512|300|2"
    assert aimed.key == plain.key + "|goal=the large green ball"
