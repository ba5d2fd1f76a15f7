"""The tick bound: the most ticks any run takes, idle ticks included, and a run that takes them.

The symbolic search (explore.py) explores runs in which no tick passes idle and leaves the graph
of the states it met (graph.py). Every real run is such a run with idle ticks put in at some
states, where the search saw the run could idle; each idle tick costs one tick left to every
running call and timeout (their *resources*, which stay at least 1). So the most ticks from a
state is a function of the resources it holds, F(r), and

    F(state, r) = max over its edges e of  ticks(e) + F(next, r mapped by e)
                  (where the edge's question allows: "running" needs 2 ticks left, "not yet" 1),
    at a state that can idle: max over 0 <= δ <= D(r) of  δ + (the same with r - δ).

Each F is a maximum of *terms* min(c0, min_j (c_j + r_j)) valid where r_j >= L_j: a resource an
edge maps is the state's minus what the edge spent (r_j - d) or a new call's constant; taking δ
idle ticks turns a term's constant into c0 + D(r), which is again a minimum of c + r_j. The
initial state holds no resources: F is a number, the bound. The witness is read forward: at each
state the edge (and the idle ticks) whose term attains F at the run's actual resources.

The same recursion bounds a cost an idle tick may add (`cost`: the calls of a check repeated
beside a task, one per idle tick at most): an edge adds what it costs instead of its ticks, an
idle tick 1 where it costs one, and where it costs none idling only takes time left away
(every term grows with the resources), so F is the same as without idle ticks there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bt_grasp.verifier.symbolic.graph import Edge, Graph

__all__ = ["MAX_TERMS", "TickBound", "Unidle", "tick_bound"]

_INF = float("inf")
# a term: (constant or None, ((resource, c), ...), ((resource, least ticks left), ...))
Term = tuple[Any, tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]
MAX_TERMS = 256
Weight = Callable[[Edge], int]  # what an edge adds to the bound: its ticks, or a cost
_LEAST = {"running": 2, "deadline": 1}  # ticks left the question's "go on" answer needs
_GOES_ON = {"running": "running", "deadline": "not yet"}


class Unidle(Exception):
    """An idle tick left a running call or timeout's ticks untouched, or a state's tick bound
    needs more than MAX_TERMS terms: no symbolic tick bound (the reference search gives it)."""


@dataclass
class TickBound:
    ticks: int
    steps: list[tuple[str, str]]  # a run taking them, as the oracle's answers in order


def _value(term: Term, r: dict[int, int]) -> float:
    c0, coefs, guards = term
    for j, least in guards:
        if r[j] < least:
            return -_INF
    v = _INF if c0 is None else c0
    for j, c in coefs:
        v = min(v, c + r[j])
    return v


def _guard(edge: Edge) -> tuple[int, int] | None:
    """What the edge's answer needs of this state's resources (below it, the runtime does not
    ask: it ends the call, or the deadline passes)."""
    if edge.ask is None or edge.step is None:
        return None
    j, what = edge.ask
    return (j, _LEAST[what]) if edge.step[1] == _GOES_ON[what] else None


def _forced(edge: Edge, r: dict[int, int]) -> bool:
    """The runtime does not ask this question at these resources (the answer is forced)."""
    if edge.ask is None:
        return False
    j, what = edge.ask
    return r[j] < _LEAST[what]


def _through(terms: list[Term], edge: Edge, delta: int) -> list[Term]:
    """The next state's terms in this state's resources, plus the edge's weight (`delta`: its
    ticks, or its cost) and guard."""
    mapping, guard = edge.resources, _guard(edge)
    out = []
    for c0, coefs, guards in terms:
        const = c0
        new_coefs: dict[int, int] = {}
        new_guards: dict[int, int] = {}
        valid = True
        for j, least in guards:
            same, d = mapping[j]
            if same:
                new_guards[j] = max(new_guards.get(j, 0), least + d)
            elif d < least:
                valid = False
                break
        if not valid:
            continue
        for j, c in coefs:
            same, d = mapping[j]
            if same:
                new_coefs[j] = min(new_coefs.get(j, c - d), c - d)
            else:
                const = c + d if const is None else min(const, c + d)
        if guard is not None:
            j, least = guard
            new_guards[j] = max(new_guards.get(j, 0), least)
        out.append((None if const is None else const + delta,
                    tuple(sorted((j, c + delta) for j, c in new_coefs.items())),
                    tuple(sorted(new_guards.items()))))
    return out


def _idled(term: Term, lost: dict[int, int], held: frozenset[int]) -> Term:
    """The term after the most idle ticks its resources allow (see the module docstring)."""
    if set(held) - set(lost):
        raise Unidle(f"resources {sorted(set(held) - set(lost))} untouched by an idle tick")
    c0, coefs, guards = term
    if c0 is None:
        return term
    extra = dict(coefs)
    limits = {j: 1 for j in lost}
    for j, least in guards:
        if j in lost:
            limits[j] = max(limits[j], least)
    for j, k in limits.items():
        c = c0 - k
        extra[j] = min(extra.get(j, c), c)
    return (None, tuple(sorted(extra.items())), guards)


def _prune(terms: list[Term]) -> list[Term]:
    """Drop repeated terms and those another one bounds from above everywhere they hold."""
    keep: list[Term] = []
    for t in dict.fromkeys(terms):
        if any(_below(t, k) for k in keep):
            continue
        keep = [k for k in keep if not _below(k, t)]
        keep.append(t)
    return keep


def _below(a: Term, b: Term) -> bool:
    """a <= b wherever a holds (a sufficient check: b holds there, and each part of b's minimum
    is at least some part of a's). A timeout may have 0 entries left inside its last tick."""
    a0, acoefs, aguards = a
    b0, bcoefs, bguards = b
    ag = dict(aguards)
    if any(ag.get(j, 0) < least for j, least in bguards):
        return False
    ac = dict(acoefs)
    if b0 is not None and (a0 is None or a0 > b0):
        return False
    for j, c in bcoefs:
        if not ((j in ac and ac[j] <= c) or (a0 is not None and a0 <= c + ag.get(j, 0))):
            return False
    return True


_END: list[Term] = [(0, (), ())]


def _weights(graph: Graph, cost: str | None) -> tuple[dict[Any, Any], Weight]:
    """The idle states that add to the bound (each with its idle tick), and an edge's weight:
    its ticks, or what it costs of `cost`."""
    if cost is None:
        return graph.idle, lambda e: e.ticks
    idle = {key: idle for key, idle in graph.idle.items() if idle[2].get(cost, 0)}
    if any(idle[2][cost] != 1 for idle in idle.values()):
        raise Unidle(f"an idle tick costs more than one {cost}")
    return idle, lambda e: (e.costs or {}).get(cost, 0)


def tick_bound(graph: Graph, root: Any, cost: str | None = None) -> TickBound:
    """The most ticks of any run from the state `root`, with a run that takes them; with `cost`,
    the most of that cost instead (see the module docstring)."""
    if cost is None and graph.worst is not None:
        return _timeless(graph, root)
    edges = graph.edges
    idle, weight = _weights(graph, cost)
    F: dict[Any, list[Term]] = {}
    order: list[Any] = graph.order  # each state after those it leads to, when the search kept it
    seen: set[Any] = set()
    todo: list[tuple[Any, bool]] = [] if order else [(root, False)]
    while todo:
        key, done = todo.pop()
        if done:
            order.append(key)
            continue
        if key in seen:
            continue
        seen.add(key)
        todo.append((key, True))
        for e in edges.get(key, ()):
            if not e.end and e.target not in seen:
                todo.append((e.target, False))
    for key in order:
        terms: list[Term] = []
        most = None  # the largest constant term through an edge that maps no time left
        for e in edges.get(key, ()):
            after = _END if e.end else F[e.target]
            if not e.resources and len(after) == 1 and not after[0][1] and not after[0][2] \
                    and after[0][0] is not None and _guard(e) is None:
                # most edges of most trees: no call or timeout holds time across them, so the
                # bound through them is a number (what _through computes, without its tuples)
                value = after[0][0] + weight(e)
                most = value if most is None or value > most else most
            else:
                terms.extend(_through(after, e, weight(e)))
        if most is not None:
            terms.append((most, (), ()))
        terms = _prune(terms) if len(terms) > 1 else terms
        if len(terms) > MAX_TERMS:
            raise Unidle(f"the tick bound at one state needs {len(terms)} terms")
        if key in idle:
            terms = _prune([_idled(t, idle[key][1], graph.res.get(key, frozenset())) for t in terms])
        F[key] = terms
    best = max((_value(t, {}) for t in F.get(root, [])), default=0)
    return TickBound(int(best), _witness(graph, root, F, idle, weight))


def _timeless(graph: Graph, root: Any) -> TickBound:
    """The bound of a graph that holds no time, which the search folded as a cost (graph.py):
    every term is a constant, so F is that number and the witness (as _witness reads it) takes
    at each state the first edge attaining it."""
    worst, slot = graph.worst, graph.ticks_slot
    assert worst is not None
    steps: list[tuple[str, str]] = []
    key = root
    while True:
        best, pick = -_INF, None
        for e in graph.edges.get(key, ()):
            v = e.ticks + (0 if e.end else worst[e.target][slot])
            if v > best:
                best, pick = v, e
        if pick is None:
            break
        if pick.step is not None:  # no question is about time left here: none is forced
            steps.append(pick.step)
        for leaf, extra in pick.bumps:
            steps.extend([(f"{leaf}#running", "running")] * extra)
        if pick.end:
            break
        key = pick.target
    return TickBound(int(worst[root][slot]), steps)


def _edge_value(e: Edge, r: dict[int, int], F: dict[Any, list[Term]], weight: Weight) -> float:
    guard = _guard(e)
    if guard is not None and r[guard[0]] < guard[1]:
        return -_INF
    nr = {j: (r[j] - d if same else d) for j, (same, d) in e.resources.items()}
    rest = 0.0 if e.end else max((_value(t, nr) for t in F[e.target]), default=-_INF)
    return weight(e) + rest


def _best(graph: Graph, key: Any, r: dict[int, int], F: dict[Any, list[Term]],
          weight: Weight) -> tuple[float, Edge | None]:
    best, pick = -_INF, None
    for e in graph.edges.get(key, ()):
        v = _edge_value(e, r, F, weight)
        if v > best:
            best, pick = v, e
    return best, pick


def _witness(graph: Graph, root: Any, F: dict[Any, list[Term]], idle: dict[Any, Any],
             weight: Weight) -> list[tuple[str, str]]:
    """A run taking the bound: from the root, the edge (and idle ticks) attaining F."""
    steps: list[tuple[str, str]] = []
    r: dict[Any, Any]
    key, r = root, {}
    while True:
        best = max((_value(t, r) for t in F[key]), default=-_INF)
        if key in idle:
            idle_steps, lost = idle[key][:2]
            room = min((r[j] - 1 for j in lost), default=0)
            for delta in range(max(room, 0), -1, -1):  # the most idle ticks that keep the bound
                shifted = {j: v - lost.get(j, 0) * delta for j, v in r.items()}
                if delta + _best(graph, key, shifted, F, weight)[0] >= best:
                    steps.extend(list(idle_steps) * delta)
                    r, best = shifted, best - delta
                    break
        _, e = _best(graph, key, r, F, weight)
        if e is None:
            return steps
        if e.step is not None and not _forced(e, r):
            steps.append(e.step)
        for leaf, extra in e.bumps:  # an unobserved call running to its maximum
            steps.extend([(f"{leaf}#running", "running")] * extra)
        r = {j: (r[j] - d if same else d) for j, (same, d) in e.resources.items()}
        if e.end:
            return steps
        key = e.target
