"""Colour names under the scene's own light: the value splits (white, black, brown) follow the
light read off the basket's grey floor, so a white box in a dim scene is still white."""

from __future__ import annotations

import numpy as np

from bt_grasp.perception.colour import FIXTURE_V80, name_colour, scene_brightness


def _pixels(rgb: tuple[float, float, float], n: int = 600) -> np.ndarray:
    return np.tile(np.round(np.asarray(rgb) * 255).astype(np.uint8), (n, 1))


def test_the_basket_floor_gives_the_scenes_light():
    assert abs(scene_brightness(_pixels((FIXTURE_V80,) * 3)) - 1.0) < 0.01  # the calibration light
    assert abs(scene_brightness(_pixels((0.45, 0.45, 0.45))) - 0.45 / FIXTURE_V80) < 0.01
    assert scene_brightness(_pixels((0.05,) * 3)) == 0.4  # kept within bounds
    assert scene_brightness(_pixels((0.5,) * 3, n=100)) == 1.0  # too little floor in view: no guess


def test_a_white_box_in_a_dim_scene_is_white_and_a_black_one_stays_black():
    dim = scene_brightness(_pixels((0.36, 0.36, 0.36)))  # the floor at 56 % of the calibration light
    white_in_dim_light = _pixels((0.52, 0.52, 0.52))
    assert name_colour(white_in_dim_light)[0] == "grey"  # read against the calibration light
    assert name_colour(white_in_dim_light, dim)[0] == "white"
    assert name_colour(_pixels((0.06, 0.06, 0.06)), dim)[0] == "black"


def test_a_red_can_in_a_dim_scene_is_red_not_brown():
    dim = scene_brightness(_pixels((0.4, 0.4, 0.4)))
    red_in_dim_light = _pixels((0.55, 0.06, 0.06))
    assert name_colour(red_in_dim_light)[0] == "brown"
    assert name_colour(red_in_dim_light, dim)[0] == "red"
    assert name_colour(_pixels((0.30, 0.18, 0.07)), dim)[0] == "brown"  # a brown one stays brown
