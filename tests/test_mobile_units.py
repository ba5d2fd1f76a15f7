"""Mobile tools without a simulator: floor planning, the simulated user's rules, the category
matcher, answer resolution, stale markers, and the verifier on the shipped mobile trees."""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from bt_grasp.mobile.nav import OccupancyGrid, Rect, astar, line_cells, plan_to
from bt_grasp.mobile.som import LexicalMatcher, Mark
from bt_grasp.mobile.user import Revision, SeenItem, SimulatedUser
from bt_grasp.nodes.mobile_dialogue import resolve_answer
from bt_grasp.nodes.mobile_marks import _lookup
from bt_grasp.perception.types import SceneObject
from bt_grasp.services import RunMemory

ROOT = Path(__file__).resolve().parents[1]


def _grid() -> OccupancyGrid:
    g = OccupancyGrid.room(-1.0, 4.0, -2.5, 2.5)
    g.add_rect(Rect(1.5, -1.95, 1.2, 0.6), 1, "large table")
    g.add_rect(Rect(1.5, 0.0, 0.6, 1.0), 100, "sofa")
    return g


def test_astar_path_stays_out_of_inflated_obstacles() -> None:
    g = _grid()
    blocked = g.inflated()
    path = astar(blocked, g.cell_of(0.0, 0.0), g.cell_of(3.0, 0.0))
    assert path is not None
    assert not any(blocked[c] for c in path[1:-1])
    # it had to go around the sofa: some cell leaves the straight line y = 0 by > 0.5 m
    assert max(abs(g.centre_of(*c)[1]) for c in path) > 0.5


def test_standoff_is_collision_free_with_line_of_sight() -> None:
    g = _grid()
    plan = plan_to(g, (0.0, 0.0), "large table", Rect(1.5, -1.95, 1.2, 0.6), 1, ("+y", "-y"))
    assert plan is not None
    assert plan.goal == pytest.approx((1.5, -1.2, 0.0))
    assert plan.rejected["-y"] in ("standoff in collision", "no line of sight")  # against the wall
    assert math.dist(plan.waypoints[0], (0.0, 0.0)) < 1e-9 and plan.length_m >= math.dist((0, 0), (1.5, -1.2))


def test_line_cells_endpoints() -> None:
    cells = line_cells((0, 0), (5, 3))
    assert cells[0] == (0, 0) and cells[-1] == (5, 3) and len(cells) == 6


def _seen() -> list[SeenItem]:
    return [SeenItem(0, "a small red can", "small red can", (0.5, 0.4), "red", "can", 11),
            SeenItem(1, "a small blue can", "small blue can", (0.5, 0.6), "blue", "can", 12)]


def test_user_never_speaks_ids_or_positions_and_names_only_after_seeing() -> None:
    u = SimulatedUser("Bring me the can", frozenset({"small blue can"}))
    nothing = u.answer("Which one? I see 0: a red cube.", [SeenItem(0, "a red cube", "red cube", (0.5, 0.5), "red")])
    assert "blue" not in nothing and not re.search(r"\d", nothing)
    ans = u.answer("Which one? I see 0: a small red can, 1: a small blue can.", _seen())
    assert ans == "The blue one."
    for _, text in u.log:
        assert "table" not in text.lower() and "cabinet" not in text.lower()


def test_user_spatial_and_any_answers() -> None:
    same = [SeenItem(0, "a small red can", "small red can", (0.5, 0.4), "red", "can", 11),
            SeenItem(1, "a small red can", "small red can", (0.5, 0.6), "red", "can", 12)]
    u = SimulatedUser("Bring me the red can", frozenset({"small red can"}), target_bodies=frozenset({12}))
    assert u.answer("Which one?", same) == "The one in front."
    v = SimulatedUser("Bring me a red can", frozenset({"small red can"}))
    assert v.answer("Which one?", same) == "Any of those is fine."


def test_user_revision_is_delivered_once_through_poll() -> None:
    u = SimulatedUser("Bring me the red can", frozenset({"small red can"}),
                      Revision(1, "Bring me the blue can", frozenset({"small blue can"})))
    assert u.poll() is None
    u.report_seen(_seen())
    assert u.poll() == "Bring me the blue can" and u.poll() is None
    assert u.targets == frozenset({"small blue can"})


def _obj(i: int, name: str, colour: str, category: str, size: str = "small") -> SceneObject:
    return SceneObject(i, name, name, (0.5, 0.5), i, {"colour": colour, "category": category, "size": size})


def test_lexical_matcher_uses_synonyms_and_attributes() -> None:
    m = LexicalMatcher()
    can = _obj(1, "small red can", "red", "can")
    assert m.score("red cylinder", can) >= 0.5  # synonym, not string equality
    assert m.score("tin", can) >= 0.5
    assert m.score("blue can", can) < 0.5
    assert m.score("mug", can) < 0.5


def test_resolve_answer() -> None:
    marks = {0: Mark(0, "object", "small red can", 0, point2d=(0.5, 0.4), attributes={"colour": "red", "category": "can"}),
             1: Mark(1, "object", "small blue can", 0, point2d=(0.5, 0.6), attributes={"colour": "blue", "category": "can"})}
    assert resolve_answer("The blue one.", marks) == 1
    assert resolve_answer("The one in front.", marks) == 1
    assert resolve_answer("The one at the back.", marks) == 0
    assert resolve_answer("Any of those is fine.", marks) == 0
    assert resolve_answer("No, I don't see what I asked for among those.", marks) is None


def test_stale_and_unknown_markers_are_outcomes_not_exceptions() -> None:
    ctx = SimpleNamespace(memory=RunMemory(view=2, marks={"object": {
        0: Mark(0, "object", "small red can", view=1, point_base=np.zeros(3))}}))
    assert _lookup(ctx, "object", 0)[0] is None and "moved" in _lookup(ctx, "object", 0)[1]
    assert _lookup(ctx, "object", 7)[0] is None and "unknown" in _lookup(ctx, "object", 7)[1]
    assert _lookup(ctx, "object", "abc")[0] is None
    ctx.memory.view = 1
    assert _lookup(ctx, "object", "0")[0] is not None


@pytest.mark.parametrize("tree", ["trees/fetch_and_place.yaml", "trees/mobile/fetch_open_loop.yaml",
                                  "trees/mobile/fetch_no_watchdog.yaml", "trees/mobile/fetch_no_conditioning.yaml",
                                  "trees/mobile/fetch_no_retry.yaml"])
def test_mobile_trees_are_proven(tree: str) -> None:
    from bt_grasp.spec.loader import load_tree
    from bt_grasp.verifier_api import verify_tree

    report = verify_tree(load_tree(str(ROOT / tree)))
    assert report.proven, report.problem
    assert report.bounds["actions"] <= 4
    if tree == "trees/fetch_and_place.yaml":  # every way of not knowing ends in a stated WAIT_CLARIFY
        ends = set(report.endings)
        for reason in ("ambiguous: A or B", "mismatch", "unknown", "grasp slipped; stopped safely"):
            assert f"WAIT_CLARIFY: {reason}" in ends, sorted(ends)


def test_pick_declares_stale_marker_in_its_alphabet() -> None:
    from bt_grasp.default_registry import default_registry

    reg = default_registry()
    for name in ("gaze_at", "pick", "place_on", "open", "close"):
        assert "stale_marker" in reg.get(name).outcomes
    assert reg.get("pick").counts_as_action
