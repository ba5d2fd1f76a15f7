"""The referent words of place or rank chose is remembered by place (nodes/referent.py): a later
look that grounds them to another object seen then is no new choice; an object moved by the
robot, or one seen only once its cover was taken, is."""

from __future__ import annotations

from bt_grasp.nodes.referent import not_the_choice, update_choice
from bt_grasp.perception.types import SceneGraph, SceneObject


def obj(oid: int, colour: str, x: float, y: float) -> SceneObject:
    return SceneObject(oid, f"{colour} ball", f"{colour} ball", (0.5, 0.5), oid,
                       {"colour": colour, "centroid_base": [x, y, 0.03]})


A, B, C = (0.50, 0.00), (0.40, 0.10), (0.30, -0.10)


def first_choice() -> dict:
    scene = SceneGraph([obj(1, "red", *A), obj(2, "red", *B)], [])
    return update_choice(None, [*A, 0.03], "red", 1, scene)


def test_the_first_grounding_is_the_choice_with_its_neighbours_places():
    choice = first_choice()
    assert choice["verdict"] == "chosen" and choice["at"][:2] == list(A) and choice["others"] == [[*B, 0.03]]


def test_an_object_seen_elsewhere_when_the_words_chose_is_not_the_choice():
    """The chosen ball rolled away (an empty grasp): the words now ground the other ball, which
    lay where it lies when they chose: not the object they meant."""
    scene = SceneGraph([obj(2, "red", *B), obj(1, "red", *C)], [])
    choice = update_choice(first_choice(), [*B, 0.03], "red", 2, scene)
    assert choice["verdict"] == "other" and choice["at"][:2] == list(A)
    assert not_the_choice("the nearest ball", None, choice)
    assert not not_the_choice("the red ball", None, choice)  # no place or rank in the words


def test_the_chosen_object_moved_by_the_robot_is_still_the_choice():
    """Grounded at a place nothing stood at then, while the chosen one's place is empty: it is
    the chosen one, rolled or pushed."""
    scene = SceneGraph([obj(1, "red", *C), obj(2, "red", *B)], [])
    choice = update_choice(first_choice(), [*C, 0.03], "red", 1, scene)
    assert choice["verdict"] == "chosen" and choice["at"][:2] == list(C) and choice["others"] == [[*B, 0.03]]
    assert not not_the_choice("the nearest ball", None, choice)


def test_an_object_seen_only_now_while_the_chosen_one_stays_becomes_the_choice():
    """A cover taken away shows a ball that fits better: nothing stood there then, and the
    chosen one still lies at its place, so the words chose anew."""
    scene = SceneGraph([obj(1, "red", *A), obj(2, "red", *B), obj(3, "red", *C)], [])
    choice = update_choice(first_choice(), [*C, 0.03], "red", 3, scene)
    assert choice["verdict"] == "chosen" and choice["at"][:2] == list(C)
    assert sorted(map(tuple, choice["others"])) == sorted([(*A, 0.03), (*B, 0.03)])


def test_the_chosen_object_again_stays_the_choice_even_after_an_other():
    choice = update_choice(first_choice(), [*B, 0.03], "red", 2, SceneGraph([obj(1, "red", *C)], []))
    again = update_choice(choice, [0.51, 0.0, 0.03], "red", 1, SceneGraph([obj(1, "red", 0.51, 0.0)], []))
    assert choice["verdict"] == "other" and again["verdict"] == "chosen"
