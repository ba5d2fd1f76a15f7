"""The graph of a tree's runs the symbolic search builds (explore.py) and the tick bound reads
(symbolic/tick_bound.py): states, what each holds of time left, and the edges between them."""

from __future__ import annotations

from collections import abc
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

Step = tuple[str, str]  # (choice id, outcome)
# a resource at the next state: (True, ticks the edge spent of the same call or timeout) or
# (False, the ticks left of one that started on the way)
Mapping = dict[int, tuple[bool, int]]


class Edge(NamedTuple):
    """One way from a state to the next one (or to an ending). A named tuple: the search makes
    one per edge of every state, and a tuple is the cheapest immutable record to build."""

    step: Step | None            # the Runner's answer the edge takes (None: the tick begins)
    target: Any                  # the next state, or the ending's text when `end`
    end: bool
    resources: Mapping           # the next state's resources, from this state's
    ticks: int                   # ticks the edge takes (an unobserved call run to its maximum: many)
    ask: tuple[int, str] | None  # the resource the step's question is about: "running" (a call
                                 # going on needs 2 ticks left) or "deadline" (not yet: 1)
    bumps: tuple[tuple[str, int], ...] = ()  # unobserved calls run to their maximum on the way
    costs: dict[str, int] | None = None  # what the edge adds to the run's costs (verifier/probability/rates.py)


_make_edge = tuple.__new__  # a NamedTuple built from a tuple, without its keyword handling


class RunEdges(abc.Mapping[Any, list[Edge]]):
    """The run graph's edges, each state's list built when it is first read. The search
    (explore_runs.py) keeps per state only the ways it takes (shared by every state of its point
    answering the counter comparisons alike) and its counters: an Edge per way and state would
    cost more than the rest of the search, and the verdict and bounds read only a run's edges
    (`verify --rates` reads them all). A state is a number (explore_runs._Code)."""

    __slots__ = ("built", "ways")

    def __init__(self) -> None:
        # state (a number) -> its ways: (needs, kind, target, (kept, added), cost vector, edge,
        # way) rows; the next state's number is `state & kept + added`
        self.ways: dict[Any, list[tuple[Any, ...]]] = {}
        self.built: dict[Any, list[Edge]] = {}

    def __getitem__(self, state: Any) -> list[Edge]:
        got = self.built.get(state)
        if got is None:
            rows = self.ways[state]
            got = []
            for row in rows:
                edge = row[5]
                if row[1] == "end":
                    got.append(edge)
                    continue
                kept, added = row[3]
                target = (state & kept) + added
                got.append(_make_edge(Edge, (edge.step, target, False, edge.resources, edge.ticks,
                                             edge.ask, edge.bumps, edge.costs)))
            self.built[state] = got
        return got

    def targets(self, state: Any) -> list[Any]:
        """The next state of each of the state's ways (None: an ending), without its edges."""
        return [None if row[1] == "end" else (state & row[3][0]) + row[3][1] for row in self.ways[state]]

    def __contains__(self, state: object) -> bool:
        return state in self.ways

    def __iter__(self) -> Iterator[Any]:
        return iter(self.ways)

    def __len__(self) -> int:
        return len(self.ways)


@dataclass
class Graph:
    """States (any hashable key), the resources each holds (running calls that may span ticks,
    running timeouts: node numbers; the tick bound reads them only at the states that could
    idle), their edges, and the states that could idle (the choices of that idle tick, the
    ticks each resource loses in it, and what it costs: the calls of a check repeated beside a
    task, symbolic/machine.py `_idle`)."""

    res: dict[Any, frozenset[int]] = field(default_factory=dict)
    edges: abc.Mapping[Any, list[Edge]] = field(default_factory=dict)
    idle: dict[Any, tuple[Any, dict[int, int], dict[str, int]]] = field(default_factory=dict)
    order: list[Any] = field(default_factory=list)  # the states, each after those it leads to
    # a graph holding no time (no call spans ticks across an edge, no state can idle): the most
    # ticks from each state, folded by the search as one more cost (slot `ticks_slot` of
    # `worst[state]`), so the tick bound only reads it (tick_bound.py)
    worst: dict[Any, tuple[int, ...]] | None = None
    ticks_slot: int = -1


def mapping(parent: Any, child: Any) -> Mapping:
    """The child point's resources from the parent point's (both of one advance)."""
    out: Mapping = {}
    pres = parent.res or {}
    for j, (v, gen) in (child.res or {}).items():
        if j in pres and pres[j][1] == gen:
            out[j] = (True, pres[j][0] - v)
        else:
            out[j] = (False, v)
    return out


def compose(first: Mapping, then: Mapping) -> Mapping:
    """`then` after `first`: the last state's resources from the first state's."""
    out: Mapping = {}
    for j, (same, d) in then.items():
        if same and j in first:
            same0, d0 = first[j]
            out[j] = (True, d0 + d) if same0 else (False, d0 - d)
        else:
            out[j] = (same, d)
    return out


def asked(step: Step | None, parent: Any, index: dict[str, int]) -> tuple[int, str] | None:
    """The resource a step's question is about, when the parent holds it."""
    if step is None:
        return None
    base, _, what = step[0].partition("#")
    j = index.get(base)
    if j is None or j not in (parent.res or {}) or what not in ("running", "deadline"):
        return None
    return (j, what)
