"""Naming in the catalogue's words, splitting same-colour touching objects, the basket, and
asking instead of guessing when two objects fit the words equally well."""

from __future__ import annotations

import numpy as np
import pytest

from bt_grasp.bench.catalogue import COLOURS
from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.grounding import resolve
from bt_grasp.perception.synthetic import Prim, overhead_camera, render
from bt_grasp.perception.vocabulary import (
    best_name,
    catalogue_colour,
    catalogue_name,
    cylinder_evidence,
    looks,
    name_scores,
    sizes_of,
)


def rgb(c: str) -> tuple[float, float, float]:
    return COLOURS[c][:3]  # type: ignore[return-value]


def _measured(long: float, short: float, height: float, **cues: float) -> dict[str, float]:
    m = {"long": long, "short": short, "height_lo": 0.3 * height, "height_firm": height, "height_hi": height,
         "p_round": 0.5, "p_flat": 0.5}
    m.update(cues)
    return m


def test_catalogue_naming_rule_uses_size_words_only_for_nouns_with_several_sizes():
    assert sizes_of("ball") == ("small", "medium", "large")
    assert sizes_of("cube") == ("medium",)
    assert catalogue_name("black", "ball", "small") == "small black ball"
    assert catalogue_name("orange", "cube", "medium") == "orange cube"
    assert catalogue_name("purple", "puck", "medium") == "purple puck"


@pytest.mark.parametrize(("m", "colour", "noun", "size"), [
    # A 4 cm sphere cap: a small ball, not a "medium" one (sizes are the noun's own scale).
    (_measured(0.04, 0.04, 0.04, p_round=0.95, p_flat=0.05, p_sphere=0.99, sphere_r=0.02), "black", "ball", "small"),
    (_measured(0.056, 0.056, 0.056, p_round=0.95, p_flat=0.05, p_sphere=0.99, sphere_r=0.028), "red", "ball", "medium"),
    # A flat disc 6 cm across and 2 cm tall is a puck.
    (_measured(0.06, 0.06, 0.02, p_round=0.95, p_flat=0.98, p_planar=0.5), "purple", "puck", None),
    # 4.5 cm on every side with flat faces is a cube, not a box.
    (_measured(0.045, 0.045, 0.045, p_round=0.02, p_flat=0.98, p_planar=0.99), "orange", "cube", None),
    # A jenga block is 13.5 x 4.5 x 2.7 cm; a large bar is 15 x 3 x 3.
    (_measured(0.135, 0.045, 0.027, p_round=0.02, p_flat=0.98, p_planar=0.99), "brown", "jenga block", None),
    (_measured(0.15, 0.03, 0.03, p_round=0.02, p_flat=0.98, p_planar=0.99), "green", "bar", "large"),
    # An upright can 5.6 cm across and 8 cm tall is a medium can.
    (_measured(0.056, 0.056, 0.08, p_round=0.95, p_flat=0.98), "blue", "can", "medium"),
])
def test_measurements_are_named_by_the_best_fitting_catalogue_entry(m, colour, noun, size):
    got_noun, got_size, _ = best_name(name_scores(m, colour))
    assert got_noun == noun
    if size is not None:
        assert got_size == size


def test_catalogue_colours_are_prior_knowledge():
    """Dominoes exist only in black and white: a purple one is much less likely."""
    m = _measured(0.076, 0.038, 0.0095, p_round=0.02, p_flat=0.99, p_planar=0.99)
    white, purple = name_scores(m, "white"), name_scores(m, "purple")
    assert best_name(white)[0] == "domino"
    assert purple["domino"]["small"] < white["domino"]["small"] / 4


def test_a_ball_touching_a_bar_of_the_same_colour_is_two_objects():
    red = rgb("red")
    prims = [Prim("box", (0.50, 0.0, 0.015), (0.15, 0.03, 0.03), red, name="large red bar"),
             Prim("sphere", (0.50, 0.043, 0.028), (0.028,), red, name="medium red ball")]
    K, T, shape = overhead_camera(512)
    obs = render(prims, K, T, shape)
    whole = GeometricPerceiver(split_valleys=False).survey(obs)
    assert len(whole.objects) == 1  # no colour or depth edge between them
    scene = GeometricPerceiver().survey(obs)
    assert sorted(o.name for o in scene.objects) == ["large red bar", "medium red ball"]
    inst = obs.annotations["instance"]
    for o in scene.objects:
        ids, counts = np.unique(inst[o.mask], return_counts=True)
        assert counts.max() / counts.sum() > 0.95  # each segment is one object


