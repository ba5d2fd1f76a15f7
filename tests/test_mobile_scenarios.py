"""The household scene, the mobile tools on the simulated Stretch, and one trial per scenario.

One simulated household world is shared by the module (loading the URDF costs ~1.5 s); every
trial resets the scene. Everything here is simulation (see drivers/stretch/sim/household.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("stretch_urdf", reason="hello-robot-stretch-urdf not installed")

from bt_grasp.drivers.stretch.sim.room import Placement  # noqa: E402
from bt_grasp.mobile.scenarios import SCENARIOS, make_world, run_trial  # noqa: E402


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One household world for the module; Set-of-Mark PNGs go to a temporary folder."""
    old = os.environ.get("BT_GRASP_TRACE_DIR")
    os.environ["BT_GRASP_TRACE_DIR"] = str(tmp_path_factory.mktemp("marks"))
    w = make_world()
    yield w
    w.close()
    if old is None:
        os.environ.pop("BT_GRASP_TRACE_DIR", None)
    else:
        os.environ["BT_GRASP_TRACE_DIR"] = old


def test_static_filter_and_settle(world) -> None:
    d = world.driver
    d.world.layout = [Placement("small red can", "large table", (0.0, -0.62)),
                      Placement("blue cube", "small table", (0.05, -0.66))]
    d.reset(seed=0)
    assert d.world.valid, d.world.invalid_reason
    assert d.world.receptacle_of("small red can") == "large table"
    assert d.world.receptacle_of("blue cube") == "small table"
    d.world.layout = [Placement("small red can", "large table", (0.0, -1.20))]  # off the far edge
    d.reset(seed=0)
    assert not d.world.valid and "static filter" in d.world.invalid_reason
    d.world.layout = None


def test_nav_drawer_and_unknown_receptacle(world) -> None:
    d = world.driver
    d.reset(seed=1)
    assert d.open("cabinet drawer").fault.startswith("infeasible")  # not at the cabinet yet
    ex = d.nav_to("cabinet")
    assert ex.fault is None and d.located_at() == "cabinet"
    assert ex.info["standoff"] == pytest.approx([2.8, 0.0, 1.571], abs=1e-3)
    assert d.open("cabinet drawer").fault is None and d.world.drawer_position() > 0.2
    assert d.close_articulated("cabinet drawer").fault is None and d.world.drawer_position() < 0.03
    assert d.nav_to("fridge").fault.startswith("infeasible")


def _run_tree(world, tmp_path: Path, text: str, layout: list[Placement]):
    """Run tree `text` asking for the red can with `layout` on the tables; the result and the
    trace's text. The scenario layout is restored afterwards, for the other tests."""
    from bt_grasp.episode import run_episode

    tree, trace = tmp_path / "tree.yaml", tmp_path / "trace.jsonl"
    tree.write_text(text)
    world.driver.world.layout = layout
    try:
        res = run_episode(str(tree), world=world, goal="Bring me the red can", trace=str(trace))
    finally:
        world.driver.world.layout = None
    return res, trace.read_text()


def test_stale_marker_is_routable_outcome(world, tmp_path: Path) -> None:
    res, _ = _run_tree(world, tmp_path, """tree: stale
root:
  sequence:
    children:
      - nav_to: {receptacle: large table}
      - show_object_by_category: {category: "{goal.object}"}
      - nav_to: {receptacle: small table}
      - selector:
          children:
            - pick: {id: p, marker: "{objects.best}"}
            - label_is: {key: "{pick.outcome}", label: stale_marker}
      - wait_clarify: {reason: "marker went stale as expected"}
""", [Placement("small red can", "large table", (0.0, -0.62))])
    assert res.reason == "marker went stale as expected"
    assert res.actions == 1 and any(e.metadata.get("outcome") == "stale_marker" for e in res.events)


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s != "goal_revision"])  # its own test below
def test_agentic_scenario(world, scenario: str) -> None:
    t = run_trial(world, scenario, "agentic", seed=0)
    assert t.valid
    assert t.success, (t.decision, t.reason, t.picks, t.wrong_picks)
    assert t.wrong_picks == 0
    if scenario == "no_valid_target":
        assert t.decision == "WAIT_CLARIFY" and t.picks == 0
    if scenario == "induced_empty":
        assert t.picks == 2 and t.empty_picks == 1  # one retry after the Watchdog's EMPTY


def test_open_loop_is_fooled_where_the_agent_is_not(world) -> None:
    t = run_trial(world, "induced_empty", "open_loop", seed=0)
    assert t.decision == "FINALIZE" and not t.success and t.empty_picks == 1  # believed an empty grasp


