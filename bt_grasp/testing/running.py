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

    def __init__(self, inner: Any, spec: Any, lengths: Callable[[int], int]) -> None:
        registry = getattr(spec, "registry", None) or default_registry()
        self.inner, self.lengths = inner, lengths
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
            asked, self.length[leaf] = 0, max(1, min(top, self.lengths(top)))
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