def test_an_object_with_a_fold_of_its_own_is_not_cut():
    """A box lying in a groove between two others of its colour: cut at the folds, merged back
    because each piece is then explained by one catalogue box."""
    blue = rgb("blue")
    prims = [Prim("box", (0.50, 0.00, 0.02), (0.09, 0.06, 0.05), blue, name="large blue box"),
             Prim("box", (0.50, 0.10, 0.015), (0.04, 0.03, 0.03), rgb("green"), name="small green box")]
    K, T, shape = overhead_camera(512)
    scene = GeometricPerceiver().survey(render(prims, K, T, shape))
    assert sorted(o.name for o in scene.objects) == ["large blue box", "small green box"]


def _basket(centre: tuple[float, float], content: list[Prim]) -> list[Prim]:
    x, y = centre
    grey = (0.5, 0.5, 0.5)
    walls = [Prim("box", (x, y, 0.001), (0.30, 0.30, 0.002), grey),
             Prim("box", (x + 0.145, y, 0.03), (0.01, 0.30, 0.06), grey),
             Prim("box", (x - 0.145, y, 0.03), (0.01, 0.30, 0.06), grey),
             Prim("box", (x, y + 0.145, 0.03), (0.30, 0.01, 0.06), grey),
             Prim("box", (x, y - 0.145, 0.03), (0.30, 0.01, 0.06), grey)]
    return walls + content


def test_the_basket_is_one_segment_and_what_lies_in_it_is_another():
    cube = Prim("box", (0.45, 0.05, 0.0245), (0.045, 0.045, 0.045), rgb("orange"), name="orange cube")
    outside = Prim("sphere", (0.50, -0.25, 0.028), (0.028,), rgb("yellow"), name="medium yellow ball")
    K, T, shape = overhead_camera(512, height=0.9)
    obs = render(_basket((0.45, 0.05), [cube]) + [outside], K, T, shape)
    scene = GeometricPerceiver().survey(obs)
    by_name = {o.name: o for o in scene.objects}
    assert set(by_name) == {"basket", "orange cube", "medium yellow ball"}
    inst = obs.annotations["instance"]
    basket_px = np.isin(inst, [1, 2, 3, 4, 5])
    iou = (by_name["basket"].mask & basket_px).sum() / (by_name["basket"].mask | basket_px).sum()
    assert iou > 0.9  # walls and floor
    assert by_name["orange cube"].attributes.get("in_receptacle") == "basket"
    assert "in_receptacle" not in by_name["medium yellow ball"].attributes


def test_two_equally_good_candidates_are_returned_as_alternatives():
    red = rgb("red")
    prims = [Prim("box", (0.45, 0.10, 0.015), (0.04, 0.03, 0.03), red, name="small red box"),
             Prim("box", (0.55, -0.10, 0.015), (0.04, 0.03, 0.03), red, name="small red box"),
             Prim("box", (0.50, 0.20, 0.025), (0.09, 0.06, 0.05), red, name="large red box")]
    K, T, shape = overhead_camera(512)
    obs = render(prims, K, T, shape)
    per = GeometricPerceiver()
    scene = per.survey(obs)
    loc = per.locate(obs, "the small red box", scene)
    assert loc is not None and len(loc.alternatives) == 1
    assert loc.alternatives[0].startswith("the small red box on the")
    # A spatial word breaks the tie: no question needed.
    left = per.locate(obs, "the small red box on the left", scene)
    assert left is not None and left.alternatives == []
    assert left.points_base[:, 1].mean() > 0  # image left is base +y for this camera
    # The large one is unique.
    big = per.locate(obs, "the large red box", scene)
    assert big is not None and big.alternatives == []
    hit = resolve("the larger red box", scene)
    assert hit is not None and hit.obj.name == "large red box" and not hit.alternatives


def test_a_sphere_fit_names_a_half_hidden_ball_whatever_its_outline():
    """A sliver of a 4 cm ball: its outline is cut and the patch lies within the plane tolerance,
    but the sphere fit (2 cm radius, sub-mm residual) only a ball explains."""
    m = _measured(0.034, 0.014, 0.014, height_hi=0.0375, p_round=0.7, p_flat=0.09, p_sphere=0.965,
                  sphere_r=0.019, p_planar=0.97, p_cyl=0.0, occluded=1.0)
    assert best_name(name_scores(m, "white"))[:2] == ("ball", "small")


def test_a_large_ball_on_a_hidden_support_is_sized_by_its_radius_not_its_visible_extents():
    m = _measured(0.067, 0.065, 0.137, height_lo=0.041, p_round=0.97, p_flat=0.02, p_sphere=0.91,
                  sphere_r=0.034, p_planar=0.0, p_cyl=0.0, occluded=0.0, tilted=1.0, obb=[0.06, 0.058, 0.029])
    assert best_name(name_scores(m, "yellow"))[:2] == ("ball", "large")


