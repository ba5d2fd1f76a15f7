"""The tick cap in force for a tree, and where it came from.

`budgets.max_ticks`, when the tree gives it. Otherwise the cap is the larger of DEFAULT_CAP and
the tree's own structural tick bound (summary/rules.py: every retry, repeat, budget and call's
max_ticks, composed over the structure in polynomial time), a number no run of the tree can
exceed, so a tree whose retries and budgets bound it is PROVEN with the default budgets and
never stopped by a cap it did not ask for. The floor of DEFAULT_CAP keeps room for node types
whose own `update` runs longer than they declare (the structure cannot see that). A structure
that bounds nothing (an unbounded repeat, a BT.CPP retry of -1) gets DEFAULT_CAP. The Runner,
the verifier and every tool that builds EpisodeLimits from a tree take the cap from here, so
they all use the same one.

This module stands outside the verifier so that running an episode imports no verifier code: a
tree that gives `budgets.max_ticks` (every shipped tree) never needs the structural bound, and
the compositional summary it comes from (verifier/summary/rules.py) is imported only when one is
needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bt_grasp.context import DEFAULT_MAX_TICKS, EpisodeLimits

__all__ = ["DEFAULT_CAP", "TickCap", "episode_limits", "structural_ticks", "tick_cap"]

DEFAULT_CAP = DEFAULT_MAX_TICKS  # ticks, when neither the tree nor its structure bounds them more
_CACHE = "_tick_cap"  # a TreeSpec attribute: the structural bound costs a summary of the tree


@dataclass(frozen=True)
class TickCap:
    value: int
    source: str  # "given" | "structure" | "default floor" | "default"

    def describe(self) -> str:
        return f"tick cap {self.value} ({_WHY[self.source]})"


# where a cap came from, as `verify` prints it
_WHY = {
    "given": "budgets.max_ticks",
    "structure": "budgets.max_ticks not given: the tree's structure bounds every run by this many ticks",
    "default floor": "budgets.max_ticks not given: the default, above the tree's structural bound",
    "default": f"budgets.max_ticks not given and the structure bounds no tick count: the default {DEFAULT_CAP}",
}


def tick_cap(spec: Any, registry: Any = None) -> TickCap:
    """The cap in force for `spec` (a TreeSpec); see the module docstring."""
    given = spec.budgets.max_ticks
    if given is not None:
        return TickCap(int(given), "given")
    cached = getattr(spec, _CACHE, None)
    if isinstance(cached, TickCap):
        return cached
    from bt_grasp.verifier.summary.tables import POS

    try:
        bound = structural_ticks(spec, registry)
    except Exception:  # a node type the summary rules do not know
        bound = POS
    if bound == POS:
        cap = TickCap(DEFAULT_CAP, "default")
    elif bound > DEFAULT_CAP:
        cap = TickCap(int(bound), "structure")
    else:
        cap = TickCap(DEFAULT_CAP, "default floor")
    setattr(spec, _CACHE, cap)
    return cap


def structural_ticks(spec: Any, registry: Any = None) -> float:
    """Most ticks any run of `spec` can take, from its structure alone (POS: unbounded). The
    Runner's tick count includes the tick of the Decision, hence the + 1."""
    from bt_grasp.default_registry import default_registry
    from bt_grasp.interop.nodes import register_interop_types
    from bt_grasp.verifier.summary.node_sum import TICKS
    from bt_grasp.verifier.summary.rules import Rules
    from bt_grasp.verifier.summary.tables import POS

    registry = registry or getattr(spec, "registry", None) or default_registry()
    register_interop_types(registry)
    rules = Rules(spec, registry)
    table = rules.full(rules.summarise(spec.root)).get(TICKS)
    ticks = 0.0 if table is None else max(0.0, float(table[spec.budgets.actions]))
    return POS if ticks >= POS else float(int(ticks + 1e-9)) + 1


def episode_limits(spec: Any, registry: Any = None) -> EpisodeLimits:
    """The tree's budgets as the Runner enforces them, with the cap in force."""
    b = spec.budgets
    return EpisodeLimits(b.actions, b.perception_streak, tick_cap(spec, registry).value)