def test_goal_revision_shows_in_the_trace(world, tmp_path: Path) -> None:
    """The goal_revision scenario's agentic trial (not run again by test_agentic_scenario): the
    user revises while the robot drives to the first table; the revised object is delivered.
    A streaming robot halts the drive in the tick the guard hears the user; a robot whose motions
    block hears it at the first guard after the drive."""
    from bt_grasp.drivers.capabilities import Streaming

    trace = tmp_path / "rev.jsonl"
    t = run_trial(world, "goal_revision", "agentic", seed=0, trace=str(trace))
    assert t.valid and t.success and t.revised and t.wrong_picks == 0, (t.decision, t.reason)
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    text = json.dumps(records)
    assert '"goal.object": "blue can"' in text and "revised" in text
    ticks = [r for r in records if r["type"] == "tick"]
    heard = [r for r in ticks if any(node.startswith("guard") and status == "FAILURE" for node, status in r["visited"])]
    assert len(heard) == 1
    halted = [e for e in t.events if e["metadata"].get("halted")]
    if isinstance(world.driver, Streaming):
        [event] = halted
        assert event["node"] == "go_large" and event["metadata"]["halted"] in ("halted", "preempted")
        assert [e["node"] for e in heard[0]["events"]] == ["go_large"]  # in the tick the user was heard
        assert event["metadata"]["duration"] < 7.0  # the drive to the table takes about 7.5 s
    else:
        assert not halted


def test_walk_around_and_drawer_through_the_tree(world, tmp_path: Path) -> None:
    res, text = _run_tree(world, tmp_path, """tree: drawer
root:
  sequence:
    children:
      - nav_to: {receptacle: large table}
      - walk_around: {views: 3}
      - nav_to: {receptacle: cabinet}
      - show_receptacles: {target: cabinet}
      - open: {id: o, marker: "{receptacles.best}"}
      - close: {id: c, marker: "{receptacles.best}"}
      - finish: {reason: "drawer opened and closed"}
""", [Placement("small red can", "large table", (0.0, -0.62)), Placement("blue cube", "large table", (0.12, -0.72))])
    assert res.decision.value == "FINALIZE", res.reason
    assert "0: a small red can" in text or "0: a blue cube" in text
    assert [e.metadata.get("handle") for e in res.events if e.node in ("o", "c")] == ["cabinet drawer"] * 2


NEW = ["salient_distractor", "spatial_qualifier", "colour_similar"]


@pytest.mark.parametrize("scenario", NEW)
def test_a_most_visible_pick_takes_the_distractor_the_request_does_not(world, scenario: str) -> None:
    """Scene design, with both backends: among the marked objects the distractor is the most
    visible, and the request (qualifiers included) picks out the target or says it is ambiguous."""
    import numpy as np

    from bt_grasp.goal_text import goal_object
    from bt_grasp.mobile.som import MATCH_MIN, LexicalMatcher
    from bt_grasp.mobile.target import select
    from bt_grasp.perception.backends import make_perceiver

    setup = SCENARIOS[scenario](np.random.default_rng(1))
    d = world.driver
    d.world.layout = setup.layout
    d.reset(seed=1)
    d.nav_to("large table")
    obs = d.observe()
    d.world.layout = None
    target, distractor = list(d.world.objects)  # layout order: target first
    inst = obs.annotations["instance"]
    text = goal_object(setup.instruction)
    for backend in ("sim", "geometric"):
        scene = make_perceiver(backend).survey(obs)
        marked = [o for o in scene.objects if LexicalMatcher().score(text, o) >= MATCH_MIN]
        body = {o.id: int(np.bincount(inst[o.mask & (inst >= 0)]).argmax()) for o in marked}
        assert sorted(body.values()) == sorted([target, distractor]), backend
        most_visible = max(marked, key=lambda o: o.attributes["pixels"])
        assert body[most_visible.id] == distractor, backend
        sel = select(text, scene, marked)
        assert sel.best is not None and (body[sel.best.id] == target or sel.reason.startswith("ambiguous")), backend


def test_open_loop_takes_the_salient_distractor(world) -> None:
    t = run_trial(world, "colour_similar", "open_loop", seed=0)
    assert t.picks == 1 and t.wrong_picks == 1 and not t.success


def test_agentic_with_geometric_perception(world) -> None:
    t = run_trial(world, "spatial_qualifier", "agentic", seed=0, perception="geometric")
    assert t.perception == "geometric" and t.success and t.wrong_picks == 0, (t.decision, t.reason)
