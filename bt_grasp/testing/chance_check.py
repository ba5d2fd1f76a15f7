"""Predicted probabilities (verify --rates) against the real Runner, run with the same rates.

Shared by tests/test_verify_rates.py (a few trees, a few hundred runs each) and
tools/perf/verify_rates.py (hundreds of trees, thousands of runs each): random rates for every
leaf of a tree, the tree's chances from its run graph, Monte Carlo runs of the Runner with a
RatesOracle drawing from the same rates, and every predicted probability checked against the
observed frequency's 99 % (Wilson) interval, the expected costs and ticks against the sample
mean's. With `lengths`, every leaf whose calls may span ticks gets a random mean duration (the
rates' `durations:`) and the Runner's calls last random lengths with that mean
(testing/running.py): the expected ticks are then a figure, not an interval.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.default_registry import default_registry
from bt_grasp.testing.running import RunningOracle
from bt_grasp.verifier.probability.chances import Chances
from bt_grasp.verifier.probability.rates import Rates, RatesOracle
from bt_grasp.verifier.probability.report import rate_tree
from bt_grasp.verifier.replay import Setup

__all__ = ["Check", "monte_carlo", "random_durations", "random_rates", "validate", "wilson"]

Z99 = 2.5758  # two-sided 99 %


def random_rates(spec: Any, rng: random.Random) -> Rates:
    """A random distribution for every leaf of the tree (by id) and for the semantic label of
    every evaluate_grasp: some outcomes rare, some 0, as measured rates are. How long a call
    runs (`<id>#running`) stays open: the Runner's calls then end at their first poll, and a
    tree that observes it is predicted as an interval."""
    registry = getattr(spec, "registry", None) or default_registry()
    table: dict[str, dict[str, float]] = {}

    def draw(outcomes: tuple[str, ...]) -> dict[str, float]:
        weights = [rng.choice((0.0, 0.05, 1.0, 3.0)) * rng.random() for _ in outcomes]
        if sum(weights) == 0:
            weights[rng.randrange(len(weights))] = 1.0
        total = sum(weights)
        return {o: w / total for o, w in zip(outcomes, weights, strict=True)}

    for node in spec.root.walk():
        nt = registry.get(node.type)
        if nt is None or nt.arity != "none" or nt.kind == "terminal":
            continue
        alphabet = tuple(nt.alphabet(node.params))
        if alphabet:
            table[node.id] = draw(alphabet)
        if node.type == "evaluate_grasp":
            table["evaluate_grasp#semantic"] = draw(("ok", "mismatch", "unknown"))
    return Rates(table)


def random_durations(spec: Any, rates: Rates, rng: random.Random) -> None:
    """A mean duration (whole ticks, 1 to max_ticks) for every leaf whose calls may span ticks."""
    registry = getattr(spec, "registry", None) or default_registry()
    for node in spec.root.walk():
        nt = registry.get(node.type)
        if nt is not None and nt.max_ticks > 1:
            rates.durations[node.id] = float(rng.choice((1, nt.max_ticks, rng.randint(1, nt.max_ticks))))


def _call_lengths(rates: Rates, rng: random.Random) -> Any:
    """A call's length with the leaf's mean duration d: uniform over 1..2d-1 where that fits
    under max_ticks (only the mean is claimed to matter), else d itself."""
    def draw(leaf: str, top: int) -> int:
        mean = int(rates.durations.get(leaf, 1))
        return rng.randint(1, 2 * mean - 1) if 2 * mean - 1 <= top else mean
    return draw


def monte_carlo(spec: Any, rates: Rates, runs: int, seed: int) -> tuple[Counter[str], dict[str, list[float]]]:
    """Each ending's count over `runs` runs of the Runner drawing from `rates`, and per run the
    actions, perception calls and ticks spent. Calls end at their first poll, or, with
    `rates.durations`, last random lengths of those means."""
    setup = Setup(spec, getattr(spec, "registry", None) or default_registry(), None)
    endings: Counter[str] = Counter()
    costs: dict[str, list[float]] = {"actions": [], "perception": [], "ticks": []}
    lengths = _call_lengths(rates, random.Random(seed))
    for i in range(runs):
        oracle: Any = RatesOracle(rates, spec, seed=seed * 1_000_003 + i)
        if rates.durations:
            oracle = RunningOracle(oracle, spec, lambda top: top, by_leaf=lengths)
        res = setup.replay(oracle)
        endings[f"{res.decision.value}: {res.reason}"] += 1
        costs["actions"].append(res.actions)
        costs["perception"].append(res.counters["perception_calls"])
        costs["ticks"].append(res.ticks)
    return endings, costs


def wilson(k: int, n: int, z: float = Z99) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials."""
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, mid - half), min(1.0, mid + half))


@dataclass
class Check:
    """One tree's comparison: how many predictions were checked, and those outside."""

    checked: int = 0
    point: int = 0  # of them, exact probabilities strictly between 0 and 1 (the informative ones)
    outside: list[str] = field(default_factory=list)
    exact: bool = True  # False: some question had no rates (the predictions are intervals)
    ticks_exact: bool = True  # the expected ticks a figure (every call's length known or 1 tick)


def validate(spec: Any, res: Any, rates: Rates, runs: int, seed: int) -> Check:
    """Every ending's predicted probability (or interval) against the observed frequency's 99 %
    interval, and the expected actions and perception calls against the sample mean's."""
    chance = rate_tree(res, spec, rates)
    if not isinstance(chance, Chances):
        raise ValueError(chance)
    endings, costs = monte_carlo(spec, rates, runs, seed)
    out = Check(exact=chance.exact, ticks_exact=chance.ticks[0] == chance.ticks[1])
    for text in sorted(set(chance.endings) | set(endings)):
        lo, hi = chance.endings.get(text, (0.0, 0.0))
        w_lo, w_hi = wilson(endings.get(text, 0), runs)
        out.checked += 1
        out.point += lo == hi and 0 < lo < 1
        if hi < w_lo - 1e-9 or lo > w_hi + 1e-9:
            out.outside.append(f"{text}: predicted {lo:.4f}..{hi:.4f}, observed "
                               f"{endings.get(text, 0)}/{runs} (99 % {w_lo:.4f}..{w_hi:.4f})")
    for key, values in costs.items():
        lo, hi = chance.ticks if key == "ticks" else chance.expected.get(key, (0.0, 0.0))
        mean = sum(values) / runs
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, runs - 1))
        half = Z99 * sd / math.sqrt(runs) + 1e-9
        out.checked += 1
        if hi < mean - half or lo > mean + half:
            out.outside.append(f"expected {key}: predicted {lo:.4f}..{hi:.4f}, observed mean "
                               f"{mean:.4f} +- {half:.4f}")
    return out
