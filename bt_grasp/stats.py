"""Small statistics for benchmark and evaluation reports: Wilson intervals and percentiles.

Plain Python (no numpy, no scipy), so a benchmark script can import it before it has capped the
BLAS threads (bt_grasp.threads) and before numpy is loaded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

# The two-sided 95 % normal quantile, exactly (scipy.stats.norm.ppf(0.975)); 1.96 is its usual
# rounding. The Watchdog scores use this one (they were computed with scipy's Wilson interval).
Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a success rate: `k` successes in `n` trials, `z` standard normal
    quantiles wide (1.96: the usual 95 % interval; `Z95` for the exact one).

    Unlike k/n ± z·σ it stays inside [0, 1], holds k/n, and is honest at small n, 0 % and 100 %:
    k = 0 gives exactly (0.0, upper), k = n exactly (lower, 1.0).

    n = 0 gives (0.0, 1.0): with no trials nothing is known about the rate, so the interval is the
    whole range of rates. (The point estimate k/n is undefined there; callers that report it show
    NaN for the rate, not for its interval.)
    """
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    # exact at the ends (c - h and c + h round to a hair inside them there)
    return 0.0 if k == 0 else max(0.0, c - h), 1.0 if k == n else min(1.0, c + h)


def percentile(values: Iterable[float], q: float) -> float:
    """The `q`-th percentile (0 <= q <= 100) of `values`, linearly interpolated between the two
    nearest ranks (numpy.percentile's default method); NaN for no values or when a value is NaN."""
    s = sorted(values)
    if not s or any(math.isnan(v) for v in s):
        return math.nan
    k = (len(s) - 1) * (q / 100)
    lo, hi = math.floor(k), math.ceil(k)
    return float(s[lo] + (s[hi] - s[lo]) * (k - lo))
