"""The referring-expression benchmark's instructions are true of their scene: generated from the
simulator's ground truth with the templates of one data file, in words the shipped vocabulary
reads back to the object meant; a scene with no instruction of a form is skipped, not forced."""

from __future__ import annotations

import numpy as np
import pytest

from bt_grasp.bench.catalogue import catalogue
from bt_grasp.bench.instructions import FORMS, Present, fewest_attributes, generate, relation, templates
from bt_grasp.goal_text import goal_object
from bt_grasp.perception.query import parse


def _obj(name: str, x: float, y: float, visible: bool = True) -> Present:
    spec = next(s for s in catalogue() if s.name == name)
    sized = len({s.size for s in catalogue() if s.category == spec.category}) > 1
    return Present(spec.name, spec.category, spec.colour, spec.size, (x, y), visible, sized)


# Image axes of the overhead camera: left = +y (base), front = -x (nearer the robot).
SCENE = [_obj("red mug", 0.50, 0.10), _obj("blue mug", 0.50, -0.10), _obj("small red box", 0.60, 0.10),
         _obj("large yellow duck", 0.40, 0.00), _obj("small green can", 0.55, 0.0, visible=False)]


def _rng(k: int = 0) -> np.random.Generator:
    return np.random.default_rng(k)


def test_every_form_has_templates_in_the_data_file() -> None:
    assert set(templates()["forms"]) == set(FORMS)


def test_every_paraphrase_in_the_file_is_read_back_as_its_category() -> None:
    """A synonym the shipped vocabulary does not know would measure the file, not the perceiver."""
    for category, words in templates()["synonyms"]["category"].items():
        for w in words:
            assert parse(f"the red {w}").category == category, w
    for size, words in templates()["synonyms"]["size"].items():
        for w in words:
            assert parse(f"the {w} red box").size == size, w


def test_attributes_are_the_fewest_that_single_out_the_object() -> None:
    """The duck is the only duck: "the duck"; the red mug shares "mug" and "red": both are needed."""
    assert fewest_attributes(SCENE[3], SCENE) == ("category",)
    assert fewest_attributes(SCENE[0], SCENE) == ("colour", "category")


def test_relations_follow_the_cameras_image_axes() -> None:
    """+y is left in the image, -x is in front (nearer the robot); offsets under the margin relate nothing."""
    assert relation(SCENE[0], SCENE[1]) == "left_of" and relation(SCENE[1], SCENE[0]) == "right_of"
    assert relation(SCENE[3], SCENE[0]) is None  # 10 cm in front and 10 cm right: no dominant axis
    assert relation(SCENE[0], SCENE[2]) == "in_front_of"


@pytest.mark.parametrize("seed", range(6))
def test_each_form_refers_to_what_its_words_say(seed: int) -> None:
    """Generated for the red mug: the text parses to its category (or a relation to the anchor
    named, or a superlative it leads); `ambiguous` names two visible objects both fitting the
    words; `absent` names an object of no colour any same-category object here has."""
    pool = catalogue()
    for form in FORMS:
        inst = generate(form, "red mug", SCENE, pool, _rng(seed))
        assert inst is not None, form
        q = parse(goal_object(inst.text))
        if form in ("name", "synonym", "attributes", "relation", "superlative"):
            assert inst.referents == ("red mug",) and q.category == "mug", inst
        if form == "relation":
            assert q.relation in ("left_of", "right_of", "in_front_of", "behind") and q.anchor is not None
        if form == "superlative":
            assert q.superlative is not None
        if form == "ambiguous":
            a, b = (next(p for p in SCENE if p.name == n) for n in inst.referents)
            assert a.visible and b.visible and q.category in (a.category, None)
        if form == "absent":
            assert inst.referents == () and (q.category, q.colour) not in {(p.category, p.colour) for p in SCENE}


def test_a_superlative_refers_to_another_object_in_view_when_the_target_leads_nothing() -> None:
    """Three mugs 1 cm apart but one 10 cm to the left: the target (in the middle) leads no
    direction, the left mug does ("the leftmost mug", scored by that mug). A mug out of view is
    never the referent, and without a leader there is no instruction."""
    mugs = [_obj("red mug", 0.50, 0.00), _obj("blue mug", 0.50, 0.10), _obj("black mug", 0.50, -0.01)]
    for seed in range(6):
        inst = generate("superlative", "red mug", mugs, catalogue(), _rng(seed))
        assert inst is not None and inst.referents == ("blue mug",), inst
        assert parse(goal_object(inst.text)).superlative == "left"
    hidden = [mugs[0], _obj("blue mug", 0.50, 0.10, visible=False), mugs[2]]
    inst = generate("superlative", "red mug", hidden, catalogue(), _rng())
    assert inst is None or inst.referents != ("blue mug",)
    close = [mugs[0], _obj("blue mug", 0.50, 0.01), mugs[2]]
    assert generate("superlative", "red mug", close, catalogue(), _rng()) is None
    hidden_target = [_obj("red mug", 0.50, 0.20, visible=False), mugs[1], mugs[2]]  # it leads, but unseen
    inst = generate("superlative", "red mug", hidden_target, catalogue(), _rng())
    assert inst is not None and inst.referents != ("red mug",)


def test_absent_never_names_what_an_object_here_looks_like() -> None:
    """A white cube is shown as a box at rest: beside one, "the white box" is no absent object (a
    person would hand the cube over): beside a red box and a white cube, `absent` never names a
    white box, whatever the seed."""
    with_cube = [_obj("red mug", 0.50, 0.10), _obj("small red box", 0.60, 0.10), _obj("white cube", 0.55, -0.10)]
    for seed in range(40):
        inst = generate("absent", "red mug", with_cube, catalogue(), _rng(seed))
        assert inst is not None
        q = parse(goal_object(inst.text))
        assert not (q.colour == "white" and q.category in ("box", "cube")), inst


def test_a_scene_without_an_instruction_of_a_form_gives_none() -> None:
    """One object alone has no superlative lead over others, no anchor and no twin."""
    alone = [_obj("red mug", 0.5, 0.0)]
    for form in ("relation", "superlative", "ambiguous"):
        assert generate(form, "red mug", alone, catalogue(), _rng()) is None, form


def test_the_command_line_offers_exactly_the_generators_forms() -> None:
    """bench/cli.py lists the forms without importing the generator (a fast --help)."""
    from bt_grasp.bench.cli import INSTRUCTION_FORMS

    assert INSTRUCTION_FORMS == FORMS
