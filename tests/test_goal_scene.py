"""Any instruction builds a simulated scene: the goal's words choose the target from the catalogue.

A catalogue name keeps exactly the draws it always had (today's scenes); other words are grounded
(one fitting object, chosen by the seed, and no other object they fit); words that fit nothing
build a scene without it. The episode then says what it did not find."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_oracle, tree

from bt_grasp.bench.goal_scene import goal_objects
from bt_grasp.drivers.pybullet_arm import episodes, scene
from bt_grasp.oracles import ScriptedOracle


def _pool():
    return [o for o in scene.object_catalogue() if scene.fits_gripper(o)]


@pytest.mark.parametrize("words, names", [
    ("red mug, please", {"red mug"}),
    ("red mug please", {"red mug"}),
    ("large red box", {"large red box"}),
    ("the little red box", {"small red box"}),
])
def test_words_that_describe_one_object_fit_only_it(words: str, names: set[str]) -> None:
    """Colour, size and category words, with politeness around them, pick out one catalogue object."""
    assert {o.name for o in goal_objects(words, _pool()).fitting} == names


@pytest.mark.parametrize("words", ["mug", "coffee mug", "cup", "the mug"])
def test_a_category_word_fits_every_object_of_that_category(words: str) -> None:
    """"mug" and its synonyms fit every mug, in every colour."""
    fit = goal_objects(words, _pool()).fitting
    assert {o.category for o in fit} == {"mug"} and len(fit) == sum(o.category == "mug" for o in _pool())


@pytest.mark.parametrize("words", ["banana", "green teddy bear", "cyan box"])
def test_words_that_fit_no_catalogue_object_are_absent(words: str) -> None:
    """An unknown noun, or a colour the category never comes in, fits nothing."""
    assert goal_objects(words, _pool()).absent


def test_a_catalogue_name_takes_the_same_draws_as_before() -> None:
    """The named target first, then k draws from the pool without it (the rule scenes were made by)."""
    for name in ("small red box", "blue mug"):
        for seed in (0, 7):
            pool = _pool()
            want = [o for o in pool if o.name == name]
            rest = [o for o in pool if o.name != name]
            idx = np.random.default_rng(seed).choice(len(rest), size=14, replace=False)
            want += [rest[i] for i in sorted(idx)]
            got, target, absent = episodes._choose_objects(np.random.default_rng(seed), 15, name, None)
            assert (got, target, absent) == (want, name, None)


def test_a_category_word_places_one_object_of_it_chosen_by_the_seed() -> None:
    """"mug": the target is a mug, no other mug is in the scene, and seeds vary which mug."""
    targets = set()
    for seed in range(12):
        got, target, absent = episodes._choose_objects(np.random.default_rng(seed), 15, "the mug", None)
        assert absent is None and got[0].name == target and got[0].category == "mug"
        assert sum(o.category == "mug" for o in got) == 1 and len(got) == 15
        targets.add(target)
    assert len(targets) > 1


@pytest.mark.parametrize("words", ["", "the object", "the"])
def test_words_that_fit_anything_still_build_a_full_scene(words: str) -> None:
    """Nothing to keep out: one object is the target and the other fourteen are drawn as ever."""
    got, target, absent = episodes._choose_objects(np.random.default_rng(5), 15, words, None)
    assert len(got) == 15 and target == got[0].name and absent is None


def test_words_that_fit_nothing_build_a_scene_without_a_named_target() -> None:
    """"banana": fifteen catalogue objects, no target forced, the words kept as absent."""
    got, target, absent = episodes._choose_objects(np.random.default_rng(3), 15, "banana", None)
    assert target is None and absent == "banana" and len(got) == 15


def test_a_reason_quotes_the_goal_object() -> None:
    """A terminal's reason may quote goal.* keys: "not found: {goal.object}" says what was looked for."""
    spec = tree("""
        tree: t
        root: {wait_clarify: {reason: "not found: {goal.object} ({goal.missing} stays)"}}
    """)
    result = run_oracle(spec, ScriptedOracle({}), goal="banana")
    assert result.reason == "not found: banana ({goal.missing} stays)"


@pytest.mark.parametrize("text, words", [
    ("Grasp the red mug, please", "red mug"), ("Bring me the red mug please", "red mug"),
    ("Could you grab the purple dice?", "purple dice"), ("grab the mug", "mug"),
    ("Grasp the small white can", "small white can"),
])
def test_the_goals_object_is_its_words_without_verb_and_politeness(text: str, words: str) -> None:
    """What "not found: <words>" quotes and the scene is grounded on: no verb, article or "please"."""
    from bt_grasp.goal_text import goal_object

    assert goal_object(text) == words


def test_objects_lists_what_the_arm_scenes_are_built_from(capsys) -> None:
    """`bt-grasp objects --json`: every placeable object once, by category with its sizes and
    colours; each name, as a goal, fits exactly that object."""
    import json

    from bt_grasp.cli import main

    assert main(["objects", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    names = [n for e in table.values() for n in e["names"]]
    assert sorted(names) == sorted(o.name for o in _pool())
    assert set(table["mug"]["colours"]) == {o.colour for o in _pool() if o.category == "mug"}
    for name in names:
        assert [o.name for o in goal_objects(name, _pool()).fitting] == [name], name
