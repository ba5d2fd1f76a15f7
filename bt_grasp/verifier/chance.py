"""How often a tree decides each way, and what it costs on average, from outcome rates.

The exact search's run graph (explore.py) holds every run: each state asks one question (a
leaf's outcome, or none: the next tick), each edge answers it. With a distribution for every
question (verifier/rates.py) the graph is an absorbing Markov chain whose absorbing states are
the endings; the probability of each ending and the expected costs solve (I - Q) x = b, done
here with scipy.sparse. Loops the budgets cut are already unrolled in the graph (its states
carry the counters), so the answers are exact, not truncated.

A question without rates is left open: the chain becomes a decision process, and each answer
an interval [min, max] over every way of answering the open questions (each end attained by
some way, not the same way for every quantity), computed on the graph, which is acyclic for a
proven tree. A decision's reason is the ending's text.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bt_grasp.verifier.rates import Rates, node_types

__all__ = ["Chances", "chances"]

_COST_KEYS = ("actions", "perception")


@dataclass
class Chances:
    """Each quantity as (low, high): equal when every question on the way has rates."""

    endings: dict[str, tuple[float, float]]
    decisions: dict[str, tuple[float, float]]
    expected: dict[str, tuple[float, float]]
    open_questions: list[str] = field(default_factory=list)
    method: str = "sparse"  # "sparse": solved as a Markov chain; "interval": min/max on the graph

    @property
    def exact(self) -> bool:
        return not self.open_questions

    def to_json(self) -> dict[str, Any]:
        def pair(v: tuple[float, float]) -> Any:
            return round(v[0], 12) if v[0] == v[1] else [round(v[0], 12), round(v[1], 12)]
        return {"exact": self.exact, "open_questions": self.open_questions,
                "decisions": {k: pair(v) for k, v in self.decisions.items()},
                "endings": {k: pair(v) for k, v in self.endings.items()},
                "expected": {k: pair(v) for k, v in self.expected.items()}}


def _cost_key(key: str) -> bool:
    return key in _COST_KEYS or key.startswith("primitive:")


def chances(graph: Any, root: Any, rates: Rates, spec: Any,
            classes: dict[str, dict[str, tuple[str, ...]]] | None = None) -> Chances:
    """Probabilities of every ending and expected costs over the run graph (see the module).
    `classes`: answers that stand for several outcomes (core.outcome_classes): their rates add."""
    # the graph is large and acyclic in memory: the cycle collector's passes would only re-scan
    # it while the tables below grow (most of the time otherwise), so it pauses for the call
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _chances(graph, root, rates, spec, classes)
    finally:
        if collecting:
            gc.enable()


def _chances(graph: Any, root: Any, rates: Rates, spec: Any,
             classes: dict[str, dict[str, tuple[str, ...]]] | None) -> Chances:
    types = node_types(spec)
    classes = classes or {}
    order = [root, *(st for st in graph.edges if st != root)]
    cols: dict[str, int] = {f"decision:{d}": j for j, d in enumerate(("FINALIZE", "WAIT_CLARIFY"))}
    probs: dict[Any, list[float] | None] = {}
    rewards: dict[Any, list[list[tuple[int, float]]]] = {}
    open_q: set[str] = set()
    dists: dict[tuple[str, tuple[str, ...]], Any] = {}
    # edges of one way through the model share its costs (one dict): their rewards, once
    seen: dict[tuple[int, Any], list[tuple[int, float]]] = {}
    for st in order:
        edges = graph.edges[st]
        probs[st] = _probabilities(edges, rates, types, open_q, classes, dists)
        mine = []
        for e in edges:
            key = (id(e.costs), e.target if e.end else None)
            got = seen.get(key)
            if got is None:
                got = seen[key] = _reward(e, cols)
            mine.append(got)
        rewards[st] = mine
    if not open_q:
        low = high = _solve(order, graph, probs, rewards, len(cols))
        method = "sparse"
    else:
        low, high = _bounds(_topological(graph, root), graph, probs, rewards, len(cols), root)
        method = "interval"

    def pair(name: str) -> tuple[float, float]:
        j = cols[name]
        return (float(low[j]), float(high[j]))
    endings = sorted(k for k in cols if ":" in k and not k.startswith(("decision:", "primitive:")))
    costs = sorted(k for k in cols if _cost_key(k))
    decisions = {d: pair(f"decision:{d}") for d in ("FINALIZE", "WAIT_CLARIFY")}
    return Chances({e: pair(e) for e in endings}, decisions, {c: pair(c) for c in costs},
                   sorted(open_q), method)


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


def _topological(graph: Any, root: Any) -> list[Any]:
    """States reachable from the root, each after every state with an edge into it."""
    out: list[Any] = []
    seen = {root}
    edges = graph.edges
    stack: list[tuple[Any, Any]] = [(root, iter(edges[root]))]
    while stack:
        state, it = stack[-1]
        for e in it:
            if not e.end and e.target not in seen:
                seen.add(e.target)
                stack.append((e.target, iter(edges[e.target])))
                break
        else:
            stack.pop()
            out.append(state)
    return out[::-1]


def _reward(edge: Any, cols: dict[str, int]) -> list[tuple[int, float]]:
    """What an edge adds: its costs, and 1 to its ending and decision when it ends the run."""
    out = []
    for k, v in (edge.costs or {}).items():
        if v and _cost_key(k):
            out.append((cols.setdefault(k, len(cols)), float(v)))
    if edge.end:
        out.append((cols.setdefault(edge.target, len(cols)), 1.0))
        out.append((cols["decision:" + edge.target.partition(":")[0]], 1.0))
    return out


def _solve(order: list[Any], graph: Any, probs: dict[Any, Any],
           rewards: dict[Any, list[list[tuple[int, float]]]], m: int) -> np.ndarray:
    """x = Q x + b over the transient states, by a sparse LU solve; the root's row."""
    from scipy.sparse import coo_matrix, csc_matrix, identity
    from scipy.sparse.linalg import splu

    index = {st: i for i, st in enumerate(order)}
    n = len(order)
    rows, cs, vals = [], [], []
    brows, bcols, bvals = [], [], []
    for i, st in enumerate(order):
        for edge, p, reward in zip(graph.edges[st], probs[st], rewards[st], strict=True):
            if p == 0:
                continue
            for j, v in reward:
                brows.append(i)
                bcols.append(j)
                bvals.append(p * v)
            if not edge.end:
                rows.append(i)
                cs.append(index[edge.target])
                vals.append(p)
    q = csc_matrix((vals, (rows, cs)), shape=(n, n))
    b = coo_matrix((bvals, (brows, bcols)), shape=(n, m)).toarray()
    x = splu((identity(n, format="csc") - q).tocsc()).solve(b)
    return np.asarray(x[0], dtype=float)


def _bounds(order: list[Any], graph: Any, probs: dict[Any, Any],
            rewards: dict[Any, list[list[tuple[int, float]]]], m: int,
            root: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each quantity's min and max over every way of answering the open questions: backwards
    over the acyclic graph, a rated state averaging its successors, an open one taking the
    least (most) of them, quantity by quantity."""
    low: dict[Any, np.ndarray] = {}
    high: dict[Any, np.ndarray] = {}
    zero = np.zeros(m)
    for st in reversed(order):
        los, his = [], []
        for edge, reward in zip(graph.edges[st], rewards[st], strict=True):
            lo, hi = (zero, zero) if edge.end else (low[edge.target], high[edge.target])
            if reward:
                r = np.zeros(m)
                for j, v in reward:
                    r[j] += v
                lo, hi = lo + r, hi + r
            los.append(lo)
            his.append(hi)
        p = probs[st]
        if p is None:
            low[st], high[st] = np.min(los, axis=0), np.max(his, axis=0)
        elif len(p) == 1:
            low[st], high[st] = los[0], his[0]
        else:
            w = np.asarray(p)
            low[st], high[st] = w @ np.asarray(los), w @ np.asarray(his)
    return low[root], high[root]
