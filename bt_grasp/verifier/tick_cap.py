"""The tick cap in force for a tree, and where it came from.

`budgets.max_ticks`, when the tree gives it. Otherwise the cap is the tree's own structural tick
bound (bt_grasp/verifier/bounds.py: every retry, repeat, budget and call's max_ticks, composed
over the structure in polynomial time), a number no run of the tree can exceed, so a tree whose
retries and budgets bound it is PROVEN with the default budgets and never stopped by the cap it
did not ask for. A structure that bounds nothing (an unbounded repeat, a BT.CPP retry of -1)
gets DEFAULT_CAP. The Runner, the verifier and every tool that builds EpisodeLimits from a tree
take the cap from here, so they all use the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bt_grasp.context import EpisodeLimits

__all__ = ["DEFAULT_CAP", "TickCap", "episode_limits", "tick_cap"]

DEFAULT_CAP = 1000  # ticks, when neither the tree nor its structure bounds them
_CACHE = "_tick_cap"  # a TreeSpec attribute: the structural bound costs a summary of the tree


@dataclass(frozen=True)
class TickCap:
    value: int
    source: str  # "given" | "structure" | "default"

    def describe(self) -> str:
        if self.source == "given":
            return f"tick cap {self.value} (budgets.max_ticks)"
        if self.source == "structure":
            return (f"tick cap {self.value} (budgets.max_ticks not given: the tree's structure "
                    "bounds every run by this many ticks)")
        return (f"tick cap {self.value} (budgets.max_ticks not given and the structure bounds no "
                f"tick count: the default {DEFAULT_CAP})")


def tick_cap(spec: Any, registry: Any = None) -> TickCap:
    """The cap in force for `spec` (a TreeSpec); see the module docstring."""
    given = spec.budgets.max_ticks
    if given is not None:
        return TickCap(int(given), "given")
    cached = getattr(spec, _CACHE, None)
    if cached is not None:
        return cached
    from bt_grasp.verifier.bounds import summary_bounds

    try:
        bound = summary_bounds(spec, registry).bounds.get("ticks")
    except Exception:  # a node type the summary rules do not know
        bound = None
    cap = TickCap(int(bound), "structure") if bound else TickCap(DEFAULT_CAP, "default")
    setattr(spec, _CACHE, cap)
    return cap


def episode_limits(spec: Any, registry: Any = None) -> EpisodeLimits:
    """The tree's budgets as the Runner enforces them, with the cap in force."""
    b = spec.budgets
    return EpisodeLimits(b.actions, b.perception_streak, tick_cap(spec, registry).value)
