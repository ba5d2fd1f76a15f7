"""Both perception backends on synthetic RGB-D frames: segmentation, naming, relations, locate."""

from __future__ import annotations

import numpy as np
import pytest

from bt_grasp.bench.catalogue import COLOURS
from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.geometry import backproject, fit_table_plane, pointmap, project
from bt_grasp.perception.sim_annotator import SimPerceiver
from bt_grasp.perception.synthetic import Prim, overhead_camera, render
from bt_grasp.perception.types import Perceiver


def rgb(c: str) -> tuple[float, float, float]:
    return COLOURS[c][:3]  # type: ignore[return-value]


def scene_prims() -> list[Prim]:
    return [
        Prim("box", (0.50, 0.06, 0.025), (0.06, 0.045, 0.05), rgb("red"), yaw=0.3, name="medium red box",
             colour="red", category="box", size="medium"),
        Prim("box", (0.50, 0.06, 0.0625), (0.04, 0.03, 0.025), rgb("white"), name="small white box",
             colour="white", category="box", size="small"),
        Prim("cylinder", (0.42, -0.10, 0.04), (0.028, 0.08), rgb("blue"), name="medium blue can",
             colour="blue", category="can", size="medium"),
        Prim("sphere", (0.62, -0.05, 0.028), (0.028,), rgb("yellow"), name="medium yellow ball",
             colour="yellow", category="ball", size="medium"),
        Prim("box", (0.34, 0.12, 0.0125), (0.15, 0.03, 0.025), rgb("green"), yaw=0.5, name="large green bar",
             colour="green", category="bar", size="large"),
        Prim("box", (0.62, -0.20, 0.0225), (0.045, 0.045, 0.045), rgb("black"), name="black cube",
             colour="black", category="cube", size="medium"),
        Prim("box", (0.62, -0.155, 0.0225), (0.045, 0.045, 0.045), rgb("orange"), name="orange cube",
             colour="orange", category="cube", size="medium"),
    ]


@pytest.fixture(scope="module")
def obs():
    K, T, shape = overhead_camera(256, tilt=0.15)
    return render(scene_prims(), K, T, shape)


def test_backprojection_round_trip_and_plane(obs):
    P = pointmap(obs.depth, obs.K, obs.T_cam_base)
    table = obs.annotations["instance"] == 0
    assert np.nanmax(np.abs(P[table][:, 2])) < 1e-6  # table at z = 0
    pts = backproject(obs.depth, obs.K, obs.T_cam_base, table)
    uv, z = project(pts, obs.K, obs.T_cam_base)
    v, u = np.nonzero(table)
    assert np.allclose(uv, np.column_stack([u, v]), atol=1e-6)
    plane = fit_table_plane(P.reshape(-1, 3))
    assert plane is not None and abs(plane.normal[2]) > 0.9999 and abs(plane.offset) < 1e-4


@pytest.mark.parametrize("backend", [SimPerceiver, GeometricPerceiver])
def test_backends_implement_the_protocol(backend):
    assert isinstance(backend(), Perceiver)


def test_geometric_finds_and_names_objects(obs):
    scene = GeometricPerceiver().survey(obs)
    prims = scene_prims()
    assert len(scene.objects) == len(prims)
    for prim in prims:
        hits = [o for o in scene.objects if o.attributes["colour"] == prim.colour]
        assert len(hits) == 1, (prim.name, [o.name for o in scene.objects])
        o = hits[0]
        if prim.name != "medium red box":  # the red box is half hidden under the white one
            assert np.linalg.norm(np.asarray(o.attributes["footprint_centre"]) - prim.center[:2]) < 0.01
        assert 0.0 <= o.point2d[0] <= 1.0 and 0.0 <= o.point2d[1] <= 1.0
        assert o.mask is not None and o.mask[int(o.point2d[1] * 255), int(o.point2d[0] * 255)]
    # Named in the catalogue's words: its nouns, and sizes on that noun's own scale.
    names = {o.attributes["colour"]: o.name for o in scene.objects}
    assert names == {p.colour: p.name for p in prims}, names
    shapes = {o.attributes["colour"]: o.attributes["shape"] for o in scene.objects}
    assert shapes["blue"] == "cylinder" and shapes["yellow"] == "ball" and shapes["green"] == "bar"


