"""bt_grasp.stats as a specification: the Wilson score interval and percentiles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bt_grasp.stats import Z95, percentile, wilson

# -- Wilson score interval -------------------------------------------------------------------------

# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3
# (score interval without continuity correction), 4 decimals.
NEWCOMBE = [((81, 263), (0.2553, 0.3662)), ((15, 148), (0.0624, 0.1605)),
            ((0, 20), (0.0, 0.1611)), ((1, 29), (0.0061, 0.1718))]


@pytest.mark.parametrize(("kn", "expected"), NEWCOMBE, ids=lambda v: str(v))
def test_wilson_gives_the_published_intervals(kn, expected):
    assert wilson(*kn) == pytest.approx(expected, abs=5e-5)


def test_wilson_known_values_at_small_n():
    assert wilson(5, 10) == pytest.approx((0.2365896, 0.7634104), abs=1e-7)
    assert wilson(8, 10) == pytest.approx((0.4901568, 0.9433191), abs=1e-7)


def test_wilson_of_no_trials_is_the_whole_interval():
    """n = 0: nothing is known about the rate, so the interval is all of [0, 1] (never NaN)."""
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(0, 0, z=Z95) == (0.0, 1.0)
    assert wilson(0, 0, z=3.0) == (0.0, 1.0)


@pytest.mark.parametrize("n", [1, 2, 10, 263, 10**6])
def test_wilson_at_no_successes_starts_at_zero_and_at_all_ends_at_one(n):
    lo, hi = wilson(0, n)
    assert lo == 0.0 and 0.0 < hi < 1.0
    lo, hi = wilson(n, n)
    assert 0.0 < lo < 1.0 and hi == 1.0
    assert wilson(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)
    assert wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)


@given(n=st.integers(1, 10_000), data=st.data())
def test_wilson_is_symmetric_in_successes_and_failures(n, data):
    k = data.draw(st.integers(0, n))
    lo, hi = wilson(k, n)
    flo, fhi = wilson(n - k, n)
    assert lo == pytest.approx(1 - fhi, abs=1e-12) and hi == pytest.approx(1 - flo, abs=1e-12)


@given(n=st.integers(1, 10_000), data=st.data())
def test_wilson_holds_the_rate_inside_zero_one(n, data):
    k = data.draw(st.integers(0, n))
    lo, hi = wilson(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_a_wider_z_gives_a_wider_interval_and_more_trials_a_narrower_one():
    lo, hi = wilson(3, 10)
    wlo, whi = wilson(3, 10, z=2.58)
    assert wlo < lo and whi > hi
    nlo, nhi = wilson(30, 100)
    assert nhi - nlo < hi - lo


def test_z95_is_the_exact_normal_quantile_and_matches_scipys_wilson():
    from scipy.stats import binomtest, norm

    assert Z95 == pytest.approx(float(norm.ppf(0.975)), abs=1e-15)
    for k, n in [(0, 1), (1, 1), (0, 7), (3, 7), (7, 7), (81, 263), (999, 1000)]:
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson(k, n, z=Z95) == pytest.approx((ci.low, ci.high), abs=1e-12)


# -- percentiles -----------------------------------------------------------------------------------

def test_percentile_interpolates_between_ranks():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([4.0, 1.0, 3.0, 2.0], 0) == 1.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 100) == 4.0
    assert percentile(range(11), 95) == pytest.approx(9.5)
    assert percentile([7.0], 95) == 7.0


def test_percentile_of_nothing_or_of_a_nan_is_nan():
    assert math.isnan(percentile([], 50))
    assert math.isnan(percentile([1.0, math.nan, 2.0], 50))


@given(values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40), q=st.floats(0, 100))
def test_percentile_agrees_with_numpy(values, q):
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)), rel=1e-12, abs=1e-9)
