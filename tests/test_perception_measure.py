"""features.measure returns a typed, frozen record; its attributes() are what a SceneObject carries."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bt_grasp.perception.assemble import heights_and_points
from bt_grasp.perception.features import measure
from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.synthetic import Prim, overhead_camera, render
from bt_grasp.perception.types import Measured

RED = (0.85, 0.10, 0.10)


def _frame():
    K, T, shape = overhead_camera(256)
    obs = render([Prim("box", (0.5, 0.0, 0.02), (0.06, 0.045, 0.04), RED, name="medium red box")], K, T, shape)
    P, heights, _ = heights_and_points(obs)
    return obs, P, heights, obs.annotations["instance"] == 1


def test_a_measured_segment_is_a_frozen_record_named_by_its_best_entry():
    obs, P, heights, mask = _frame()
    m = measure(mask, P, heights, obs.rgb)
    assert isinstance(m, Measured)
    assert (m.colour, m.category, m.size, m.seen_colour) == ("red", "box", "medium", "red")
    assert abs(m.extent[0] - 0.06) < 0.006 and abs(m.extent[1] - 0.045) < 0.006
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.category = "can"  # type: ignore[misc]


def test_a_segment_with_too_few_points_has_only_the_basic_attributes():
    obs, P, heights, _ = _frame()
    speck = np.zeros(heights.shape, dtype=bool)
    speck[0, 0] = True
    m = measure(speck, P, heights, obs.rgb)
    assert m.category == "irregular" and m.seen_colour is None
    assert "seen_colour" not in m.attributes() and m.attributes()["name_scores"] == {}


def test_a_surveyed_object_carries_the_measured_attributes():
    obs, P, heights, mask = _frame()
    (obj,) = GeometricPerceiver().survey(obs).objects
    attrs = measure(mask, P, heights, obs.rgb).attributes()
    assert set(attrs) - {"point2d"} <= set(obj.attributes)
    assert obj.attributes["category"] == attrs["category"] and obj.attributes["extent"] == pytest.approx(attrs["extent"], abs=0.003)
