"""A grasp that held a neighbour teaches the next plan (bt_grasp/aim_memory.py): the same
visible target is grasped again unlike the failed grasp, after two wrong holds it is pushed
clear instead of grasped again (clutter.yaml: grasp_or_push), and only the robot's own
re-perception (the perceptual semantic check) teaches it, never a ground-truth oracle."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from helpers import ROOT

from bt_grasp.aim_memory import aimed_grasp, grasp_shape, like, note_wrong_hold, wrong_holds_on
from bt_grasp.api import run
from bt_grasp.drivers.base import GraspPose
from bt_grasp.outcomes import Label
from bt_grasp.perception.geometry import quat_from_matrix
from bt_grasp.perception.push import PushPlan
from bt_grasp.services import RunMemory
from bt_grasp.testing.fake_arm import FakeArm, FakePerceiver
from bt_grasp.watchdog.verdict import Verdict

MUG = np.array([0.5, 0.0, 0.05])  # where FakePerceiver locates the red mug


def _pose(dx: float = 0.0, yaw_deg: float = 0.0, tilt_deg: float = 0.0) -> GraspPose:
    """A grasp on the mug: closing along `yaw_deg`, approaching straight down or tilted."""
    c, s = np.cos(np.radians(yaw_deg)), np.sin(np.radians(yaw_deg))
    down = np.array([[c, s, 0.0], [s, -c, 0.0], [0.0, 0.0, -1.0]])
    t = np.radians(tilt_deg)
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(t), -np.sin(t)], [0.0, np.sin(t), np.cos(t)]])
    return GraspPose(MUG + [dx, 0.0, 0.0], quat_from_matrix(down @ tilt), 0.06, 1.0)


# ranked as a planner would: the second is the first moved 5 mm (the same grasp), the third
# closes across it, the fourth comes in tilted
PLAN = [_pose(), _pose(dx=0.005), _pose(yaw_deg=90.0), _pose(tilt_deg=30.0)]


def _services(semantic_verifier=None) -> dict:
    held = Verdict(Label.SUCCESS, 1.0, {"rule": "held", "reason": "fingers stopped on an object"})
    pushed = PushPlan(True, MUG + [0.05, 0, 0], MUG - [0.05, 0, 0], 0.04, (-1.0, 0.0, 0.0))
    services = {"classify": lambda telemetry: held, "plan_grasps": lambda obs, located: list(PLAN),
                "plan_push": lambda *args, **kwargs: pushed}
    if semantic_verifier is not None:
        services["semantic_verifier"] = semantic_verifier
    return services


def _actions(result) -> list[tuple[str, object]]:
    """(primitive, grasp pose) of each grasp and push the run executed, in order."""
    return [(e.primitive, e.metadata.get("pose")) for e in result.events
            if e.primitive in ("grasp", "push") and e.metadata.get("outcome") == "done"]


def test_a_wrong_hold_re_plans_unlike_it_and_two_push_the_target_clear():
    """The fake camera never changes, so the perceptual check sees the mug's surface unmoved after
    each grasp: the fingers held a neighbour. The second grasp skips the plan like the first (5 mm
    off) and closes across it; after two wrong holds the mug is pushed, not grasped a third time."""
    result = run(ROOT / "trees" / "clutter.yaml", driver=FakeArm(), perceiver=FakePerceiver(),
                 services=_services())
    actions = _actions(result)
    assert [kind for kind, _ in actions[:3]] == ["grasp", "grasp", "push"], actions
    first, second = (np.array(pose) for _, pose in actions[:2])
    assert np.allclose(first, np.concatenate([PLAN[0].position, PLAN[0].orientation]), atol=1e-3)
    assert np.allclose(second, np.concatenate([PLAN[2].position, PLAN[2].orientation]), atol=1e-3)
    assert all(kind == "push" for kind, _ in actions[2:])  # never a third grasp on the same mug
    refused = [e for e in result.events if e.primitive == "grasp" and e.metadata.get("outcome") == "infeasible"]
    assert refused and "2 grasps on red mug held a neighbour" in refused[0].metadata["reason"]
    assert result.decision.value == "WAIT_CLARIFY"


def test_a_ground_truth_verdict_routes_the_tree_but_teaches_the_planner_nothing():
    """A semantic verifier that is not the robot's perception (here an oracle saying "held
    another body", as the simulator's ground truth would) still sends the held object to the
    basket, but every grasp keeps the planner's first choice and none is refused."""
    def ground_truth(ctx):
        return False, "ground truth: the gripper holds another body"

    result = run(ROOT / "trees" / "clutter.yaml", driver=FakeArm(), perceiver=FakePerceiver(),
                 services=_services(ground_truth))
    actions = _actions(result)
    assert len(actions) >= 3 and {kind for kind, _ in actions} == {"grasp"}
    first = np.concatenate([PLAN[0].position, PLAN[0].orientation])
    assert all(np.allclose(pose, first, atol=1e-3) for _, pose in actions)
    assert not [e for e in result.events if e.primitive == "grasp" and e.metadata.get("outcome") == "infeasible"]


def test_a_grasp_is_like_a_failed_one_only_with_the_same_approach_point_and_direction():
    """5 mm and 20 degrees off (or 175: a parallel gripper is symmetric) is the same grasp; 3 cm
    off, 60 degrees turned or a tilted approach is another."""
    located = SimpleNamespace(name="red mug", points_base=np.array([MUG]))
    failed = aimed_grasp("target", located, _pose(yaw_deg=10.0))
    assert failed is not None and grasp_shape(_pose(tilt_deg=30.0))[1] == "tilted"
    assert like(_pose(dx=0.005, yaw_deg=30.0), failed) and like(_pose(yaw_deg=175.0), failed)
    assert not like(_pose(dx=0.03, yaw_deg=10.0), failed)
    assert not like(_pose(yaw_deg=70.0), failed)
    assert not like(_pose(yaw_deg=10.0, tilt_deg=30.0), failed)


def test_wrong_holds_count_for_the_target_where_it_lies_and_each_is_noted_once():
    """A wrong hold belongs to the target lying where it lay; pushed 6 cm away it is a fresh
    target, and an object the search takes from that place is not the target. A hold noted
    twice (micro-lift, then after the lift) counts once."""
    memory = RunMemory()
    located = SimpleNamespace(name="red mug", points_base=np.array([MUG]))
    memory.last_grasp = aimed_grasp("target", located, _pose())
    assert note_wrong_hold(memory) is not None and note_wrong_hold(memory) is None
    assert len(wrong_holds_on(memory.wrong_holds, "target", located)) == 1
    renamed = SimpleNamespace(name="red cup", points_base=np.array([MUG + [0.03, 0, 0]]))
    assert len(wrong_holds_on(memory.wrong_holds, "target", renamed)) == 1
    pushed = SimpleNamespace(name="red mug", points_base=np.array([MUG + [0.06, 0, 0]]))
    assert wrong_holds_on(memory.wrong_holds, "target", pushed) == []
    assert wrong_holds_on(memory.wrong_holds, "hider", located) == []  # another role: not the target
