"""The perceiver's vocabulary is data: read from YAML or built in code, the catalogue is one
provider of it, bad files fail on one line at their place, and perception never imports the
benchmark."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from bt_grasp.bench.vocabulary import catalogue_vocabulary
from bt_grasp.errors import UserError
from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.grasps import plan_grasps
from bt_grasp.perception.lexicon import DEFAULT_FILE, Category, Vocabulary, default_vocabulary
from bt_grasp.perception.synthetic import Prim, overhead_camera, render

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "workshop_vocabulary.yaml"
CYAN, GREY = (0.1, 0.75, 0.8), (0.85, 0.85, 0.85)


def test_the_shipped_default_is_the_catalogues_vocabulary():
    """The default a perceiver gets without one is the benchmark catalogue's words, exactly
    (regenerate catalogue_vocabulary.yaml with `python -m bt_grasp.bench.vocabulary`)."""
    assert default_vocabulary() == catalogue_vocabulary()
    assert GeometricPerceiver().vocabulary == catalogue_vocabulary()


def test_a_vocabulary_round_trips_through_its_data(tmp_path):
    import yaml

    path = tmp_path / "v.yaml"
    path.write_text(yaml.safe_dump(catalogue_vocabulary().to_data(), sort_keys=False))  # order is meaning
    assert Vocabulary.from_yaml(path) == catalogue_vocabulary()


def test_nothing_in_perception_imports_the_benchmark():
    """Perception takes its words as an argument: no module under bt_grasp/perception imports
    bt_grasp.bench, at module level or inside a function."""
    offenders = []
    for path in sorted((ROOT / "bt_grasp" / "perception").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            offenders += [f"{path.name}:{node.lineno}" for n in names  # type: ignore[attr-defined]
                          if n == "bt_grasp.bench" or n.startswith("bt_grasp.bench.")]
    assert offenders == []


def _workshop() -> tuple[list[Prim], Vocabulary]:
    prims = [Prim("cylinder", (0.45, 0.12, 0.015), (0.02, 0.03), CYAN, name="mini cyan spool"),
             Prim("cylinder", (0.55, -0.10, 0.03), (0.035, 0.06), CYAN, name="jumbo cyan spool"),
             Prim("box", (0.42, -0.12, 0.015), (0.09, 0.06, 0.03), CYAN, name="cyan sponge"),
             Prim("sphere", (0.58, 0.12, 0.015), (0.015,), GREY, name="grey marble")]
    return prims, Vocabulary.from_yaml(EXAMPLE)


def test_a_scene_of_another_vocabulary_is_named_in_its_words():
    """Other colours (cyan, grey), other size words (mini, jumbo) and categories the catalogue
    lacks (spool, sponge, marble): every object is one segment named by its own entry."""
    prims, vocab = _workshop()
    K, T, shape = overhead_camera(512)
    obs = render(prims, K, T, shape)
    scene = GeometricPerceiver(vocabulary=vocab).survey(obs)
    inst = obs.annotations["instance"]
    named = {}
    for o in scene.objects:
        ids, counts = np.unique(inst[o.mask], return_counts=True)
        assert counts.max() / counts.sum() > 0.95
        named[int(ids[counts.argmax()])] = o.name
    assert named == {i + 1: p.name for i, p in enumerate(prims)}


@pytest.mark.parametrize(("text", "index"), [
    ("the mini cyan spool", 0), ("the jumbo spool", 1), ("the small reel", 0), ("the larger spool", 1),
    ("the cyan sponge", 2), ("the block", 2), ("the grey marble", 3),
])
def test_goals_in_another_vocabulary_are_grounded_to_the_right_object(text, index):
    """Its words, its synonyms, and English size words read on its size scale ("small" is its
    smallest size word)."""
    prims, vocab = _workshop()
    K, T, shape = overhead_camera(512)
    obs = render(prims, K, T, shape)
    per = GeometricPerceiver(vocabulary=vocab)
    loc = per.locate(obs, text, per.survey(obs))
    assert loc is not None and loc.alternatives == []
    ids, counts = np.unique(obs.annotations["instance"][loc.mask], return_counts=True)
    assert ids[counts.argmax()] == index + 1


def test_an_object_of_another_vocabulary_is_grasped_across_its_width():
    prims, vocab = _workshop()
    K, T, shape = overhead_camera(512)
    obs = render(prims, K, T, shape)
    per = GeometricPerceiver(vocabulary=vocab)
    loc = per.locate(obs, "the mini cyan spool", per.survey(obs))
    assert loc is not None
    grasps = plan_grasps(obs, loc)
    assert grasps and abs(grasps[0].metadata["object_width"] - 0.04) < 0.005


def test_words_the_vocabulary_lacks_ground_nothing():
    prims, vocab = _workshop()
    K, T, shape = overhead_camera(512)
    obs = render(prims, K, T, shape)
    per = GeometricPerceiver(vocabulary=vocab)
    assert per.locate(obs, "the red box", per.survey(obs)) is None


def test_a_vocabulary_built_in_code_names_like_its_yaml():
    spool = Category("spool", "cylinder", (("mini", (0.04, 0.04, 0.03)), ("jumbo", (0.07, 0.07, 0.06))),
                     ("cyan", "grey"), ("cylinder", "disc"), ("box", "bar"), words=("spools", "reel", "bobbin"))
    vocab = Vocabulary.from_yaml(EXAMPLE)
    assert vocab.by_name["spool"] == spool


BAD = [
    ("sizes: [small]\n", 1, 1, "no categories"),
    ("sizes: [small]\ncategories: {box: {body: brick, sizes: {small: [0.1, 0.1, 0.1]}, colours: [red]}}\n",
     2, 26, "body: unknown 'brick'"),
    ("sizes: [small]\ncategories:\n  box:\n    body: box\n    sizes: {huge: [0.1, 0.1, 0.1]}\n    colours: [red]\n",
     5, 13, "'huge' is no size word"),
    ("sizes: [small]\ncategories:\n  box:\n    body: box\n    sizes: {small: [0.1, 0.1]}\n    colours: [red]\n",
     5, 20, "expected [x, y, z]"),
    ("sizes: [small]\ncategories:\n  box:\n    body: box\n    sizes: {small: [0.1, 0.1, 0.1]}\n"
     "    colours: [red]\n    shapes: [box, blob]\n", 7, 19, "unknown 'blob'"),
    ("sizes: [small]\ncategories:\n  box:\n    body: box\n    sizes: {small: [0.1, 0.1, 0.1]}\n"
     "    colours: [red]\n    looks: {red: crimson}\n", 7, 18, "palette name"),
    ("sizes: [small]\ncategories:\n  box:\n    body: box\n    colours: [red]\n", 4, 5, "missing sizes"),
    ("sizes: [small]\ncategories:\n  box:\n    body: box\n    sizes: {small: [0.1, 0.1, 0.1]}\n"
     "    colours: [red, teal]\n", 6, 14, "'teal' is no palette colour"),
    ("sizes: [small]\ncolors: []\ncategories: {}\n", 2, 1, "unknown key 'colors'"),
]


@pytest.mark.parametrize(("text", "line", "col", "what"), BAD)
def test_a_bad_vocabulary_is_one_line_at_its_place(tmp_path, text, line, col, what):
    path = tmp_path / "v.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        Vocabulary.from_yaml(path)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{path}:{line}:{col}: ") and what in msg
    assert "(" in msg  # the fix is named


def test_the_default_file_ships_with_the_package():
    assert DEFAULT_FILE.parent.name == "perception" and DEFAULT_FILE.is_file()


def test_an_untextured_world_sees_each_colour_as_its_word():
    """PyBullet draws pybullet_data's duck texture, so a blue duck looks green there; a world that
    draws meshes in their own colour (MuJoCo's) takes the vocabulary without those looks."""
    v = default_vocabulary()
    assert v.looks("duck", "blue") == "green"
    plain = v.untextured()
    assert plain.looks("duck", "blue") == "blue" and plain.appearance == {}
    assert [c.name for c in plain.categories] == [c.name for c in v.categories]


def test_the_shipped_vocabulary_reads_goal_texts_exactly_as_before():
    """Its words and phrasing are data now; every parse of a corpus of goal phrasings (names,
    synonyms, relations, superlatives, comparatives, unknown nouns) is what it was when they were code."""
    import json
    from dataclasses import asdict

    from bt_grasp.perception.query import parse

    golden = json.loads((ROOT / "tests" / "data" / "query_parses.json").read_text())
    assert len(golden) > 40
    for phrase, want in golden.items():
        assert asdict(parse(phrase)) == want, phrase
        assert asdict(parse(phrase, default_vocabulary())) == want, phrase


def test_a_vocabulary_reads_goal_texts_in_its_own_words():
    """The workshop file's phrasing: "teal" is cyan, "big" its largest size word; a catalogue
    word it does not hold ("mug") names nothing, so it is an unknown noun."""
    from bt_grasp.perception.query import parse

    _, vocab = _workshop()
    q = parse("the big teal reel please", vocab)
    assert (q.category, q.colour, q.size) == ("spool", "cyan", "jumbo")
    assert parse("the red mug", vocab).unknown_noun == "mug"


def test_phrasing_mistakes_are_one_line_at_their_place(tmp_path):
    """An unknown phrasing key or a colour word without a meaning fails at its line and column."""
    base = EXAMPLE.read_text().split("phrasing:")[0]
    path = tmp_path / "v.yaml"
    path.write_text(base + "phrasing:\n  colours: {teal: cyan}\n")
    with pytest.raises(UserError) as err:
        Vocabulary.from_yaml(path)
    assert "unknown key 'colours'" in str(err.value) and f":{base.count(chr(10)) + 2}:3:" in str(err.value)
    path.write_text(base + "phrasing:\n  colour_words: {teal: [cyan]}\n")
    with pytest.raises(UserError, match="phrasing.colour_words.teal: expected a word"):
        Vocabulary.from_yaml(path)
