"""Referring-expression grounding: attributes, relative size, spatial qualifiers, absence."""

from __future__ import annotations

import numpy as np
import pytest

from bt_grasp.bench.catalogue import COLOURS
from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.grounding import ground, resolve
from bt_grasp.perception.query import parse
from bt_grasp.perception.sim_annotator import SimPerceiver
from bt_grasp.perception.synthetic import Prim, overhead_camera, render
from bt_grasp.perception.types import SceneGraph, SceneObject


def _obj(oid: int, name: str, colour: str, category: str, size: str, u: float, v: float = 0.5,
         extent: tuple[float, float, float] = (0.05, 0.04, 0.04)) -> SceneObject:
    return SceneObject(id=oid, name=name, description=name, point2d=(u, v), mask_id=oid,
                       attributes={"colour": colour, "category": category, "size": size, "extent": list(extent)})


def test_parse():
    q = parse("the small red box to the left of the blue mug")
    assert (q.size, q.colour, q.category, q.relation) == ("small", "red", "box", "left_of")
    assert q.anchor is not None and (q.anchor.colour, q.anchor.category) == ("blue", "mug")
    q = parse("the mug on the left")
    assert (q.category, q.superlative, q.relation) == ("mug", "left", None)
    q = parse("grab the rubber duck next to the big ball")
    assert (q.category, q.relation, q.anchor.category, q.anchor.size) == ("duck", "next_to", "ball", "large")
    assert parse("the grey teddy").category == "teddy bear" and parse("the gray teddy").colour == "grey"
    assert parse("the purple banana").unknown_noun == "banana"


def test_small_red_box_picks_the_small_one_by_label_and_by_measure():
    scene = SceneGraph([_obj(1, "large red box", "red", "box", "large", 0.2, extent=(0.09, 0.06, 0.05)),
                        _obj(2, "small red box", "red", "box", "small", 0.8, extent=(0.04, 0.03, 0.03)),
                        _obj(3, "small blue box", "blue", "box", "small", 0.5, extent=(0.04, 0.03, 0.03))], [])
    assert ground("the small red box", scene)[0].id == 2
    assert ground("the big red box", scene)[0].id == 1
    assert ground("red box", scene)[0].id in (1, 2)
    # Geometric labels can both say "medium": the measured size decides.
    for o in scene.objects:
        o.attributes["size"] = "medium"
    assert ground("the small red cube-shaped box", scene)[0].id == 2
    assert ground("the tiny red box", scene)[0].id == 2
    assert ground("the large red box", scene)[0].id == 1


def test_mug_on_the_left_picks_the_leftmost_mug():
    scene = SceneGraph([_obj(1, "red mug", "red", "mug", "medium", 0.7),
                        _obj(2, "blue mug", "blue", "mug", "medium", 0.3),
                        _obj(3, "green box", "green", "box", "small", 0.1),
                        _obj(4, "white mug", "white", "mug", "medium", 0.5)], [])
    assert ground("the mug on the left", scene)[0].id == 2
    assert ground("the leftmost mug", scene)[0].id == 2
    assert ground("the rightmost cup", scene)[0].id == 1
    assert ground("the mug on the right", scene)[0].id == 1


def test_relational_clause_uses_the_scene_graph():
    scene = SceneGraph([_obj(1, "red mug", "red", "mug", "medium", 0.2),
                        _obj(2, "blue mug", "blue", "mug", "medium", 0.6),
                        _obj(3, "yellow duck", "yellow", "duck", "medium", 0.7),
                        _obj(4, "green box", "green", "box", "medium", 0.6, 0.3)],
                       [(2, "next_to", 3), (3, "next_to", 2), (4, "on_top_of", 2)])
    assert ground("the mug next to the duck", scene)[0].id == 2
    assert ground("the box on the blue mug", scene)[0].id == 4
    assert ground("the mug under the green box", scene)[0].id == 2
    assert ground("the mug next to the purple ball", scene) is None


def test_absent_or_contradicting_attributes_return_none():
    scene = SceneGraph([_obj(1, "red mug", "red", "mug", "medium", 0.2),
                        _obj(2, "yellow duck", "yellow", "duck", "medium", 0.6)], [])
    assert ground("the green duck", scene) is None
    assert ground("the red box", scene) is None
    assert ground("the purple banana", scene) is None
    assert ground("", scene) is None
    assert ground("the yellow duck", scene)[0].id == 2
    assert ground("Yellow Duck", scene)[0].id == 2  # exact name, any case


