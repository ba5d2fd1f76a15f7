"""Cost tables indexed by the actions an activation may consume, and their max-plus algebra.

A table `t` for one cost key holds, at index `a`, an upper bound on that cost over every (possibly
unfinished) activation of a subtree that consumes at most `a` episode actions. Tables are
non-decreasing in `a`; -inf marks an impossible activation, +inf a cost the structure does not
bound (the tick cap bounds it later). Indexing by actions is what keeps loops tight: every
iteration of a retry that fails after a grasp spends an action, and the episode has few.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

NEG = -np.inf
POS = np.inf
INF_ACTIONS = 1 << 30  # "no activation ends this way" for minimum-action counts

Table = np.ndarray
Tables = dict[str, Table]


def const(value: float, size: int) -> Table:
    return np.full(size, float(value))


def from_index(start: int, value: float, size: int) -> Table:
    """0 below `start`, `value` from `start` on (e.g. a grasp: 1 from one action on)."""
    t = np.zeros(size)
    t[min(start, size):] = value
    return t


def _clean(t: Table) -> Table:
    t = np.where(np.isnan(t), NEG, t)
    return np.maximum.accumulate(t)


def conv(x: Table, y: Table) -> Table:
    """Max-plus convolution: the best split of `a` actions between two activations."""
    n = len(x)
    out = np.full(n, NEG)
    with np.errstate(invalid="ignore"):  # -inf + inf: an impossible part, cleaned to -inf
        for i in range(n):
            xi = x[i]
            if xi == NEG:
                continue
            part = xi + y[: n - i]
            out[i:] = np.maximum(out[i:], np.where(np.isnan(part), NEG, part))
    return _clean(out)


def shift(t: Table, minimum: int) -> Table:
    """Only activations consuming at least `minimum` actions (a completed iteration)."""
    out: Table = np.array(t)  # a copy
    out[: min(max(minimum, 0), len(t))] = NEG
    return out


def scale(t: Table, k: float) -> Table:
    """k × t with 0 × inf = 0 (a cost that is never incurred stays 0)."""
    if k == 0:
        return np.asarray(np.where(t == NEG, NEG, 0.0))
    return np.asarray(t * k)


def cap_index(t: Table, limit: int) -> Table:
    """t[min(a, limit)]: at most `limit` actions can happen inside."""
    out: Table = np.array(t)  # a copy
    if limit + 1 < len(t):
        out[limit + 1:] = t[limit]
    return out


def keys_of(tables: Iterable[Tables]) -> set[str]:
    out: set[str] = set()
    for t in tables:
        out.update(t)
    return out


FEASIBLE = "ticks"  # every table set has this key; -inf there means "no such activation"


def get(tables: Tables, key: str, size: int) -> Table:
    """One key's table; a key the set lacks costs 0 wherever the activation is possible."""
    t = tables.get(key)
    if t is not None:
        return t
    mask = tables.get(FEASIBLE)
    return np.zeros(size) if mask is None else np.where(mask == NEG, NEG, 0.0)


def masked(tables: Tables) -> Tables:
    """Every key impossible where the activation is impossible."""
    mask = tables.get(FEASIBLE)
    if mask is None or not np.any(mask == NEG):
        return tables
    return {k: np.where(mask == NEG, NEG, t) for k, t in tables.items()}


def conv_all(parts: list[Tables], size: int) -> Tables:
    """Every part runs once, actions shared: key-wise max-plus convolution."""
    out: Tables = {}
    for key in keys_of(parts):
        acc = get(parts[0], key, size)
        for p in parts[1:]:
            acc = conv(acc, get(p, key, size))
        out[key] = acc
    return out


def tmax(parts: list[Tables], size: int) -> Tables:
    """One of the parts runs: key-wise pointwise max."""
    out: Tables = {}
    for key in keys_of(parts):
        out[key] = np.max(np.stack([get(p, key, size) for p in parts]), axis=0)
    return out


def tmin(a: Tables, b: Tables, size: int) -> Tables:
    """Both are upper bounds: keep the smaller one (a key missing from one side is 0 there)."""
    return {key: np.minimum(get(a, key, size), get(b, key, size)) for key in keys_of([a, b])}


def add(x: Table, y: Table) -> Table:
    """Both costs are incurred; an impossible side (-inf) makes the sum impossible."""
    with np.errstate(invalid="ignore"):
        out = x + y
    return np.where(np.isnan(out), NEG, out)


def madd(x: int, y: int) -> int:
    return min(INF_ACTIONS, x + y)