def test_a_leaning_box_showing_one_big_rectangle_is_a_box_not_a_can():
    """A medium box leaning on a neighbour: 62 % of its points on one 6 x 4 cm rectangle, all of
    them on planes, nothing curved. A leaning can would show a disc or narrow curved strips."""
    box = _measured(0.07, 0.059, 0.11, tilted=1.0, p_flat=0.15, p_round=0.3, p_planar=1.0, p_cyl=0.0,
                    p_sphere=0.0, obb=(0.066, 0.047, 0.035),
                    faces=[[0.62, 0.061, 0.041, 0.97], [0.35, 0.06, 0.046, 0.77]])
    assert best_name(name_scores(box, "red"))[:2] == ("box", "medium")
    can = _measured(0.11, 0.07, 0.10, tilted=1.0, p_flat=0.2, p_round=0.6, p_planar=0.3, p_cyl=0.3,
                    p_sphere=0.0, obb=(0.112, 0.066, 0.03),
                    faces=[[0.42, 0.067, 0.066, 0.79], [0.25, 0.111, 0.03, 0.9]])  # its top disc
    assert best_name(name_scores(can, "red"))[:2] == ("can", "large")


def test_a_leaning_cube_is_judged_along_its_own_faces_not_its_points_spread():
    """A 4.5 cm cube leaning on a neighbour, partly hidden (measured on a calibration scene): its
    top and side are 4.5 cm squares, but its points spread 6 cm along their principal axis (the
    faces' diagonal), which a 6 x 4.5 x 4 cm box explains better than a cube."""
    m = _measured(0.061, 0.051, 0.034, height_hi=0.081, p_round=0.12, p_flat=0.01, p_planar=0.97,
                  p_cyl=0.0, p_sphere=0.0, occluded=1.0, tilted=1.0, obb=[0.06, 0.049, 0.039],
                  faces=[[0.7, 0.046, 0.045, 0.967], [0.295, 0.046, 0.043, 0.819]])
    assert best_name(name_scores(m, "red"))[0] == "box"  # the point spread alone
    m["face_frame"] = [0.046, 0.044, 0.041]  # extents along the big square's sides and normal
    assert best_name(name_scores(m, "red"))[0] == "cube"


def test_a_leaning_duck_is_no_leaning_can_or_puck_without_a_flat_end_or_curved_side():
    """Measured on a calibration scene: a large duck leaning on a neighbour, partly hidden. Its
    extents fit a standing puck or can too; what it lacks is a cylinder's flat end disc or
    curved side. A leaning can whose end disc is only its third face still shows one."""
    duck = _measured(0.06, 0.045, 0.066, height_lo=0.04, p_round=0.89, p_flat=0.01, p_planar=0.0,
                     p_cyl=0.0, p_sphere=0.0, occluded=1.0, tilted=1.0, obb=[0.055, 0.049, 0.034],
                     faces=[[0.279, 0.059, 0.044, 0.832], [0.23, 0.058, 0.034, 0.821], [0.144, 0.031, 0.019, 0.8]])
    scores = {noun: max(by_size.values()) for noun, by_size in name_scores(duck, "green").items()}
    assert cylinder_evidence(duck) < 0.1
    assert best_name(name_scores(duck, "green"))[0] == "duck"
    assert scores["puck"] < 0.5 * scores["duck"] and scores["can"] < 0.5 * scores["duck"]
    can_faces = [[0.342, 0.081, 0.024, 0.949], [0.263, 0.082, 0.032, 0.844], [0.224, 0.056, 0.055, 0.802]]
    assert cylinder_evidence({"faces": can_faces, "p_cyl": 0.0}) > 0.5  # two side strips, then the disc


def test_textured_meshes_are_named_by_their_catalogue_colour_not_their_tint():
    """The duck's texture tints its catalogue colour: a blue duck looks green, a purple one brown."""
    assert looks("duck", "blue") == "green" and looks("duck", "purple") == "brown"
    assert looks("box", "blue") == "blue"
    assert catalogue_colour("duck", "brown") == "purple"  # only the purple duck looks brown
    assert catalogue_colour("duck", "green") == "green"  # the green duck looks green too: its own colour
    assert catalogue_colour("box", "brown") == "brown"
    duck = _measured(0.045, 0.043, 0.033, p_round=0.5, p_flat=0.1, p_planar=0.05)
    # Seen brown, a duck is still a duck (no catalogue duck is brown, but the purple one looks it).
    assert best_name(name_scores(duck, "brown"))[0] == "duck"
