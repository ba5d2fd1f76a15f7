"""Choosing the target from the request's qualifiers and checking it (bt_grasp/mobile/target.py),
the loose marking matcher and the simulated user's view of the overlay (the suite's Wilson
interval is specified in tests/test_stats.py).

Scenes are hand-made scene graphs with the attributes either backend produces (sim: catalogue
categories; geometric: shape classes such as "cylinder"), so no simulator is needed.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from bt_grasp.mobile.som import LexicalMatcher
from bt_grasp.mobile.target import check, select
from bt_grasp.mobile.user import SeenItem, SimulatedUser, identify
from bt_grasp.perception.types import SceneGraph, SceneObject


def obj(oid: int, name: str, colour: str | None, category: str | None, uv: tuple[float, float],
        extent: tuple[float, float, float] = (0.04, 0.04, 0.05), pixels: int = 250, size: str = "small") -> SceneObject:
    return SceneObject(oid, name, name, uv, oid, {"colour": colour, "category": category, "size": size,
                                                  "extent": list(extent), "pixels": pixels})


def scene(*objs: SceneObject) -> SceneGraph:
    return SceneGraph(list(objs), [])


# -- select: which object the whole request picks out -------------------------------------------------

def test_spatial_word_picks_the_less_visible_of_two_identical_cans() -> None:
    back, front = obj(1, "small red can", "red", "can", (0.51, 0.33), pixels=245), \
        obj(2, "small red can", "red", "can", (0.59, 0.67), pixels=277)
    sc = scene(back, front)
    assert select("red can at the back", sc, sc.objects).best is back
    assert select("red can in front", sc, sc.objects).best is front


def test_two_equally_good_matches_are_ambiguous_and_named() -> None:
    a, b = obj(1, "small red can", "red", "can", (0.5, 0.3)), obj(2, "small red can", "red", "can", (0.5, 0.7))
    sel = select("red can", scene(a, b), [a, b])
    assert sel.alternatives
    assert sel.reason in ("ambiguous: small red can at the back or small red can in front",
                          "ambiguous: small red can in front or small red can at the back")
    c = obj(3, "small blue can", "blue", "can", (0.5, 0.5))
    sel = select("can", scene(a, c), [a, c])
    assert sel.reason in ("ambiguous: small red can or small blue can", "ambiguous: small blue can or small red can")


def test_a_similar_colour_is_not_a_tie() -> None:
    red = obj(1, "small red can", "red", "can", (0.5, 0.3), pixels=200)
    orange = obj(2, "small orange can", "orange", "can", (0.6, 0.7), pixels=300)
    sel = select("red can", scene(red, orange), [red, orange])
    assert sel.best is red and not sel.alternatives


def test_the_perceivers_alternatives_are_honoured() -> None:
    red = obj(1, "small red can", "red", "can", (0.5, 0.3))
    orange = obj(2, "small orange can", "orange", "can", (0.6, 0.7))
    located = SimpleNamespace(object_id=1, alternatives=["small orange can"])
    sel = select("red can", scene(red, orange), [red, orange], located)
    assert sel.best is red and sel.reason == "ambiguous: small red can or small orange can"



def test_the_perceivers_side_qualified_alternatives_are_honoured() -> None:
    """Identical names come back as "the <name> on the <side>" (perception.assemble.alternative_names)."""
    a, b = obj(1, "small red can", "red", "can", (0.58, 0.32)), obj(2, "small red can", "red", "can", (0.59, 0.67))
    b.attributes["extent"] = [0.04, 0.12, 0.12]  # fits a can worse: no tie on scores alone
    located = SimpleNamespace(object_id=1, alternatives=["the small red can on the right"])
    sel = select("red can", scene(a, b), [a, b], located)
    assert sel.best is a and sel.alternatives == [b]

def test_nothing_matching_gives_no_choice() -> None:
    blue = obj(1, "blue cube", "blue", "cube", (0.5, 0.5))
    assert select("yellow ball", scene(blue), [blue]).best is None


# -- check: ok / mismatch / unknown, and unknown is never ok -----------------------------------------

def test_check_accepts_what_the_request_describes() -> None:
    red = obj(1, "small red cylinder", "red", "cylinder", (0.5, 0.3))  # geometric names shapes
    assert check("red can", red, scene(red))[0] == "ok"


def test_check_rejects_a_similar_colour_and_the_wrong_side() -> None:
    red = obj(1, "small red can", "red", "can", (0.5, 0.3))
    orange = obj(2, "small orange can", "orange", "can", (0.6, 0.7))
    verdict, reason = check("red can", orange, scene(red, orange))
    assert verdict == "mismatch" and "colour mismatch" in reason
    other = obj(3, "small red can", "red", "can", (0.6, 0.7))
    assert check("red can at the back", other, scene(red, other))[0] == "mismatch"
    assert check("red can at the back", red, scene(red, other))[0] == "ok"


def test_what_cannot_be_measured_is_unknown_not_ok() -> None:
    blob = obj(1, "small red irregular", "red", "irregular", (0.5, 0.5))
    assert check("red can", blob, scene(blob))[0] == "unknown"
    colourless = obj(2, "small box", None, "box", (0.5, 0.5))
    assert check("red box", colourless, scene(colourless))[0] == "unknown"
    assert check("it", colourless, scene(colourless))[0] == "unknown"


def test_size_words_compare_like_with_like() -> None:
    small = obj(1, "small red box", "red", "box", (0.5, 0.3), extent=(0.04, 0.03, 0.03))
    medium = obj(2, "medium red box", "red", "box", (0.6, 0.7), extent=(0.06, 0.045, 0.04), size="medium")
    sc = scene(small, medium)
    assert check("small red box", small, sc)[0] == "ok"
    assert check("small red box", medium, sc)[0] == "mismatch"
    assert check("small red box", medium, scene(medium))[0] == "unknown"  # nothing to compare with


# -- the loose first pass that decides what is marked ------------------------------------------------

def test_marking_is_loose_about_shape_classes_and_similar_colours() -> None:
    m = LexicalMatcher()
    assert m.score("red can", obj(1, "small red cylinder", "red", "cylinder", (0, 0))) == 1.0
    assert m.score("red can", obj(2, "small orange can", "orange", "can", (0, 0))) >= 0.5
    assert m.score("red can", obj(3, "small blue can", "blue", "can", (0, 0))) < 0.5
    assert m.score("red can", obj(4, "red cube", "red", "cube", (0, 0))) < 0.5


# -- the simulated user reads the overlay, not the robot's names -------------------------------------

def test_user_recognises_its_target_under_the_mark_not_by_the_robots_name() -> None:
    inst = np.zeros((4, 4), dtype=np.int32)
    inst[:2] = 7
    inst[2:] = 8
    obs = SimpleNamespace(annotations={"instance": inst, "objects": {7: {"name": "small red can", "colour": "red"},
                                                                    8: {"name": "small orange can", "colour": "orange"}}})
    top = np.zeros((4, 4), dtype=bool)
    top[:2] = True
    seen = [SeenItem(0, "a small red cylinder", None, (0.5, 0.3), "red", "cylinder", None, top, obs),
            SeenItem(1, "a small red cylinder", None, (0.5, 0.7), "red", "cylinder", None, ~top, obs)]
    assert [identify(s).true_name for s in seen] == ["small red can", "small orange can"]
    user = SimulatedUser("Bring me the red can", frozenset({"small red can"}))
    assert user.answer("Which one?", seen) == "The red one."


def test_an_unknown_perception_backend_is_refused_in_one_line(tmp_path, capsys) -> None:
    from bt_grasp.mobile.cli import main

    assert main(["scenarios", "--perception", "lidar", "--out", str(tmp_path)]) == 2
    shown = capsys.readouterr()
    assert shown.err.strip().splitlines() == ["unknown perception 'lidar'; choose from sim, geometric"]
    assert shown.out == ""
    assert not (tmp_path / "results.jsonl").exists()
