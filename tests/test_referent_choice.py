"""The referent words of place or rank chose is remembered by place (nodes/referent.py): a later
look that grounds them to another object they described as well then is no new choice; the
chosen object moved by the robot, or one seen only once its cover was taken, is."""

from __future__ import annotations

from bt_grasp.nodes.referent import not_the_choice, update_choice
from bt_grasp.perception.types import SceneGraph, SceneObject

TEXT = "the nearest ball"


def obj(oid: int, colour: str, x: float, y: float, category: str = "ball") -> SceneObject:
    return SceneObject(oid, f"{colour} {category}", f"{colour} {category}", (0.5, 0.5), oid,
                       {"colour": colour, "category": category, "centroid_base": [x, y, 0.03]})


A, B, C = (0.50, 0.00), (0.40, 0.10), (0.30, -0.10)


def first_choice() -> dict:
    scene = SceneGraph([obj(1, "red", *A), obj(2, "red", *B), obj(3, "red", *C, category="box")], [])
    return update_choice(None, TEXT, 1, scene)


def test_the_first_grounding_is_the_choice_with_the_places_of_what_the_words_describe_as_well():
    """The other ball is remembered; the box, which "ball" does not describe, is not."""
    choice = first_choice()
    assert choice["verdict"] == "chosen" and choice["at"][:2] == list(A) and choice["others"] == [[*B, 0.03]]


def test_an_object_the_words_described_as_well_then_is_not_the_choice():
    """The chosen ball rolled away (an empty grasp): the words now ground the other ball, which
    lay where it lies when they chose: not the object they meant."""
    scene = SceneGraph([obj(2, "red", *B), obj(1, "red", 0.2, 0.2)], [])
    choice = update_choice(first_choice(), TEXT, 2, scene)
    assert choice["verdict"] == "other" and choice["at"][:2] == list(A)
    assert not_the_choice(TEXT, None, choice)
    assert not not_the_choice("the red ball", None, choice)  # no place or rank in the words


def test_the_chosen_object_where_a_cover_of_another_kind_lay_is_still_the_choice():
    """The box lay beside the chosen ball; the ball grounded where the box stood is no rival."""
    scene = SceneGraph([obj(1, "red", *C), obj(2, "red", *B)], [])
    choice = update_choice(first_choice(), TEXT, 1, scene)
    assert choice["verdict"] == "chosen" and choice["at"][:2] == list(C) and choice["others"] == [[*B, 0.03]]
    assert not not_the_choice(TEXT, None, choice)


def test_an_object_seen_only_now_while_the_chosen_one_stays_becomes_the_choice():
    """A cover taken away shows a ball that fits better: nothing the words described stood there
    then, and the chosen one still lies at its place, so the words chose anew."""
    scene = SceneGraph([obj(1, "red", *A), obj(2, "red", *B), obj(4, "red", 0.2, 0.2)], [])
    choice = update_choice(first_choice(), TEXT, 4, scene)
    assert choice["verdict"] == "chosen" and choice["at"][:2] == [0.2, 0.2]
    assert sorted(map(tuple, choice["others"])) == sorted([(*A, 0.03), (*B, 0.03)])


def test_the_chosen_object_again_stays_the_choice_even_after_an_other():
    choice = update_choice(first_choice(), TEXT, 2, SceneGraph([obj(2, "red", *B)], []))
    again = update_choice(choice, TEXT, 1, SceneGraph([obj(1, "red", 0.51, 0.0)], []))
    assert choice["verdict"] == "other" and again["verdict"] == "chosen"
