"""The verifier merges two search states only if their blackboard values are equal: the merge key
(bt_grasp/value_key.py) is exact, where the trace's display encoding (json_encoding.jsonable)
cuts lists at 50 items and shows arrays over 16 elements as their shape."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np

from bt_grasp.json_encoding import jsonable
from bt_grasp.value_key import value_key


@dataclass
class Grip:
    width: float
    points: list[int]


class Colour(Enum):
    RED = "red"


def test_values_the_display_encoding_conflates_get_different_keys():
    """A 51st list item and the content of a 17-element array: invisible to jsonable, kept here."""
    long_a, long_b = list(range(51)), [*range(50), 99]
    array_a, array_b = np.zeros(17), np.ones(17)
    for a, b in ((long_a, long_b), (array_a, array_b), ({"pts": array_a}, {"pts": array_b}),
                 (Grip(0.1, long_a), Grip(0.1, long_b))):
        assert jsonable(a) == jsonable(b)
        assert value_key(a) != value_key(b)
        hash(value_key(a))


def test_equal_values_get_the_same_key():
    """Copies, dict order, numpy scalars and NaN: equal values merge."""
    pairs = [([1, 2, {"a": 1.5, "b": None}], [1, 2, {"b": None, "a": 1.5}]),
             (np.arange(20.0), np.arange(20.0)), ({"x": np.float64(0.25)}, {"x": 0.25}),
             ([math.nan], [math.nan]), (Grip(0.1, [1, 2]), Grip(0.1, [1, 2])), ({1, 2}, {2, 1}),
             (Colour.RED, Colour.RED), ("label", "label"), (3, 3)]
    for a, b in pairs:
        assert value_key(a) == value_key(b), (a, b)
        assert hash(value_key(a)) == hash(value_key(b))


def test_types_inside_a_value_stay_apart():
    """Inside a structure 1, 1.0 and True differ, as they do in a trace; arrays differ by dtype
    and shape."""
    assert len({value_key([1]), value_key([1.0]), value_key([True])}) == 3
    assert value_key(np.zeros(4)) != value_key(np.zeros(4, dtype=np.float32))
    assert value_key(np.zeros(4)) != value_key(np.zeros((2, 2)))


def test_both_search_engines_key_the_blackboard_with_it():
    """The reference search (verifier/compiled/state.py) and the symbolic one (verifier/symbolic/keys.py)."""
    from bt_grasp.verifier.compiled import state
    from bt_grasp.verifier.symbolic import keys as model_keys

    assert state.value_key is value_key and model_keys.value_key is value_key
    assert not hasattr(state, "jsonable") and not hasattr(model_keys, "jsonable")
