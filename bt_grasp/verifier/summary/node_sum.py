"""The summary of one subtree, and minimum-action pairs (see summary.rules for what they mean)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bt_grasp.verifier.summary.tables import INF_ACTIONS, Tables, madd

TICKS = "ticks"
LOOPS = ("retry", "repeat", "btcpp_retry")

Min = tuple[int, int]  # fewest actions (in total, in the fresh part)
ZERO: Min = (0, 0)
NEVER: Min = (INF_ACTIONS, INF_ACTIONS)


def m_add(a: Min, b: Min) -> Min:
    return madd(a[0], b[0]), madd(a[1], b[1])


def m_min(*ms: Min) -> Min:
    return min(m[0] for m in ms), min(m[1] for m in ms)


def m_sum(ms: list[Min]) -> Min:
    total = ZERO
    for m in ms:
        total = m_add(total, m)
    return total


def _mul(n: int, m: int) -> int:
    return INF_ACTIONS if m >= INF_ACTIONS else min(INF_ACTIONS, n * m)


def m_mul(n: int, m: Min) -> Min:
    return _mul(n, m[0]), _mul(n, m[1])


def m_once(m: Min) -> Min:
    """The node's actions all count in the capped part: none in the fresh part."""
    return m[0], (0 if m[0] < INF_ACTIONS else INF_ACTIONS)


@dataclass
class NodeSum:
    act: Tables
    once: Tables
    tick: dict[str, float] = field(default_factory=dict)
    min_s: Min = ZERO
    min_f: Min = ZERO
    # blackboard label key -> the labels it can hold once the node succeeded (keys it certainly wrote)
    writes: dict[str, frozenset[str]] = field(default_factory=dict)
    # fresh-part tables of activations that end SUCCESS / FAILURE with no Decision (None: derived
    # from `act` and the minimum actions)
    s_tab: Tables | None = None
    f_tab: Tables | None = None