@pytest.mark.parametrize("backend", [SimPerceiver, GeometricPerceiver])
def test_end_to_end_on_rendered_frame(backend):
    red = COLOURS["red"][:3]
    blue = COLOURS["blue"][:3]
    prims = [Prim("box", (0.55, 0.10, 0.015), (0.04, 0.03, 0.03), red, name="small red box", colour="red",
                  category="box", size="small"),
             Prim("box", (0.45, -0.10, 0.025), (0.09, 0.06, 0.05), red, name="large red box", colour="red",
                  category="box", size="large"),
             Prim("cylinder", (0.40, 0.15, 0.04), (0.03, 0.08), blue, name="blue mug", colour="blue",
                  category="mug"),
             Prim("cylinder", (0.60, -0.18, 0.04), (0.03, 0.08), blue, name="blue can", colour="blue",
                  category="can")]
    K, T, shape = overhead_camera(256, tilt=0.1)
    obs = render(prims, K, T, shape)
    per = backend()
    scene = per.survey(obs)
    small = per.locate(obs, "the small red box", scene)
    assert small is not None and np.linalg.norm(small.points_base[:, :2].mean(0) - [0.55, 0.10]) < 0.015
    large = per.locate(obs, "the large red box", scene)
    assert large is not None and np.linalg.norm(large.points_base[:, :2].mean(0) - [0.45, -0.10]) < 0.015
    # Image left is base +y for this camera.
    left = per.locate(obs, "the blue cylinder on the left" if backend is GeometricPerceiver else
                      "the blue one on the left", scene)
    assert left is not None and left.points_base[:, 1].mean() > 0.1


def test_measured_dimensions_separate_shape_alike_categories():
    """Both look like purple cylinders; only the flat one has a puck's dimensions."""
    scene = SceneGraph([_obj(1, "large purple cylinder", "purple", "cylinder", "large", 0.3,
                             extent=(0.068, 0.066, 0.11)),
                        _obj(2, "small purple cylinder", "purple", "cylinder", "small", 0.7,
                             extent=(0.06, 0.058, 0.02))], [])
    assert ground("the purple puck", scene)[0].id == 2
    assert ground("the large purple can", scene)[0].id == 1
    # A segment far larger than any catalogue duck is not a duck.
    big = SceneGraph([_obj(1, "large yellow irregular", "yellow", "irregular", "large", 0.5,
                           extent=(0.25, 0.12, 0.06))], [])
    assert ground("the yellow duck", big) is None


def _measured_obj(oid: int, name: str, seen: str, colour: str, scores: dict[str, dict[str, float]],
                  u: float) -> SceneObject:
    noun = max(scores, key=lambda n: max(scores[n].values()))
    return SceneObject(id=oid, name=name, description=name, point2d=(u, 0.5), mask_id=oid,
                       attributes={"colour": colour, "seen_colour": seen, "category": noun, "size": "small",
                                   "extent": [0.05, 0.04, 0.04], "name_scores": scores})


def test_a_wrong_size_of_the_right_noun_is_not_accepted():
    """Only a medium black ball in view: "the small black ball" is absent, not that ball."""
    medium = _measured_obj(1, "medium black ball", "black", "black",
                           {"ball": {"small": 0.25, "medium": 0.8, "large": 0.3}, "box": {"small": 0.1}}, 0.5)
    scene = SceneGraph([medium], [])
    assert ground("the small black ball", scene) is None
    assert ground("the medium black ball", scene)[0].id == 1


def test_a_shape_that_fits_another_noun_better_is_not_accepted():
    """A black box that a duck explains half as well is not "the black duck"."""
    box = _measured_obj(1, "small black box", "black", "black",
                        {"box": {"small": 0.8}, "duck": {"small": 0.4, "large": 0.1}}, 0.5)
    assert ground("the small black duck", SceneGraph([box], [])) is None


def test_an_occluded_fragment_is_judged_by_its_weak_catalogue_fit_not_its_outline():
    """Half a purple box behind another object fits every entry weakly (0.24 at best) and its cut
    outline looks round. Seen whole, such fits are evidence against every noun; occluded, they
    are expected, so the best-fitting noun still names it. Other nouns stay below acceptance."""
    scores = {"box": {"small": 0.002, "medium": 0.237, "large": 0.016}, "can": {"small": 0.12},
              "lego brick": {"small": 0.11}}
    frag = _measured_obj(1, "medium purple box", "purple", "purple", scores, 0.5)
    frag.attributes["shape"] = "cylinder"  # the cut outline's shape class
    scene = SceneGraph([frag], [])
    assert ground("the medium purple box", scene) is None  # in full view: nothing fits it
    frag.attributes["occluded"] = True
    assert ground("the medium purple box", scene)[0].id == 1
    assert ground("the small purple can", scene) is None
    assert ground("the small purple box", scene) is None  # a wrong size is no closer than before


