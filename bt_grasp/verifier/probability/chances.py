"""How often a tree decides each way, and what it costs on average, from outcome rates.

The exact search's run graph (explore.py) holds every run: each state asks one question (a
leaf's outcome, or none: the next tick), each edge answers it. With a distribution for every
question (verifier/probability/rates.py) the graph is an absorbing Markov chain whose absorbing states are
the endings; the probability of each ending and the expected costs solve (I - Q) x = b, done
here with scipy.sparse. Loops the budgets cut are already unrolled in the graph (its states
carry the counters), so the answers are exact, not truncated.

A question without rates is left open: the chain becomes a decision process, and each answer
an interval [min, max] over every way of answering the open questions (each end attained by
some way, not the same way for every quantity), computed on the graph, which is acyclic for a
proven tree. A decision's reason is the ending's text.

Expected ticks: the graph runs every unobserved call (running.py: nothing looks while it runs)
to its longest, and such a call's length changes nothing but the tick count, so each edge's ticks
are its ticks with those calls at 1 tick plus, per call, its length - 1. With a call's mean
length (the rates' `durations:`) that is exact by linearity; without, the call's length is open:
between 1 tick and its longest (an interval). Where the run may idle (a watched call, a running
timeout: ticks the graph skips), the chain's ticks are only a lower end.
"""

from __future__ import annotations

import gc
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bt_grasp.errors import UserError
from bt_grasp.verifier.probability.rates import Rates, node_types
from bt_grasp.verifier.symbolic.graph import RunEdges

__all__ = ["Chances", "TimeMatters", "chances"]

_COST_KEYS = ("actions", "perception")
# How long a call runs and whether a deadline passes: the run graph holds no time (ticks in
# which only time passes are skipped), so these questions are never given rates; left open.
_TIMING = ("#running", "#deadline")
# the expected ticks' two ends (not costs, not endings: no ':' in the name)
_TICKS_LOW, _TICKS_HIGH = "#ticks-low", "#ticks-high"


class TimeMatters(ValueError):
    """The tree asks a question again in ticks where only time passes (a guard heard while a
    call runs): how often depends on how long calls run, which the run graph leaves out."""


