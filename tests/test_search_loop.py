"""Search instead of giving up (trees/clutter.yaml): a target that is not found is looked for
under the objects that may hide it until it is found or the budget is spent; two equally good
matches are looked at again with what covers them taken away; a tie in full view is a question;
with a candidate still seen in part both go to the basket, one after the other, so the delivery
check decides, never a guess; when neither can be taken the tie is a question too; FINALIZE only
after the delivery was seen."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from helpers import ROOT, run_oracle

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.nodes.perception import LocateObject
from bt_grasp.nodes.search import PickHider, hide_score
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.perception.types import Located, SceneGraph, SceneObject
from bt_grasp.services import Services
from bt_grasp.spec.loader import load_tree

FOUND_AND_HELD = {"is_occluded": ["failure"] * 8, "watchdog": ["SUCCESS"] * 8, "watchdog#semantic": ["ok"] * 8}


def _clutter():
    return load_tree(ROOT / "trees" / "clutter.yaml")


def _called(oracle) -> list[str]:
    return [node for node, _ in oracle.choices]


def test_not_found_searches_under_a_hider_then_finds_and_delivers():
    oracle = ScriptedOracle({"locate": ["not_found", "found"], **FOUND_AND_HELD}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert res.decision.value == "FINALIZE" and res.reason == "target in basket"
    called = _called(oracle)
    for node in ("search/pick_hider", "search/grasp_hider", "search/drop_hider", "search/resurvey",
                 "deliver/confirm"):
        assert node in called, node
    assert called.count("locate") == 2 and called.index("search/resurvey") < len(called) - called[::-1].index("locate")


def test_search_continues_until_the_budget_is_spent_and_only_then_asks():
    oracle = ScriptedOracle({"locate": ["not_found"] * 20}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert res.decision.value == "WAIT_CLARIFY"
    # every search round, as many as the action budget (10) allows, not one miss and give up
    assert _called(oracle).count("search/grasp_hider") == res.actions == 10
    # ... and the question says what was not found, in the goal's words
    assert res.reason == "not found: red mug"


def test_nothing_left_to_move_ends_the_search_with_its_reason():
    oracle = ScriptedOracle({"locate": ["not_found"] * 3, "search/pick_hider": ["found", "not_found"]},
                            fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert (res.decision.value, res.reason) == ("WAIT_CLARIFY", "not found: red mug (nothing left to search under)")


def test_no_action_left_ends_the_search_with_not_found_not_a_refused_move():
    oracle = ScriptedOracle({"locate": ["not_found"] * 3, "search/pick_hider": ["found", "spent"]},
                            fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert (res.decision.value, res.reason) == ("WAIT_CLARIFY", "not found: red mug (action budget spent searching)")
    assert _called(oracle).count("search/grasp_hider") == 1


def test_an_ungraspable_hider_is_pushed_aside_instead():
    oracle = ScriptedOracle({"locate": ["not_found", "found"], "search/grasp_hider": ["infeasible"],
                             **FOUND_AND_HELD}, fallback="done")
    run_oracle(_clutter(), oracle)
    assert "search/push_hider" in _called(oracle)


def test_a_tie_with_a_candidate_seen_in_part_sends_both_to_the_basket_then_the_delivery_decides():
    # locate_candidate (ambiguity: report_in_view) answers with the best candidate only when one
    # of the tied candidates is partly covered
    oracle = ScriptedOracle({"locate": ["ambiguous", "found"], "uncover/locate_cover": ["not_found"],
                             "uncover/locate_candidate": ["occluded"], "uncover/check_candidate": ["SUCCESS"],
                             **FOUND_AND_HELD}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    called = _called(oracle)
    assert res.decision.value == "FINALIZE" and called.count("locate") == 2 and res.actions == 2
    assert called.index("uncover/drop_candidate") < called.index("grasp") < called.index("deliver/confirm")


def _uncovered_tie(answers: dict[str, list[str]]):
    """A run where two candidates tie and none is under a cover; `answers` script the rest.
    Returns the result and the nodes asked, in order."""
    oracle = ScriptedOracle({"locate": ["ambiguous"], "uncover/locate_cover": ["not_found"], **answers},
                            fallback="done")
    return run_oracle(_clutter(), oracle), _called(oracle)


def test_a_tie_between_candidates_in_full_view_is_a_question_nothing_is_moved():
    res, called = _uncovered_tie({"uncover/locate_candidate": ["ambiguous"]})
    assert res.decision.value == "WAIT_CLARIFY" and res.reason.startswith("ambiguous:")
    assert res.actions == 0 and "uncover/grasp_candidate" not in called and "grasp" not in called


def test_a_tie_where_nothing_can_be_taken_is_a_question_not_a_guess():
    res, called = _uncovered_tie({"uncover/grasp_candidate": ["infeasible"]})
    assert res.decision.value == "WAIT_CLARIFY" and res.reason.startswith("ambiguous:")
    assert "uncover/open_before_asking" in called and "grasp" not in called


def test_a_tie_with_a_covered_candidate_takes_the_cover_away_and_looks_again():
    oracle = ScriptedOracle({"locate": ["ambiguous", "found"], "uncover/locate_cover": ["found"],
                             "uncover/check_cover": ["SUCCESS"], **FOUND_AND_HELD}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    called = _called(oracle)
    assert res.decision.value == "FINALIZE" and called.count("locate") == 2
    assert called.index("uncover/drop_cover") < called.index("grasp")


def test_a_cover_that_cannot_be_taken_leaves_the_candidate_to_take():
    oracle = ScriptedOracle({"locate": ["ambiguous", "found"], "uncover/locate_cover": ["found"],
                             "uncover/grasp_cover": ["infeasible"], "uncover/check_candidate": ["SUCCESS"],
                             **FOUND_AND_HELD}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    called = _called(oracle)
    assert res.decision.value == "FINALIZE"
    assert called.index("uncover/grasp_cover") < called.index("uncover/grasp_candidate") < called.index("grasp")


def test_a_held_object_that_is_not_the_target_goes_to_the_basket_and_the_search_goes_on():
    oracle = ScriptedOracle({**FOUND_AND_HELD, "watchdog#semantic": ["mismatch", "ok"]}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    called = _called(oracle)
    assert "deliver/drop_wrong" in called and called.count("grasp") == 2
    assert res.decision.value == "FINALIZE"


def test_semantic_unknown_is_never_ok_look_again_after_the_lift_then_ask():
    oracle = ScriptedOracle({**FOUND_AND_HELD, "watchdog#semantic": ["unknown"],
                             "deliver/recheck_held": ["unknown"]}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert (res.decision.value, res.reason) == ("WAIT_CLARIFY", "cannot see whether the held object is the target")
    assert "deliver/place" not in _called(oracle)


def test_delivery_not_seen_twice_is_a_question_not_a_finalize():
    oracle = ScriptedOracle({**FOUND_AND_HELD, "deliver/confirm": ["unknown"], "deliver/reconfirm": ["unknown"]},
                            fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert (res.decision.value, res.reason) == ("WAIT_CLARIFY", "delivery not confirmed: target not seen in the basket")


def test_target_still_on_the_table_after_the_place_is_tried_again():
    oracle = ScriptedOracle({**FOUND_AND_HELD, "deliver/confirm": ["not_delivered", "delivered"]}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert res.decision.value == "FINALIZE" and _called(oracle).count("grasp") == 2


# --- the leaves, with scripted perception ---------------------------------------------------

def _obj(oid: int, colour: str, extent, top: float, centre=(0.0, 0.0, 0.02)) -> SceneObject:
    mask = np.zeros((8, 8), bool)
    mask[oid, oid] = True
    return SceneObject(oid, f"{colour} thing {oid}", "", (0.1 * oid, 0.5), oid,
                       {"colour": colour, "extent": list(extent), "top_height": top,
                        "centroid_base": list(centre)}, mask)


def test_hide_score_prefers_large_piled_objects_of_the_target_colour():
    small = _obj(1, "blue", (0.05, 0.05, 0.03), 0.03)
    large = _obj(2, "blue", (0.12, 0.08, 0.03), 0.03)
    pile = _obj(3, "blue", (0.12, 0.08, 0.08), 0.08)
    red = _obj(4, "red", (0.12, 0.08, 0.03), 0.03)
    scene = SceneGraph([small, large, pile, red], [])
    s = {o.id: hide_score(o, scene, "red") for o in scene.objects}
    assert s[2] > s[1] and s[3] > s[2] and s[4] > s[2]


def _leaf(cls, params, scene, located=None, plans=True, region=None):
    obs = SimpleNamespace(depth=np.ones((8, 8)), K=np.eye(3), T_cam_base=np.eye(4), clock=0.0)
    driver = SimpleNamespace(observe=lambda: obs, place_region=lambda name: region)
    perceiver = SimpleNamespace(survey=lambda o: scene, locate=lambda o, t, s=None: located, min_pixels=1)
    ctx = RunContext(registry=default_registry(), driver=driver, perceiver=perceiver,
                     blackboard=Blackboard({"goal.object": "red box"}),
                     services=Services(plan_grasps=lambda o, loc: [object()] if plans else []))
    return cls("leaf", params, ctx), ctx


def test_pick_hider_skips_the_basket_and_writes_a_located_object():
    in_basket = _obj(1, "red", (0.2, 0.2, 0.1), 0.1, centre=(0.3, 0.4, 0.02))
    table = _obj(2, "blue", (0.1, 0.1, 0.03), 0.03)
    region = (np.array([0.2, 0.3, -0.1]), np.array([0.4, 0.5, 0.3]))
    leaf, ctx = _leaf(PickHider, {"target": "red box"}, SceneGraph([in_basket, table], []), region=region)
    leaf.update()
    assert leaf.last_outcome == "found" and ctx.blackboard.get("hider.name") == "blue thing 2"
    assert ctx.ledger.perception_calls == 1


def test_pick_hider_reports_not_found_when_nothing_can_be_grasped():
    leaf, _ = _leaf(PickHider, {"target": "red box"}, SceneGraph([_obj(2, "blue", (0.1, 0.1, 0.03), 0.03)], []),
                    plans=False)
    leaf.update()
    assert leaf.last_outcome == "not_found"


def test_pick_hider_answers_spent_without_looking_once_the_action_budget_is_spent():
    table = _obj(2, "blue", (0.1, 0.1, 0.03), 0.03)
    leaf, ctx = _leaf(PickHider, {"target": "red box"}, SceneGraph([table], []))
    ctx.ledger.actions = ctx.limits.actions - 1
    leaf.update()
    assert leaf.last_outcome == "found"  # one action left: something can still be moved
    ctx.ledger.actions = ctx.limits.actions
    leaf.update()
    assert leaf.last_outcome == "spent" and ctx.blackboard.get("hider") is None


def _located(alternatives):
    return Located(object_id=1, name="red box", mask=np.ones((2, 2), bool), bbox=(0, 0, 1, 1),
                   points_base=np.zeros((4, 3)), alternatives=alternatives)


def test_locate_reports_ambiguity_only_where_the_tree_asks_for_it():
    scene = SceneGraph([], [])
    leaf, ctx = _leaf(LocateObject, {"target": "red box", "ambiguity": "report"}, scene, _located(["red cube"]))
    leaf.update()
    assert leaf.last_outcome == "ambiguous" and ctx.blackboard.get("target") is None
    assert ctx.blackboard.get("target.ambiguity") == "ambiguous: red box or red cube"
    leaf, ctx = _leaf(LocateObject, {"target": "red box"}, scene, _located(["red cube"]))
    leaf.update()
    assert leaf.last_outcome == "found"
    leaf, ctx = _leaf(LocateObject, {"target": "red box", "ambiguity": "report"}, scene, _located([]))
    leaf.update()
    assert leaf.last_outcome == "found"


def test_report_in_view_reports_a_tie_only_between_candidates_seen_whole():
    tie = _located(["red cube"])
    tie.alternative_ids = [2]
    objects = [_obj(i, "red", (0.05, 0.05, 0.03), 0.03) for i in (1, 2, 3)]
    whole = SceneGraph(objects, [(3, "partially_occluded_by", 1)])  # a candidate covers a third object
    leaf, ctx = _leaf(LocateObject, {"target": "red box", "ambiguity": "report_in_view"}, whole, tie)
    leaf.update()
    assert leaf.last_outcome == "ambiguous" and ctx.blackboard.get("target") is None
    assert ctx.blackboard.get("target.ambiguity") == "ambiguous: red box or red cube"
    for cover in (3, 1):  # the alternative partly covered by a third object, or by the other candidate
        in_part = SceneGraph(objects, [(2, "partially_occluded_by", cover)])
        leaf, ctx = _leaf(LocateObject, {"target": "red box", "ambiguity": "report_in_view"}, in_part, tie)
        leaf.update()
        assert leaf.last_outcome == "found" and ctx.blackboard.get("target.name") == "red box", cover


def test_report_in_view_reports_a_tie_the_words_leave_open_even_with_a_candidate_in_part():
    """"The cube" with two clear cubes, one partly covered: the rest of it would show only how
    much of a cube it is, which the words do not ask, so the tie is a question now."""
    tie = _located(["red cube"])
    tie.alternative_ids = [2]
    tie.words_tie = True
    objects = [_obj(i, "red", (0.05, 0.05, 0.03), 0.03) for i in (1, 2, 3)]
    in_part = SceneGraph(objects, [(2, "partially_occluded_by", 3)])
    leaf, ctx = _leaf(LocateObject, {"target": "red box", "ambiguity": "report_in_view"}, in_part, tie)
    leaf.update()
    assert leaf.last_outcome == "ambiguous" and ctx.blackboard.get("target") is None


def test_an_ambiguous_locate_names_what_covers_a_candidate_but_never_a_candidate():
    # 1 and 2 tie; 3 covers 2, and 2 covers 1: the cover to take is 3, never the candidate 2
    scene = SceneGraph([_obj(i, "red", (0.05, 0.05, 0.03), 0.03) for i in (1, 2, 3)],
                       [(1, "partially_occluded_by", 2), (2, "partially_occluded_by", 3)])
    tie = _located(["red cube"])
    tie.alternative_ids = [2]
    leaf, ctx = _leaf(LocateObject, {"target": "red box", "ambiguity": "report"}, scene, tie)
    leaf.update()
    assert leaf.last_outcome == "ambiguous" and ctx.blackboard.get("target.occluder") == "red thing 3"
    basket = SceneObject(4, "basket", "", (0.9, 0.9), 4, {"fixture": True}, None)
    full_view = SceneGraph([*scene.objects, basket], [(1, "partially_occluded_by", 2), (2, "partially_occluded_by", 4)])
    leaf, ctx = _leaf(LocateObject, {"target": "red box", "ambiguity": "report"}, full_view, tie)
    leaf.update()
    assert leaf.last_outcome == "ambiguous" and ctx.blackboard.get("target.occluder") is None  # no fixture either


def test_locate_with_skip_never_offers_what_lies_in_the_basket():
    in_basket = _obj(1, "red", (0.05, 0.05, 0.03), 0.03, centre=(0.3, 0.4, 0.02))
    table = _obj(2, "red", (0.05, 0.05, 0.03), 0.03)
    region = (np.array([0.2, 0.3, -0.1]), np.array([0.4, 0.5, 0.3]))
    offered: list[list[int]] = []

    def locate(obs, text, scene=None):
        offered.append([o.id for o in scene.objects])
        return None

    for params in ({"target": "red box", "skip": "basket"}, {"target": "red box"}):
        leaf, ctx = _leaf(LocateObject, params, SceneGraph([in_basket, table], [(1, "next_to", 2)]), region=region)
        ctx.perceiver.locate = locate
        leaf.update()
    assert offered == [[2], [1, 2]]


def test_an_occluder_that_cannot_be_taken_leaves_the_target_to_be_grasped_as_it_lies():
    oracle = ScriptedOracle({"locate": ["occluded"], "remove_occluder/grasp_occluder": ["infeasible"],
                             **FOUND_AND_HELD}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    called = _called(oracle)
    assert res.decision.value == "FINALIZE" and called.count("locate") == 1
    assert "remove_occluder/open_before_grasp" in called and "grasp" in called and res.actions == 1 + 1


def test_a_removed_occluder_is_followed_by_a_fresh_locate():
    oracle = ScriptedOracle({"locate": ["occluded", "found"], "remove_occluder/check_occluder": ["SUCCESS"],
                             **FOUND_AND_HELD}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    called = _called(oracle)
    assert res.decision.value == "FINALIZE" and called.count("locate") == 2
    assert called.index("remove_occluder/drop_occluder") < called.index("grasp")


def test_a_weak_or_slipping_grasp_is_released_and_tried_again_a_stall_is_a_safe_stop():
    for label in ("WEAK", "SLIP"):
        oracle = ScriptedOracle({**FOUND_AND_HELD, "watchdog": [label, "SUCCESS"]}, fallback="done")
        res = run_oracle(_clutter(), oracle)
        assert res.decision.value == "FINALIZE" and res.reason == "target in basket", label
        assert _called(oracle).count("grasp") == 2
    oracle = ScriptedOracle({**FOUND_AND_HELD, "watchdog": ["STALL"]}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert res.reason == "safe stop after a non-empty failed grasp" and _called(oracle).count("grasp") == 1


def test_no_feasible_grasp_on_the_target_pushes_it_clear_and_looks_again():
    oracle = ScriptedOracle({**FOUND_AND_HELD, "grasp": ["infeasible", "done"]}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    called = _called(oracle)
    assert res.decision.value == "FINALIZE" and "push_target" in called
    assert called.index("push_target") < len(called) - called[::-1].index("locate")


def test_a_target_renamed_by_a_changed_view_is_followed_by_where_it_lay():
    """The text grounded to object 2 before; now it grounds to nothing, but an object of the
    same colour lies where object 2 was: that one is the target. Another colour there, or the
    same colour elsewhere, is not."""
    def scene_with(*objs):
        return SceneGraph(list(objs), [])

    before = _obj(2, "red", (0.05, 0.05, 0.03), 0.03, centre=(0.5, 0.1, 0.02))
    hits = {"n": 0}

    def locate_once(o, t, s=None):  # grounds the first time only
        hits["n"] += 1
        obj = s.objects[0]
        return None if hits["n"] > 1 else Located(obj.id, obj.name, obj.mask, (0, 0, 1, 1), np.array([[0.5, 0.1, 0.02]]))

    for later, expected in [(_obj(3, "red", (0.04, 0.08, 0.03), 0.03, centre=(0.51, 0.11, 0.02)), "found"),
                            (_obj(3, "blue", (0.04, 0.08, 0.03), 0.03, centre=(0.51, 0.11, 0.02)), "not_found"),
                            (_obj(3, "red", (0.04, 0.08, 0.03), 0.03, centre=(0.6, 0.1, 0.02)), "not_found")]:
        hits["n"] = 0
        leaf, ctx = _leaf(LocateObject, {"target": "red box", "track": True}, scene_with(before))
        ctx.perceiver.locate = locate_once
        leaf.update()
        assert leaf.last_outcome == "found" and ctx.blackboard.get("target.track")["colour"] == "red"
        after = scene_with(later)
        ctx.perceiver.survey = lambda o, s=after: s
        ctx.memory.last_observation = None
        leaf2 = LocateObject("leaf", {"target": "red box", "track": True}, ctx)
        leaf2.update()
        assert leaf2.last_outcome == expected
        if expected == "found":
            assert ctx.blackboard.get("target").object_id == 3


def test_an_occluder_is_found_again_by_the_name_the_scene_graph_gave_it():
    """Grounding the occluder's name as a text fails (a weak catalogue fit); with `match: name`
    the segment bearing exactly that name is taken, and with `match: text` it is not found."""
    bar = _obj(2, "orange", (0.2, 0.03, 0.03), 0.03)
    other = _obj(3, "orange", (0.05, 0.05, 0.05), 0.05)
    scene = SceneGraph([bar, other], [])
    for match, expected in (("name", "found"), ("text", "not_found")):
        leaf, ctx = _leaf(LocateObject, {"target": "orange thing 2", "match": match, "result": "occluder",
                                         "outcome": "occluder.outcome"}, scene)
        leaf.update()
        assert leaf.last_outcome == expected, match
        if expected == "found":
            assert ctx.blackboard.get("occluder").object_id == 2