def test_a_textured_object_is_grounded_by_how_its_catalogue_colour_looks():
    """The blue duck looks green to the camera (its texture tints it)."""
    duck = _measured_obj(1, "small green duck", "green", "green",
                         {"duck": {"small": 0.8, "large": 0.2}, "box": {"small": 0.1}}, 0.5)
    scene = SceneGraph([duck], [])
    assert ground("the small blue duck", scene)[0].id == 1
    assert ground("the small red duck", scene) is None
    assert ground("the small blue box", scene) is None  # a blue box would look blue


def _masked(obj: SceneObject, rows: slice, cols: slice) -> SceneObject:
    obj.mask = np.zeros((40, 40), dtype=bool)
    obj.mask[rows, cols] = True
    return obj


def test_two_touching_pieces_of_one_named_object_are_one_answer_not_a_question():
    """A ball cut in two at a fold: both pieces fit "small orange ball"; they touch, so the answer
    is their union. The same two pieces apart are two balls: ask, and say how close it was."""
    scores = {"ball": {"small": 0.8, "medium": 0.1}}
    a = _masked(_measured_obj(1, "small orange ball", "orange", "orange", scores, 0.4), slice(10, 20), slice(10, 20))
    b = _masked(_measured_obj(2, "small orange ball", "orange", "orange", scores, 0.6), slice(10, 20), slice(21, 30))
    hit = resolve("the small orange ball", SceneGraph([a, b], []))
    assert hit is not None and hit.alternatives == []
    assert hit.obj.mask.sum() == a.mask.sum() + b.mask.sum()
    b.mask = np.roll(b.mask, 8, axis=1)  # now 9 px apart
    hit = resolve("the small orange ball", SceneGraph([a, b], []))
    assert hit is not None and [o.id for o in hit.alternatives] == [2]
    assert len(hit.alternative_scores) == 1 and 0.8 * hit.score <= hit.alternative_scores[0] <= hit.score


def test_a_near_perfect_fit_settles_what_relative_scores_leave_open():
    """A mug whose best catalogue fit is "duck" (0.8) scores as well for "the large yellow duck"
    as the duck itself (0.975), each relative to its own fits. The duck's fit is near-perfect and
    clearly better: it is the answer. Two similar fits (0.9 and 0.8) stay a question."""
    duck = _measured_obj(1, "large yellow duck", "yellow", "yellow",
                         {"duck": {"small": 0.37, "large": 0.975}, "mug": {"medium": 0.85}}, 0.3)
    mug = _measured_obj(2, "large yellow duck", "yellow", "yellow",
                        {"duck": {"small": 0.1, "large": 0.8}, "mug": {"medium": 0.76}}, 0.7)
    hit = resolve("the large yellow duck", SceneGraph([mug, duck], []))
    assert hit is not None and hit.obj.id == 1 and hit.alternatives == []
    mug.attributes["name_scores"]["duck"]["large"] = 0.85
    duck.attributes["name_scores"]["duck"]["large"] = 0.9
    hit = resolve("the large yellow duck", SceneGraph([mug, duck], []))
    assert hit is not None and len(hit.alternatives) == 1


def test_a_tie_the_words_leave_open_is_asked_whatever_the_fits():
    """"The bar" with a yellow bar in full view (fit 0.97) and a black one partly seen (0.78):
    both are clearly bars, and the words name nothing that tells them apart, so the better fit
    settles nothing: both are answers, marked as a tie the words leave open (no second look
    helps). A colour that singles one out leaves no alternative; so does a size word, where the
    near-perfect fit still decides."""
    yellow = _measured_obj(1, "large yellow bar", "yellow", "yellow",
                           {"bar": {"small": 0.3, "large": 0.97}, "box": {"medium": 0.4}}, 0.3)
    black = _measured_obj(2, "large black bar", "black", "black",
                          {"bar": {"small": 0.35, "large": 0.78}, "box": {"medium": 0.45}}, 0.7)
    black.attributes["occluded"] = True
    box = _measured_obj(3, "large white box", "white", "white", {"bar": {"large": 0.85}, "box": {"large": 0.95}}, 0.5)
    scene = SceneGraph([yellow, black, box], [])
    for text in ("the bar", "Grasp the bar"):  # the box, explained best as a box, is not in the tie
        hit = resolve(text, scene)
        assert hit is not None and hit.words_tie and {hit.obj.id, *(o.id for o in hit.alternatives)} == {1, 2}
    hit = resolve("the black bar", scene)
    assert hit is not None and hit.obj.id == 2 and hit.alternatives == []
    hit = resolve("the large bar", scene)
    assert hit is not None and hit.obj.id == 1 and hit.alternatives == [] and not hit.words_tie


