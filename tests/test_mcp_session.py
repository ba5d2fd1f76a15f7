"""ToolSession (the transport-free half of `bt-grasp serve`) against the PyBullet arm at 256².

What is pinned: every tool tree is PROVEN on its own; the episode's action budget and
perception-streak guard count across calls; once spent, every call is a terminal WAIT_CLARIFY
that does not touch the robot; bad input is a result, never an exception.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import arm_world

from bt_grasp.context import EpisodeLimits
from bt_grasp.drivers.base import Execution
from bt_grasp.mcp_server.session import ToolSession
from bt_grasp.mcp_server.tool_trees import CALL_FAILED, CALL_OK, STEPS, tool_registry, tool_tree_text
from bt_grasp.outcomes import LABELS, ExecStatus
from bt_grasp.profile import load_profile
from bt_grasp.spec.loader import load_tree_text
from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.world import World

ARM_TOOLS = {"survey_scene", "locate_object", "grasp", "push", "place", "lift", "open_gripper",
             "verify_tree", "run_tree",
             "finish", "reset_episode", "status"}


@pytest.fixture(scope="module")
def world():
    w = arm_world(image_size=256)
    yield w
    w.close()


def session(world, actions: int = 10, streak: int = 5, **kw) -> ToolSession:
    return ToolSession(world, EpisodeLimits(actions, streak, 1000), seed=0, **kw)


def assert_jsonable(result: dict) -> None:
    json.dumps(result)  # what the MCP layer will send; must not need a custom encoder


# -- the trees ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(STEPS))
def test_every_tool_tree_is_proven_and_small(name: str) -> None:
    from bt_grasp.verifier_api import verify_tree

    reg = tool_registry()
    spec = load_tree_text(tool_tree_text(name), file=f"<mcp:{name}>", registry=reg)
    res = verify_tree(spec, registry=reg)
    assert res.proven, res.problem
    assert res.bounds["actions"] <= 1 and res.bounds.get("perception", 0) <= 1
    # one tool call = its steps' calls, each spanning at most its node type's max_ticks ticks
    assert res.bounds["ticks"] <= sum(reg.require(n.type).max_ticks for n in spec.root.walk())
    # every run ends in one of the two call markers the session reads back
    ends = {e for e in res.endings if not e.startswith("(")}
    assert ends <= {f"FINALIZE: {CALL_OK}", f"FINALIZE: {CALL_FAILED}"} and ends


def test_mobile_leaves_stay_out_of_the_shared_registry() -> None:
    """The server's nav_to/gaze_at live in a private registry copy: they win there (so the tool
    trees keep their ports) and never replace a core type of the same name in the default."""
    from bt_grasp.default_registry import default_registry
    from bt_grasp.mcp_server.mobile import MOBILE_TYPES

    reg = tool_registry()
    for nt in MOBILE_TYPES:
        assert reg.get(nt.name) is nt
        assert default_registry().get(nt.name) is not nt


# -- perception ---------------------------------------------------------------------------

def test_survey_then_locate_by_a_name_from_the_scene(world) -> None:
    s = session(world)
    assert set(s.tools()) == ARM_TOOLS
    survey = s.call("survey_scene")
    assert_jsonable(survey)
    assert survey["ok"] and survey["outcome"] == "found" and not survey["terminal"]
    names = [o["name"] for o in survey["scene"]["objects"]]
    assert survey["scene"]["n_objects"] == len(names) > 0
    assert all(len(r) == 3 and r[0] in names and r[2] in names for r in survey["scene"]["relations"])
    assert survey["perception_streak"] == 1 and survey["actions_used"] == 0

    task = s.call("status")["task"]
    assert task in names
    loc = s.call("locate_object", target=task)
    assert_jsonable(loc)
    assert loc["outcome"] in ("found", "occluded") and loc["ok"]
    mask = loc["mask"]
    assert mask["name"] == task and mask["n_points"] > 0 and mask["mask_pixels"] > 0
    u0, v0, u1, v1 = mask["bbox"]
    assert 0 <= u0 <= u1 < 256 and 0 <= v0 <= v1 < 256
    assert len(mask["centroid_base"]) == 3
    assert loc["perception_streak"] == 2  # counted across calls


def test_unknown_or_empty_target_is_a_result_not_an_exception(world) -> None:
    s = session(world)
    miss = s.call("locate_object", target="purple unicorn")
    assert miss["outcome"] == "not_found" and miss["mask"] is None and not miss["ok"]
    assert miss["visible"]  # what *is* there, so the planner can rephrase
    for bad in ("", "   ", None, 42, "x" * 500):
        r = s.call("locate_object", target=bad)
        assert r["outcome"] == "invalid_input" and r["error"], bad
    g = s.call("grasp", target="purple unicorn")
    assert g["outcome"] == "not_found" and g["attempted"] is False
    # locate failed first, so the grasp leaf (and its action guard) never ran: nothing spent
    assert g["actions_used"] == 0 and s.ledger.primitive_calls.get("grasp", 0) == 0


# -- manipulation -------------------------------------------------------------------------

def test_grasp_returns_the_watchdog_verdict(world) -> None:
    s = session(world)
    task = s.call("status")["task"]
    g = s.call("grasp", target=task)
    assert_jsonable(g)
    assert g["attempted"] and g["label"] in LABELS
    assert g["ok"] == (g["label"] == "SUCCESS" and g["semantic"] not in ("mismatch", "unknown"))
    assert isinstance(g["confidence"], float) and 0.0 <= g["confidence"] <= 1.0
    assert g["exec_status"] in {e.value for e in ExecStatus}
    assert g["event"]["trial_id"].startswith(s.run_id) and g["event"]["label"] == g["label"]
    assert g["actions_used"] == 1 and g["perception_streak"] == 0 and g["clock"] > 1.0
    assert g["mask"]["name"] == task
    # the blackboard persists: a second grasp may reuse the located target without a new locate
    s.call("open_gripper")
    again = s.call("grasp")
    assert again["attempted"] and again["actions_used"] == 2 and "mask" not in again


def test_push_and_motion_tools(world) -> None:
    s = session(world)
    task = s.call("status")["task"]
    p = s.call("push", target=task, direction="left", distance=0.05)
    assert_jsonable(p)
    assert p["outcome"] in ("done", "infeasible", "clutter_too_dense", "fault")
    assert p["actions_used"] == 1
    for tool, args in (("lift", {"height": 0.05}), ("open_gripper", {}), ("place", {"target": "basket"})):
        r = s.call(tool, **args)
        assert r["outcome"] in ("done", "fault", "infeasible"), r
        assert r["actions_used"] == 1  # lift/place/open do not spend actions
    nowhere = s.call("place", target="shelf")
    assert not nowhere["ok"] and "unknown place target" in nowhere.get("why", "")


# -- budgets across calls -------------------------------------------------------------------

def _spy(world, monkeypatch) -> list[str]:
    touched: list[str] = []
    for name in ("observe", "grasp", "push", "lift", "place", "open_gripper", "reset"):
        original = getattr(world.driver, name)

        def wrapper(*a, _n=name, _f=original, **k):
            touched.append(_n)
            return _f(*a, **k)

        monkeypatch.setattr(world.driver, name, wrapper)
    return touched


def test_spent_action_budget_makes_every_call_terminal_without_touching_the_robot(world, monkeypatch) -> None:
    s = session(world, actions=1)
    task = s.call("status")["task"]
    first = s.call("grasp", target=task)
    assert first["attempted"] and not first["terminal"] and first["actions_left"] == 0
    touched = _spy(world, monkeypatch)
    refused = s.call("grasp")
    assert refused["terminal"] and refused["decision"] == "WAIT_CLARIFY"
    assert "action budget spent" in refused["reason"] and refused["outcome"] == "terminal"
    for tool, args in (("survey_scene", {}), ("locate_object", {"target": task}), ("push", {}),
                       ("place", {}), ("open_gripper", {}), ("finish", {})):
        r = s.call(tool, **args)
        assert r["terminal"] and r["decision"] == "WAIT_CLARIFY" and r["outcome"] == "terminal", tool
    assert touched == []
    st = s.call("status")
    assert st["ok"] and st["terminal"] and st["counters"]["actions"] == 1


def test_perception_streak_guard_spans_calls(world) -> None:
    s = session(world, streak=2)
    assert not s.call("survey_scene")["terminal"]
    assert not s.call("locate_object", target="red")["terminal"]
    third = s.call("survey_scene")
    assert third["terminal"] and third["decision"] == "WAIT_CLARIFY"
    assert "perception loop" in third["reason"]
    assert s.call("grasp", target="red")["outcome"] == "terminal"


def test_manipulation_resets_the_perception_streak(world) -> None:
    s = session(world, streak=2)
    task = s.call("status")["task"]
    s.call("survey_scene")
    assert s.call("grasp", target=task)["perception_streak"] == 0  # locate counted, then grasp reset it
    s.call("open_gripper")
    assert not s.call("survey_scene")["terminal"]
    assert not s.call("survey_scene")["terminal"]


def test_reset_episode_starts_a_new_episode(world) -> None:
    s = session(world, actions=0)
    assert s.call("push", target="red")["terminal"]
    r = s.call("reset_episode", episode=1, seed=3)
    assert_jsonable(r)
    assert r["ok"] and not r["terminal"] and r["actions_used"] == 0 and r["episode"] == 1
    assert r["previous_episode"]["decision"] == "WAIT_CLARIFY"
    assert r["task"] and s.call("survey_scene")["ok"]
    assert s.call("reset_episode", seed=-1)["outcome"] == "invalid_input"


def test_finish_is_the_planners_decision(world) -> None:
    s = session(world)
    assert s.call("finish", decision="maybe")["outcome"] == "invalid_input"
    done = s.call("finish", decision="finalize", reason="mug in basket")
    assert done["terminal"] and done["decision"] == "FINALIZE" and done["reason"] == "mug in basket"
    assert s.call("survey_scene")["decision"] == "FINALIZE"


# -- validation and containment -------------------------------------------------------------

def test_invalid_inputs_spend_nothing(world) -> None:
    s = session(world)
    cases = [("push", {"target": "red", "direction": "sideways"}),
             ("push", {"target": "red", "distance": 2.0}),
             ("push", {"target": "red", "distance": float("nan")}),
             ("grasp", {}),  # nothing located yet
             ("grasp", {"target": "red", "force": -1}),
             ("lift", {"height": "high"}),
             ("nav_to", {"x": 1.0, "y": 0.0}),  # the arm has no base
             ("teleport", {}),
             ("survey_scene", {"verbose": True}),
             ("grasp", {"tool": "push"})]
    for tool, args in cases:
        r = s.call(tool, **args)
        assert r["outcome"] == "invalid_input" and r["error"] and not r["terminal"], (tool, args)
    assert s.ledger.actions == 0 and s.ledger.perception_calls == 0


def test_driver_exceptions_come_back_as_results(world, monkeypatch) -> None:
    s = session(world)

    def boom():
        raise RuntimeError("camera unplugged")

    monkeypatch.setattr(world.driver, "observe", boom)
    r = s.call("survey_scene")
    assert not r["ok"] and "camera unplugged" in r["error"]
    monkeypatch.setattr(s, "_run", lambda *a, **k: 1 / 0)
    r = s.call("locate_object", target="red")
    assert r["outcome"] == "error" and "ZeroDivisionError" in r["error"]


# -- mobile robots --------------------------------------------------------------------------

class _MobileStub:
    """Enough of a mobile driver to show the tools appear and run as trees (no simulator)."""

    name = "stub"

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def reset(self, episode=0, seed=0):
        self.calls.append(("reset", episode, seed))

    def nav_to(self, place, timeout=None):
        self.calls.append(("nav_to", tuple(place)))
        return Execution(Telemetry.empty(), 2.5)

    def gaze_at(self, point, timeout=None):
        self.calls.append(("gaze_at", tuple(np.asarray(point).tolist())))
        return Execution(Telemetry.empty(), 0.5, "timeout")


def test_mobile_tools_when_the_driver_has_them() -> None:
    drv = _MobileStub()
    s = ToolSession(World(load_profile("stretch3"), drv, None, {}), EpisodeLimits(2, 2, 50))
    assert {"nav_to", "gaze_at"} <= set(s.tools())
    r = s.call("nav_to", x=1.0, y=-0.5, theta=0.3)
    assert r["ok"] and r["outcome"] == "done" and r["clock"] >= 2.5
    assert ("nav_to", (1.0, -0.5, 0.3)) in drv.calls
    g = s.call("gaze_at", point=[1, 0, 0.5])
    assert g["outcome"] == "done" and g["why"] == "timeout"  # a timed-out motion is 'done' + why
    assert s.call("gaze_at", point=[1, 0])["outcome"] == "invalid_input"
    named = s.call("nav_to", place="kitchen counter")
    assert named["ok"] and ("nav_to", tuple("kitchen counter")) in drv.calls
    for bad in ({"x": 1.0}, {"x": 1.0, "y": 0.0, "place": "sofa"}, {"x": 1e9, "y": 0.0}):
        assert s.call("nav_to", **bad)["outcome"] == "invalid_input", bad
    assert s.ledger.actions == 0 and s.ledger.primitive_calls == {"nav_to": 2, "gaze_at": 1}


def test_simulated_stretch_gets_the_mobile_tools() -> None:
    pytest.importorskip("stretch_urdf", reason="hello-robot-stretch-urdf not installed")
    from bt_grasp.world import build_world

    w = build_world(load_profile("stretch3"))
    try:
        s = ToolSession(w, EpisodeLimits(2, 5, 100), seed=0)
        assert {"nav_to", "gaze_at"} <= set(s.tools())
        assert s.call("survey_scene")["ok"]
        moved = s.call("nav_to", x=0.1, y=0.0)
        assert moved["outcome"] in ("done", "fault", "infeasible") and moved["event"]["primitive"] == "nav_to"
        assert s.call("status")["counters"]["primitive_calls"] == {"nav_to": 1}
    finally:
        w.close()
