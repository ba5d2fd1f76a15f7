"""The graph of a tree's runs the symbolic search builds (explore.py) and the tick bound reads
(symbolic/tick_bound.py): states, what each holds of time left, and the edges between them."""

from __future__ import annotations

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


@dataclass
class Graph:
    """States (any hashable key), the resources each holds (running calls that may span ticks,
    running timeouts: node numbers; the tick bound reads them only at the states that could
    idle), their edges, and the states that could idle (the choices of that idle tick, the
    ticks each resource loses in it, and what it costs: the calls of a check repeated beside a
    task, symbolic/machine.py `_idle`)."""

    res: dict[Any, frozenset[int]] = field(default_factory=dict)
    edges: dict[Any, list[Edge]] = field(default_factory=dict)
    idle: dict[Any, tuple[Any, dict[int, int], dict[str, int]]] = field(default_factory=dict)
    order: list[Any] = field(default_factory=list)  # the states, each after those it leads to


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
