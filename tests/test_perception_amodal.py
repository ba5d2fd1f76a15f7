"""A partly hidden object is judged by what it could be with the rest out of sight, where nearer
objects leave room for it; a patch with bare table all round is only what it shows."""

from __future__ import annotations

import numpy as np

from bt_grasp.bench.catalogue import COLOURS
from bt_grasp.perception.amodal import footprint_room
from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.synthetic import Prim, overhead_camera, render

YELLOW, RED = COLOURS["yellow"][:3], COLOURS["red"][:3]
# A large bar (15 x 3 x 3 cm) with all but 4 cm of it under a box lying across it.
BAR = Prim("box", (0.50, 0.0, 0.015), (0.15, 0.03, 0.03), YELLOW, name="large yellow bar")  # type: ignore[arg-type]
COVER = Prim("box", (0.52, 0.0, 0.045), (0.12, 0.09, 0.03), RED, name="large red box")  # type: ignore[arg-type]
# The same visible patch, alone: a 4 x 3 x 3 cm block, a small box.
PATCH = Prim("box", (0.445, 0.0, 0.015), (0.04, 0.03, 0.03), YELLOW, name="small yellow box")  # type: ignore[arg-type]


def _survey(prims: list[Prim]) -> tuple[GeometricPerceiver, object, dict[str, object]]:
    K, T, shape = overhead_camera(512)
    obs = render(prims, K, T, shape)
    per = GeometricPerceiver()
    scene = per.survey(obs)
    return per, obs, {o.attributes["seen_colour"]: o for o in scene.objects}


def test_the_room_under_a_nearer_object_is_measured_along_the_visible_footprint():
    _, obs, by_colour = _survey([BAR, COVER])
    seg = by_colour["yellow"]
    a = seg.attributes
    from bt_grasp.perception.assemble import heights_and_points

    P, heights, _ = heights_and_points(obs)
    along, across = footprint_room(seg.mask, P, heights, a["top_height"], np.asarray(a["footprint_centre"]), a["yaw"])
    long_axis_is_x = abs(np.cos(a["yaw"])) > 0.7
    room_x, room_y = (along, across) if long_axis_is_x else (across, along)
    assert room_x > 0.13  # the visible 4 cm plus the box's 12 cm that could hide the rest
    assert room_y < 0.045  # across it the table shows on both sides: about its 3 cm width


def test_a_bar_mostly_under_a_box_is_found_and_the_same_patch_alone_is_not_a_bar():
    per, obs, by_colour = _survey([BAR, COVER])
    assert by_colour["yellow"].attributes["occluded"]
    hit = per.locate(obs, "the large yellow bar", per.last_scene)
    assert hit is not None and hit.alternatives == []
    inst = obs.annotations["instance"]
    assert np.unique(inst[hit.mask], return_counts=True)[1].max() / hit.mask.sum() > 0.9

    per, obs, by_colour = _survey([PATCH])
    assert not by_colour["yellow"].attributes["occluded"]
    assert per.locate(obs, "the large yellow bar", per.last_scene) is None
    assert per.locate(obs, "the small yellow box", per.last_scene) is not None


def test_two_patches_that_might_each_be_the_goal_are_no_question_but_a_reason_to_look_on():
    """Two bar ends, each under its own box: either could be "the large yellow bar" with its rest
    hidden. Asking "A or B?" about two guesses helps nobody: locate returns None (search)."""
    twin_bar = Prim("box", (0.50, 0.15, 0.015), (0.15, 0.03, 0.03), YELLOW, name="large yellow bar")  # type: ignore[arg-type]
    twin_cover = Prim("box", (0.52, 0.15, 0.045), (0.12, 0.09, 0.03), COLOURS["blue"][:3], name="large blue box")  # type: ignore[arg-type]
    per, obs, _ = _survey([BAR, COVER, twin_bar, twin_cover])
    assert per.locate(obs, "the large yellow bar", per.last_scene) is None