def test_a_mug_is_no_candidate_for_the_duck_even_when_the_words_name_only_the_category():
    """A mug that a duck explains about as well as a mug (0.8 and 0.76) is no clear duck, so for
    "the duck" the duck's near-perfect fit still decides; a mug explained best as a mug is
    no answer either. Two clear ducks stay a question."""
    duck = _measured_obj(1, "large yellow duck", "yellow", "yellow",
                         {"duck": {"small": 0.37, "large": 0.975}, "mug": {"medium": 0.5}}, 0.3)
    mug = _measured_obj(2, "large yellow duck", "yellow", "yellow",
                        {"duck": {"small": 0.1, "large": 0.8}, "mug": {"medium": 0.76}}, 0.7)
    for text in ("the duck", "the yellow duck"):
        hit = resolve(text, SceneGraph([mug, duck], []))
        assert hit is not None and hit.obj.id == 1 and hit.alternatives == [], text
    mug.attributes["name_scores"] = {"duck": {"large": 0.8}, "mug": {"medium": 0.9}}
    hit = resolve("the duck", SceneGraph([mug, duck], []))
    assert hit is not None and hit.obj.id == 1 and hit.alternatives == []
    mug.attributes["name_scores"] = {"duck": {"small": 0.1, "large": 0.8}, "mug": {"medium": 0.4}}
    hit = resolve("the duck", SceneGraph([mug, duck], []))
    assert hit is not None and hit.words_tie and len(hit.alternatives) == 1


def test_a_pose_or_cover_that_lowers_a_fit_leaves_the_tie_to_the_words():
    """"The can" with an upright can (fit 0.95) and one lying on its side (can 0.75, bar 0.8): the
    lying can is a can as far as its pose lets it be seen, so the upright one's better fit settles
    nothing: a tie the words leave open. So is "the cube" with one cube partly covered (cube 0.86,
    box 0.76). Seen plainly, a segment fitting another kind best stays out: the same lying fits
    on an upright segment, or the covered cube for "the box"."""
    upright = _measured_obj(1, "medium red can", "red", "red", {"can": {"medium": 0.95}, "bar": {"small": 0.3}}, 0.3)
    lying = _measured_obj(2, "small red bar", "red", "red", {"can": {"medium": 0.75}, "bar": {"small": 0.8}}, 0.7)
    lying.attributes["lying_cylinder"] = 0.9
    hit = resolve("the can", SceneGraph([upright, lying], []))
    assert hit is not None and hit.words_tie and {hit.obj.id, *(o.id for o in hit.alternatives)} == {1, 2}
    lying.attributes["lying_cylinder"] = 0.1
    hit = resolve("the can", SceneGraph([upright, lying], []))
    assert hit is not None and hit.obj.id == 1 and not hit.words_tie and hit.alternatives == []
    plain = _measured_obj(1, "small orange cube", "orange", "orange", {"cube": {"small": 0.97}, "box": {"small": 0.5}}, 0.3)
    covered = _measured_obj(2, "small orange cube", "orange", "orange", {"cube": {"small": 0.86}, "box": {"small": 0.76}},
                            0.7)
    covered.attributes["occluded"] = True
    hit = resolve("the cube", SceneGraph([plain, covered], []))
    assert hit is not None and hit.words_tie and len(hit.alternatives) == 1
    box = _measured_obj(3, "small orange box", "orange", "orange", {"box": {"small": 0.97}, "cube": {"small": 0.5}}, 0.5)
    hit = resolve("the box", SceneGraph([box, covered], []))
    assert hit is not None and hit.obj.id == 3 and not hit.words_tie


def test_a_superlative_is_judged_by_how_far_ahead_the_leader_is_not_by_rank():
    """Five bars across the image: the farthest (image top) leads the next by 0.09 (some 6 cm),
    so it is the answer, however many bars stand behind it; a runner-up a hair behind (0.005)
    is a question."""
    bars = [_obj(i, f"bar {i}", c, "bar", "small", 0.5, v, extent=(0.1, 0.02, 0.02))
            for i, (c, v) in enumerate([("white", 0.30), ("orange", 0.39), ("yellow", 0.56), ("green", 0.71),
                                        ("black", 0.62)], start=1)]
    hit = resolve("the farthest bar", SceneGraph(bars, []))
    assert hit is not None and hit.obj.id == 1 and hit.alternatives == []
    bars[1].point2d = (0.5, 0.305)
    hit = resolve("the farthest bar", SceneGraph(bars, []))
    assert hit is not None and {hit.obj.id, *(o.id for o in hit.alternatives)} == {1, 2}