@dataclass
class Chances:
    """Each quantity as (low, high): equal when every question on the way has rates."""

    endings: dict[str, tuple[float, float]]
    decisions: dict[str, tuple[float, float]]
    expected: dict[str, tuple[float, float]]
    open_questions: list[str] = field(default_factory=list)
    method: str = "sparse"  # "sparse": solved as a Markov chain; "interval": min/max on the graph
    ticks: tuple[float, float] = (0.0, 0.0)  # expected ticks to the decision
    lengths_open: list[str] = field(default_factory=list)  # leaves whose calls span ticks, no duration
    # the run may idle where the graph skips ticks (a watched call, a timeout): the ticks' upper
    # end is then the worst case over every run (chance_report.rate_tree), not the chain's
    ticks_idle: bool = False

    @property
    def exact(self) -> bool:
        return not self.open_questions

    def to_json(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isinf(x) else round(x, 12)  # no bound known: null

        def pair(v: tuple[float, float]) -> Any:
            return num(v[0]) if v[0] == v[1] else [num(v[0]), num(v[1])]
        return {"exact": self.exact, "open_questions": self.open_questions,
                "decisions": {k: pair(v) for k, v in self.decisions.items()},
                "endings": {k: pair(v) for k, v in self.endings.items()},
                "expected": {**{k: pair(v) for k, v in self.expected.items()}, "ticks": pair(self.ticks)},
                "lengths_open": self.lengths_open, "ticks_upper_is_worst_case": self.ticks_idle}


def _cost_key(key: str) -> bool:
    return key in _COST_KEYS or key.startswith("primitive:")


def chances(graph: Any, root: Any, rates: Rates, spec: Any,
            classes: dict[str, dict[str, tuple[str, ...]]] | None = None, solve: bool = True) -> Chances:
    """Probabilities of every ending and expected costs over the run graph (see the module).
    `classes`: answers that stand for several outcomes (core.outcome_classes): their rates add.
    `solve` False: the interval walk even when every question has rates (a cross-check)."""
    # the graph is large and acyclic in memory: the cycle collector's passes would only re-scan
    # it while the tables below grow (most of the time otherwise), so it pauses for the call
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _chances(graph, root, rates, spec, classes, solve)
    finally:
        if collecting:
            gc.enable()


def _chances(graph: Any, root: Any, rates: Rates, spec: Any,
             classes: dict[str, dict[str, tuple[str, ...]]] | None, solve: bool) -> Chances:
    types = node_types(spec)
    classes = classes or {}
    for steps, *_ in getattr(graph, "idle", {}).values():
        asked = sorted({q for q, _ in steps if not q.endswith(_TIMING)})
        if asked:
            raise TimeMatters(f"no probabilities: the tree asks {', '.join(asked)} again in every tick "
                              "a call runs, so they depend on how long calls run, which --rates "
                              "does not model")
    order = [root, *(st for st in graph.edges if st != root)]
    cols: dict[str, int] = {f"decision:{d}": j for j, d in enumerate(("FINALIZE", "WAIT_CLARIFY"))}
    cols[_TICKS_LOW], cols[_TICKS_HIGH] = len(cols), len(cols) + 1
    lengths = _Lengths(rates, types)
    probs: dict[Any, list[float] | None] = {}
    rewards: dict[Any, list[list[tuple[int, float]]]] = {}
    targets: dict[Any, list[Any]] = {}
    open_q: set[str] = set()
    dists: dict[tuple[str, tuple[str, ...]], Any] = {}
    # edges of one way through the model share its costs (one dict): their rewards, once
    seen: dict[tuple[int, Any, int, Any], list[tuple[int, float]]] = {}
    # the states of a point that take the same ways share their probabilities and rewards
    shared: dict[int, tuple[list[float] | None, list[list[tuple[int, float]]]]] = {}
    for st in order:
        group, targets[st] = _ways(graph.edges, st)
        got_group = shared.get(id(group))
        if got_group is None:
            edges = _way_edges(graph.edges, group)
            chance = _probabilities(edges, rates, types, open_q, classes, dists)
            mine = []
            for e in edges:
                key = (id(e.costs), e.target if e.end else None, e.ticks, e.bumps)
                got = seen.get(key)
                if got is None:
                    got = seen[key] = _reward(e, cols, lengths)
                mine.append(got)
            got_group = shared[id(group)] = (chance, mine)
        probs[st], rewards[st] = got_group
    if not open_q and solve:
        low = high = _solve(order, targets, probs, rewards, len(cols))
        method = "sparse"
    else:
        finished = getattr(graph, "order", None)  # the search's: each state after those it leads to
        topo = finished[::-1] if finished and len(finished) == len(targets) else _topological(targets, root)
        low, high = _bounds(topo, targets, probs, rewards, len(cols), root)
        method = "interval"

    def pair(name: str) -> tuple[float, float]:
        j = cols[name]
        return (float(low[j]), float(high[j]))
    endings = sorted(k for k in cols if ":" in k and not k.startswith(("decision:", "primitive:")))
    costs = sorted(k for k in cols if _cost_key(k))
    decisions = {d: pair(f"decision:{d}") for d in ("FINALIZE", "WAIT_CLARIFY")}
    return Chances({e: pair(e) for e in endings}, decisions, {c: pair(c) for c in costs},
                   sorted(open_q), method, (float(low[cols[_TICKS_LOW]]), float(high[cols[_TICKS_HIGH]])),
                   sorted(lengths.open), bool(getattr(graph, "idle", {})))


class _Lengths:
    """The ticks a call of an unobserved leaf adds beyond its first: (least, most) given its
    duration (mean ticks per call) or, without one, 0 and its longest call's."""

    def __init__(self, rates: Rates, types: dict[str, str]) -> None:
        self.rates, self.types = rates, types
        self.open: set[str] = set()
        self.known: dict[tuple[str, int], tuple[float, float]] = {}

    def extra(self, leaf: str, longest: int) -> tuple[float, float]:
        key = (leaf, longest)
        if key not in self.known:
            given = self.rates.duration(leaf, self.types)
            if given is None:
                self.open.add(leaf)
                self.known[key] = (0.0, float(longest))
            else:
                ticks, pos = given
                if ticks > longest + 1:
                    raise UserError(f"duration of '{leaf}' is {ticks:g} ticks, more than one call "
                                    f"may run ({longest + 1}, its type's max_ticks)", pos.file,
                                    pos.line, pos.col)
                self.known[key] = (ticks - 1, ticks - 1)
        return self.known[key]


def _probabilities(edges: list[Any], rates: Rates, types: dict[str, str], open_q: set[str],
                   classes: dict[str, dict[str, tuple[str, ...]]],
                   dists: dict[tuple[str, tuple[str, ...]], Any]) -> list[float] | None:
    """Each edge's probability, or None when the state's question has no rates."""
    if not edges:
        raise ValueError("a state of the run graph with no way on")
    if edges[0].step is None:
        if len(edges) != 1:
            raise ValueError("a tick state with more than one way on")
        return [1.0]
    question = edges[0].step[0]
    if question.endswith(_TIMING):
        if len(edges) == 1:  # the only way on (going on is an idle tick, skipped)
            return [1.0]
        open_q.add(question)
        return None
    answers = tuple(e.step[1] for e in edges)
    key = (question, answers)
    if key not in dists:
        same = classes.get(question, {})
        stands = [same.get(a, (a,)) for a in answers]
        dist = rates.dist(question, tuple(o for group in stands for o in group), types)
        if dist is None:
            dists[key] = None
        else:
            out = [sum(dist[o] for o in group) for group in stands]
            if abs(sum(out) - 1) > 1e-6:
                raise ValueError(f"the rates of '{question}' do not cover the answers of the run graph")
            dists[key] = out
    if dists[key] is None:
        open_q.add(question)
    return dists[key]  # type: ignore[no-any-return]


def _ways(edges: Any, state: Any) -> tuple[Any, list[Any]]:
    """A state's ways: what its probabilities and rewards depend on (states of a point that
    take the same ways share it: RunEdges), and the next state of each (None: an ending)."""
    if isinstance(edges, RunEdges):
        return edges.ways[state], edges.targets(state)
    mine = edges[state]
    return mine, [None if e.end else e.target for e in mine]


def _way_edges(edges: Any, group: Any) -> list[Any]:
    """An edge per way of `group` (_ways) as far as its probabilities and rewards read it:
    its question and answer, costs, ticks and ending."""
    return [row[5] for row in group] if isinstance(edges, RunEdges) else group


def _topological(targets: dict[Any, list[Any]], root: Any) -> list[Any]:
    """States reachable from the root, each after every state with an edge into it."""
    out: list[Any] = []
    seen = {root}
    stack: list[tuple[Any, Any]] = [(root, iter(targets[root]))]
    while stack:
        state, it = stack[-1]
        for t in it:
            if t is not None and t not in seen:
                seen.add(t)
                stack.append((t, iter(targets[t])))
                break
        else:
            stack.pop()
            out.append(state)
    return out[::-1]


def _reward(edge: Any, cols: dict[str, int], lengths: _Lengths) -> list[tuple[int, float]]:
    """What an edge adds: its costs, its ticks (least, most: see the module), and 1 to its
    ending and decision when it ends the run."""
    low = high = float(edge.ticks)
    for leaf, longest in edge.bumps:
        least, most = lengths.extra(leaf, longest)
        low += least - longest
        high += most - longest
    out = [(cols[_TICKS_LOW], low), (cols[_TICKS_HIGH], high)] if high else []
    for k, v in (edge.costs or {}).items():
        if v and _cost_key(k):
            out.append((cols.setdefault(k, len(cols)), float(v)))
    if edge.end:
        out.append((cols.setdefault(edge.target, len(cols)), 1.0))
        out.append((cols["decision:" + edge.target.partition(":")[0]], 1.0))
    return out


def _solve(order: list[Any], targets: dict[Any, list[Any]], probs: dict[Any, Any],
           rewards: dict[Any, list[list[tuple[int, float]]]], m: int) -> np.ndarray:
    """x = Q x + b over the transient states, by a sparse LU solve; the root's row."""
    from scipy.sparse import csc_matrix, identity
    from scipy.sparse.linalg import splu

    n = len(order)
    src, tgt, prob, rew, table = _edge_arrays(order, targets, probs, rewards, m)
    taken = prob != 0
    stays = taken & (tgt < n)
    q = csc_matrix((prob[stays], (src[stays], tgt[stays])), shape=(n, n))
    # b: each state's expected reward of its next step, the edges added in order (as the
    # entries of a coordinate matrix would be)
    b = np.zeros((n, m))
    np.add.at(b, src[taken], prob[taken, None] * table[rew[taken]])
    x = splu((identity(n, format="csc") - q).tocsc()).solve(b)
    return np.asarray(x[0], dtype=float)


def _edge_arrays(order: list[Any], targets: dict[Any, list[Any]], probs: dict[Any, Any],
                 rewards: dict[Any, list[list[tuple[int, float]]]], m: int,
                 level: list[int] | None = None) -> tuple[np.ndarray, ...]:
    """Every edge as arrays, state by state in `order` and each state's edges in their order:
    its state's number, the next state's (len(order): an ending), its probability (nan: an
    open question), and its rewards as a row of a table of the distinct ones (states share
    their lists), with the table. `level`, when given, gets each state's longest way on to an
    ending (`order` is then topological)."""
    n = len(order)
    index = {st: i for i, st in enumerate(order)}
    src: list[int] = []
    tgt: list[int] = []
    prob: list[float] = []
    row_of: dict[int, int] = {}
    table: list[list[tuple[int, float]]] = []
    rows_of: dict[int, list[int]] = {}
    rew: list[int] = []
    for st in (order if level is None else reversed(order)):
        i = index[st]
        chance = probs[st]
        tix = [n if t is None else index[t] for t in targets[st]]
        if level is not None:
            deepest = 0
            for t in tix:
                if t < n and level[t] >= deepest:
                    deepest = level[t] + 1
            level[i] = deepest
        adds = rewards[st]
        ids = rows_of.get(id(adds))
        if ids is None:
            ids = []
            for one in adds:
                row = row_of.get(id(one))
                if row is None:
                    row = row_of[id(one)] = len(table)
                    table.append(one)
                ids.append(row)
            rows_of[id(adds)] = ids
        rew.extend(ids)
        src.extend([i] * len(tix))
        tgt.extend(tix)
        prob.extend([math.nan] * len(tix) if chance is None else chance)
    per_row = np.zeros((len(table), m))
    for row, one in enumerate(table):
        for j, v in one:
            per_row[row, j] += v
    return (np.asarray(src, dtype=np.int64), np.asarray(tgt, dtype=np.int64),
            np.asarray(prob, dtype=float), np.asarray(rew, dtype=np.int64), per_row)


def _bounds(order: list[Any], targets: dict[Any, list[Any]], probs: dict[Any, Any],
            rewards: dict[Any, list[list[tuple[int, float]]]], m: int,
            root: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each quantity's min and max over every way of answering the open questions: backwards
    over the acyclic graph, a rated state averaging its successors, an open one taking the
    least (most) of them, quantity by quantity. States are taken a level at a time (a level:
    the longest way on to an ending), each level in a few array operations."""
    n = len(order)
    level = [0] * n
    src_a, tgt_a, prob_a, rew, table = _edge_arrays(order, targets, probs, rewards, m, level)
    costs = table[rew]
    lv = np.asarray(level)[src_a]
    perm = np.argsort(lv * (n + 1) + src_a, kind="stable")
    src_a, tgt_a, prob_a, costs, lv = src_a[perm], tgt_a[perm], prob_a[perm], costs[perm], lv[perm]
    low = np.zeros((n + 1, m))  # row n: after an ending, nothing more
    high = np.zeros((n + 1, m))
    cuts = np.searchsorted(lv, np.arange(lv[-1] + 2)) if len(lv) else np.zeros(1, dtype=np.int64)
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        if a == b:
            continue
        e_src = src_a[a:b]
        starts = np.flatnonzero(np.r_[True, e_src[1:] != e_src[:-1]])
        states = e_src[starts]
        r = costs[a:b]
        lo, hi = r + low[tgt_a[a:b]], r + high[tgt_a[a:b]]
        p = prob_a[a:b]
        w = np.nan_to_num(p)[:, None]
        opened = np.isnan(p[starts])[:, None]
        low[states] = np.where(opened, np.minimum.reduceat(lo, starts), np.add.reduceat(w * lo, starts))
        high[states] = np.where(opened, np.maximum.reduceat(hi, starts), np.add.reduceat(w * hi, starts))
    at_root = order.index(root)
    return low[at_root], high[at_root]
