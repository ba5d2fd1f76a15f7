"""An outcome oracle whose leaf calls span ticks (RunContext.explore_running), and random call
lengths for it: the differential tests and tools/perf/verify_soundness.py run trees with it."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from bt_grasp.default_registry import default_registry


class RunningOracle:
    """Wraps an outcome oracle and answers `<id>#running` (RunContext.explore_running): each call
    of a leaf runs for a number of ticks drawn at its first tick from `lengths(max_ticks)` (1:
    it ends in the tick that starts it; max_ticks: its longest). The oracle does not see halts:
    a call halted early leaves the rest of its length to the leaf's next call, which is still a
    length within max_ticks. Other questions go to `inner`."""

    def __init__(self, inner: Any, spec: Any, lengths: Callable[[int], int],
                 by_leaf: Callable[[str, int], int] | None = None) -> None:
        registry = getattr(spec, "registry", None) or default_registry()
        self.inner, self.lengths = inner, lengths
        self.by_leaf = by_leaf  # when given: a call's length from its leaf id and max_ticks
        self.max_ticks = {n.id: registry.require(n.type).max_ticks for n in spec.root.walk()
                          if registry.get(n.type) is not None}
        self.asked: dict[str, int] = {}   # leaf id -> "running" answers in its current call
        self.length: dict[str, int] = {}  # leaf id -> ticks its current call runs
        self.choices: list[tuple[str, str]] = []

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        if not node_id.endswith("#running"):
            out: str = self.inner.choose(node_id, alphabet)
            self.choices.append((node_id, out))
            return out
        leaf = node_id[:-len("#running")]
        top = self.max_ticks.get(leaf, 1)
        asked = self.asked.get(leaf, 0)
        if asked == 0 or asked >= top - 1:  # a new call (the last one ran to its maximum)
            drawn = self.by_leaf(leaf, top) if self.by_leaf is not None else self.lengths(top)
            asked, self.length[leaf] = 0, max(1, min(top, drawn))
        out = "running" if asked + 1 < self.length[leaf] else "ends"
        self.asked[leaf] = asked + 1 if out == "running" else 0
        self.choices.append((node_id, out))
        return out


def random_lengths(seed: int) -> Callable[[int], int]:
    """Call lengths leaning to the extremes (1 tick, the maximum) with some in between."""
    rng = random.Random(seed)

    def draw(top: int) -> int:
        r = rng.random()
        return 1 if r < 0.35 else top if r < 0.7 else rng.randint(1, top)

    return draw


def longest(top: int) -> int:
    """Every call at its max_ticks: the adversarial lengths that reach the tick bound."""
    return top


def mixed_lengths(seed: int) -> Callable[[str, int], int]:
    """Each leaf fixed for the whole run at its max_ticks or at 1 tick (drawn per leaf), so that
    one branch keeps running its longest while a sibling is cut short."""
    rng = random.Random(seed)
    picked: dict[str, bool] = {}

    def draw(leaf: str, top: int) -> int:
        if leaf not in picked:
            picked[leaf] = rng.random() < 0.5
        return top if picked[leaf] else 1

    return draw


def adversarial_oracle(inner: Any, spec: Any, seed: int) -> RunningOracle:
    """A RunningOracle whose calls all run their longest (even seeds) or, leaf by leaf, their
    longest or 1 tick (odd seeds): random lengths almost never make every call run to its end."""
    if seed % 2 == 0:
        return RunningOracle(inner, spec, longest)
    return RunningOracle(inner, spec, longest, by_leaf=mixed_lengths(seed))