@pytest.mark.parametrize("backend", [SimPerceiver, GeometricPerceiver])
def test_relations(obs, backend):
    scene = backend().survey(obs)
    by_colour = {o.attributes["colour"]: o.id for o in scene.objects}
    rel = set(scene.relations)
    w, r = by_colour["white"], by_colour["red"]
    assert (w, "on_top_of", r) in rel
    assert (r, "partially_occluded_by", w) in rel
    assert (r, "on_top_of", w) not in rel
    # Grounding reads the relation as an attribute: the hidden part lowers every catalogue fit.
    occluded = {o.attributes["colour"]: o.attributes["occluded"] for o in scene.objects}
    assert occluded["red"] and not occluded["white"] and not occluded["yellow"]
    b, o = by_colour["black"], by_colour["orange"]
    assert (b, "next_to", o) in rel and (o, "next_to", b) in rel
    assert (by_colour["blue"], "next_to", by_colour["yellow"]) not in rel
    # Image convention: base +y is image left for this camera; base +x is image up (behind).
    assert (by_colour["green"], "left_of", by_colour["blue"]) in rel
    assert (by_colour["yellow"], "behind", by_colour["blue"]) in rel or \
        (by_colour["yellow"], "right_of", by_colour["blue"]) in rel
    for s, name, t in rel:
        assert name in ("left_of", "right_of", "in_front_of", "behind", "on_top_of", "partially_occluded_by",
                        "next_to")
        assert s != t


def test_sim_backend_uses_annotator_names(obs):
    scene = SimPerceiver().survey(obs)
    assert sorted(o.name for o in scene.objects) == sorted(p.name for p in scene_prims())
    assert all(o.attributes["source"] == "sim_annotator" for o in scene.objects)
    # its names are the catalogue's: no measured fit, and no reading of what a hidden part could be
    assert not any(o.attributes["name_scores"] or o.attributes.get("amodal_scores") for o in scene.objects)
    assert not SimPerceiver().locate(obs, "the red box", scene).hidden_reading


@pytest.mark.parametrize("backend", [SimPerceiver, GeometricPerceiver])
def test_locate_returns_mask_bbox_points(obs, backend):
    per = backend()
    scene = per.survey(obs)
    loc = per.locate(obs, "the blue can", scene)
    assert loc is not None
    u0, v0, u1, v1 = loc.bbox
    v, u = np.nonzero(loc.mask)
    assert (u.min(), v.min(), u.max(), v.max()) == (u0, v0, u1, v1)
    assert len(loc.points_base) == loc.mask.sum()
    assert np.linalg.norm(loc.points_base[:, :2].mean(0) - np.array([0.42, -0.10])) < 0.015
    assert loc.points_base[:, 2].max() == pytest.approx(0.08, abs=0.003)
    red = per.locate(obs, "red box", scene)
    assert red is not None and red.occluded_by == [next(o.id for o in scene.objects
                                                        if o.attributes["colour"] == "white")]
    assert per.locate(obs, "the green duck", scene) is None
    assert per.locate(obs, "the banana", scene) is None


def test_sim_hidden_object_is_not_found(obs):
    ann = dict(obs.annotations)
    ann["objects"] = {**ann["objects"], 99: {"name": "small purple ball", "colour": "purple",
                                             "category": "ball", "size": "small"}}
    obs2 = type(obs)(obs.rgb, obs.depth, obs.K, obs.T_cam_base, obs.clock, ann)
    per = SimPerceiver()
    assert per.locate(obs2, "small purple ball", None) is None
    assert per.locate(obs2, "medium yellow ball", None) is not None


def test_sim_backend_refuses_frames_without_annotations(obs):
    bare = type(obs)(obs.rgb, obs.depth, obs.K, obs.T_cam_base)
    with pytest.raises(ValueError):
        SimPerceiver().survey(bare)
    assert len(GeometricPerceiver().survey(bare).objects) == len(scene_prims())


def test_geometric_ids_are_stable_across_frames(obs):
    per = GeometricPerceiver()
    a = per.survey(obs)
    b = per.survey(type(obs)(obs.rgb, obs.depth, obs.K, obs.T_cam_base, clock=1.0))
    assert {o.name: o.id for o in a.objects} == {o.name: o.id for o in b.objects}


def test_geometric_survives_depth_noise():
    K, T, shape = overhead_camera(256, tilt=0.15)
    noisy = render(scene_prims(), K, T, shape, noise=0.001, rng=np.random.default_rng(1))
    scene = GeometricPerceiver().survey(noisy)
    assert sorted(o.attributes["colour"] for o in scene.objects) == sorted(p.colour for p in scene_prims())


def test_survey_at_512_finds_every_object():
    """Speed is measured by tools/perf/perception_eval.py (ms per survey), not asserted here."""
    K, T, shape = overhead_camera(512, tilt=0.15)
    big = render(scene_prims(), K, T, shape)
    scene = GeometricPerceiver().survey(big)
    assert sorted(o.name for o in scene.objects) == sorted(p.name for p in scene_prims())


def _segments(prims: list[Prim]) -> list[set[int]]:
    """The rendered bodies (annotation ids) each geometric segment covers."""
    K, T, shape = overhead_camera(512, tilt=0.15)
    obs = render(prims, K, T, shape)
    inst = obs.annotations["instance"]
    return [{int(i) for i in np.unique(inst[o.mask]) if i} for o in GeometricPerceiver().survey(obs).objects]


def test_the_two_ends_of_a_bar_under_a_box_are_one_object():
    """A box lying across a bar leaves two green ends in the image: one bar, re-joined."""
    bar = Prim("box", (0.50, 0.0, 0.0125), (0.03, 0.15, 0.025), rgb("green"))
    box = Prim("box", (0.50, 0.0, 0.05), (0.08, 0.04, 0.05), rgb("red"))
    assert sorted(map(sorted, _segments([bar, box]))) == [[1], [2]]


def test_two_objects_of_one_colour_beside_one_box_stay_two():
    """A pink ball and a pink can on either side of a taller box look like the two ends of one
    object cut by it (same colour, same top height, one occluder), but no catalogue object
    explains them together: they stay two segments, not one "pink mug"."""
    ball = Prim("sphere", (0.50, -0.045, 0.028), (0.028,), rgb("pink"))
    can = Prim("cylinder", (0.50, 0.045, 0.028), (0.028, 0.056), rgb("pink"))
    box = Prim("box", (0.50, 0.0, 0.05), (0.10, 0.03, 0.10), rgb("blue"))
    assert sorted(map(sorted, _segments([ball, can, box]))) == [[1], [2], [3]]


def test_a_ball_on_a_hidden_post_is_sized_by_its_sphere_not_by_the_table():
    """A 4 cm ball on a thin post 7 cm tall: from above only the ball shows, and the ring of pixels
    around it sees the table, as if the ball were 9 cm tall. Its sphere fit gives its diameter."""
    ball = Prim("sphere", (0.50, 0.0, 0.09), (0.02,), rgb("purple"))
    post = Prim("cylinder", (0.50, 0.0, 0.035), (0.008, 0.07), rgb("white"))
    K, T, shape = overhead_camera(512, tilt=0.15)
    scene = GeometricPerceiver().survey(render([ball, post], K, T, shape))
    assert [o.name for o in scene.objects] == ["small purple ball"]
