"""The symbolic search: every run of the model (symbolic/machine.py), in two passes.

**Each state once, whatever its counters.** A run's counters (actions, perception streak, retry
starts per scope, actions per named budget) only grow (the streak also restarts at 0 on an
action) and are only ever compared with fixed limits. So the first pass explores the model with
its counters left open: the key of a point is everything else (symbolic/keys.py), and every
comparison of a counter with a limit is a choice of its own (`<node>#~<counter>:<limit>`, "below"
or "reached"), both answers explored, unless the streak restarted since the last point, which
makes its value known. The pass records every point once and the edges between them: the
choice made, what each counter grew by, and the costs added. No tick passes idle (see
symbolic/machine.py); a boundary that could idle is noted for the tick bound.

**Then every run, by arithmetic.** The second pass walks the recorded graph from the initial
point with the episode's actual counters: at a comparison choice only the answer the counter gives
is taken, the counters move by what the edge grew them, and a state is (point, counters). This
is the whole set of runs of the tree (the first pass explored every answer every counter could
give), so the worst future of actions, perception calls and calls per primitive of each state,
the endings, a run without a decision and a loop (the same state met again on the current path)
come out exactly, each with the choices that reach it; comparison choices are the search's own and
are left out of those. The tick bound then reads the graph of states this pass builds
(tick_bound.py). The second pass is explore_runs.py's; the first pass's graph also serves the
properties (its paths include every run: `_Open.view`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.verifier.compiled.search import Found, Step, unroll
from bt_grasp.verifier.symbolic.explore_runs import walk_runs
from bt_grasp.verifier.symbolic.graph import Edge, Graph, asked, compose, mapping
from bt_grasp.verifier.symbolic.tick_bound import Unidle
from bt_grasp.verifier.transitions import ExploredMachine, Point

__all__ = ["CMP", "explore", "unroll"]

CMP = "#~"  # in the choice ids of counter comparisons, "<node>#~<counter>:<limit>" (the search's own)
REACHED = "reached"


@dataclass
class _Open:
    """The first pass's graph: each point once, numbered in the order found (the root is 0; a
    point's key holds the whole state, and the second pass and the tick bound look states up
    many times each), its raw edges (step, child number or ending text, parent point, child
    point: both of the advance that found the edge), and the boundaries at which the run could
    have idled."""

    ids: dict[Any, int] = field(default_factory=dict)  # a point's key -> its number
    points: dict[int, Point] = field(default_factory=dict)
    edges: dict[int, list[tuple[Any, Any, Point, Point]]] = field(default_factory=dict)
    idle: dict[int, Any] = field(default_factory=dict)

    def view(self) -> Graph:
        """This graph as a run graph (graph.Graph) without the counter comparisons' answers:
        every run of the tree is one of its paths (a comparison's both answers are in it), and
        some of its paths are no run (an answer the counters would not give). So what holds on
        every path of it holds on every run, at a fraction of the run graph's states."""
        out: dict[int, list[Edge]] = {}
        for number, raw in self.edges.items():
            edges = []
            for step, ref, _, child in raw:
                if child.kind == "problem":
                    continue  # no run: the second pass reports a reachable one
                own = None if step is None or CMP in step[0] else step
                edges.append(Edge(own, ref, child.kind == "end", {}, 0, None))
            out[number] = edges
        return Graph(edges=out, idle=dict(self.idle))


def _open_pass(machine: ExploredMachine, chunk: int) -> Iterator[_Open | None]:
    """Every point of the model (see the module docstring): yields None after every `chunk`
    advances (so that two passes can take turns), then the graph."""
    graph = _Open()
    root = machine.start()
    graph.ids[root.key] = 0
    graph.points[0] = root
    stack: list[list[Any]] = [[root, 0, 1, 0]]  # [point, next child, number of children, number]
    machine.stop_at = graph.ids.__contains__
    try:
        yield from _explored(machine, chunk, graph, stack)
    finally:
        # the machine would otherwise hold every point (and its saved states) in a reference
        # cycle through its ticker, which only the cyclic collector frees, at length
        machine.stop_at = None


def _explored(machine: ExploredMachine, chunk: int, graph: _Open,
              stack: list[list[Any]]) -> Iterator[_Open | None]:
    ids = graph.ids
    while stack:
        frame = stack[-1]
        p, i, n, number = frame
        if i >= n:
            stack.pop()
            continue
        if machine.advances % chunk == 0:
            yield None
        frame[1] += 1
        if p.kind == "choice":
            child = machine.branch(p, i)
            step: Step | None = (p.node_id, p.alphabet[i])
        else:
            child = machine.advance(p.snap, [])
            step = None
        parent = p
        for point in [*machine.dive, child]:
            if point.kind == "idle":
                boundary = next(f[3] for f in reversed(stack) if f[0].kind == "tick")
                graph.idle[boundary] = _one_idle(graph.idle.get(boundary), point.idle)
                break
            known = None
            if point.kind in ("choice", "tick"):
                known = ids.get(point.key)
                ref: Any = len(ids) if known is None else known
            else:
                ref = point.text
            graph.edges.setdefault(number, []).append((step, ref, parent, point))
            if point.kind in ("end", "problem") or known is not None:
                break
            ids[point.key] = ref
            graph.points[ref] = point
            if point is child:
                stack.append([point, 0, len(point.alphabet) if point.kind == "choice" else 1, ref])
            else:  # a choice the advance went past, with its first outcome
                stack.append([point, 1, len(point.alphabet), ref])
                parent, number, step = point, ref, (point.node_id, point.alphabet[0])
    yield graph


def _one_idle(known: Any, found: Any) -> Any:
    """The idle tick a boundary is noted with: (its choices, the ticks each resource loses, its
    costs). Two ways to idle at one boundary cost alike, or one costs at least as much of every
    key (the tick bound takes its repetitions): else no symbolic bound."""
    if known is None or known[2] == found[2]:
        return found if known is None else known
    keys = set(known[2]) | set(found[2])
    if all(found[2].get(k, 0) >= known[2].get(k, 0) for k in keys):
        return found
    if all(known[2].get(k, 0) >= found[2].get(k, 0) for k in keys):
        return known
    raise Unidle("two ways to idle at one state cost different calls")


@dataclass
class _Macro:
    """A way from a point to the next point that is not a counter comparison: the Runner's
    answer it starts with, the comparisons it needs of the counters (counter, threshold,
    reached: counter >= threshold), what it does to each counter ((absolute?, amount): grows
    by it, or, for a restarted streak, becomes it), the costs it adds, and the edge's timing."""

    needs: tuple[tuple[int, int, bool], ...]
    moves: tuple[tuple[bool, int], ...]
    costs: dict[str, int]
    target: Any
    kind: str  # "choice" / "tick" (a state), "end", "problem"
    edge: Edge
    path: list[str]


def _macros(open_: _Open, key: Any, index: dict[str, int]) -> list[_Macro]:
    """Every way from the point `key` through counter comparisons to the next other point."""
    start = open_.points[key]
    n = len(start.cnt)
    out: list[_Macro] = []
    todo: list[tuple[Any, ...]] = []
    for step, ref, parent, child in open_.edges.get(key, []):
        own = None if step is None or CMP in step[0] else step
        todo.append((step, ref, parent, child, (), ((False, 0),) * n, {}, None, 0, (), own,
                     asked(own, start, index)))
    while todo:
        step, ref, parent, child, needs, moves, costs, resmap, ticks, bumps, own, ask = todo.pop()
        if step is not None and CMP in step[0]:  # this edge answers a comparison
            cid, limit = (int(x) for x in step[0].partition(CMP)[2].split(":"))
            absolute, amount = moves[cid]
            reached = step[1] == REACHED
            if absolute:
                if (amount >= limit) != reached:
                    continue  # the counter is known here: the other answer is not a run
            else:
                needs = (*needs, (cid, limit - amount, reached))
        moved = []
        for i, ((absolute, amount), a, b) in enumerate(zip(moves, parent.cnt, child.cnt, strict=True)):
            if i == 1 and child.cnt[0] != parent.cnt[0]:
                moved.append((True, b))  # an action restarted the streak on the way
            else:
                moved.append((absolute, amount + b - a))
        added = dict(costs)
        base = parent.costs
        for k, v in child.costs.items():
            if v != base.get(k, 0):
                added[k] = added.get(k, 0) + v - base.get(k, 0)
        step_map = mapping(parent, child)
        resmap = step_map if resmap is None else compose(resmap, step_map)
        ticks += child.tick - parent.tick
        bumps = (*bumps, *child.bumps)
        if child.kind == "choice" and CMP in child.node_id:
            for edge in open_.edges.get(ref, []):
                todo.append((*edge, needs, tuple(moved), added, resmap, ticks, bumps, own, ask))
            continue
        end = child.kind in ("end", "problem")
        out.append(_Macro(needs, tuple(moved), added, ref, child.kind,
                          Edge(own, ref, end, resmap, ticks, ask, bumps, added), child.path))
    return out


def _relevant(open_: _Open, macros: dict[Any, list[_Macro]], index: dict[str, int]) -> dict[Any, frozenset[int]]:
    """Per point, the counters some comparison in its future reads (before a restart): the
    others' values change nothing that can follow, so the states are told apart without them."""
    todo = [k for k, p in open_.points.items() if CMP not in p.node_id]
    for key in todo:
        if key not in macros:
            macros[key] = _macros(open_, key, index)
    rel: dict[Any, set[int]] = {key: {c for way in macros[key] for c, _, _ in way.needs} for key in todo}
    # to a fixpoint (the graph has cycles: retries start their child again), by a worklist over
    # the ways into each point: a point is looked at again only when what its successors read
    # grew, rather than every point in every sweep
    into: dict[Any, list[tuple[Any, tuple[tuple[bool, int], ...]]]] = {}
    for key in todo:
        for way in macros[key]:
            if way.kind in ("choice", "tick"):
                into.setdefault(way.target, []).append((key, way.moves))
    work = [key for key in todo if rel[key]]
    while work:
        target = work.pop()
        theirs = rel[target]
        for key, moves in into.get(target, ()):
            mine = rel[key]
            grew = False
            for c in theirs:
                if c not in mine and not moves[c][0]:
                    mine.add(c)
                    grew = True
            if grew:
                work.append(key)
    return {key: frozenset(v) for key, v in rel.items()}


def _moved(counters: tuple[int, ...], moves: tuple[tuple[bool, int], ...],
           keep: frozenset[int]) -> tuple[int, ...]:
    """The counters after `moves`, those no comparison ahead reads left at 0."""
    out = [0] * len(counters)
    for i in keep:
        absolute, amount = moves[i]
        out[i] = amount if absolute else counters[i] + amount
    return tuple(out)


_CHUNK = 256  # advances each variant of the first pass takes per share of its turn


def explore(machines: Sequence[ExploredMachine], max_advances: int, time_limit: float | None,
            endings: dict[str, int] | None = None, slow_after: int | None = None,
            on_slow: Callable[[], float | None] | None = None,
            shares: list[int] | None = None, head_start: int = 0) -> Found:
    """Both passes, the first by each machine in turn (the same tree, its action count kept or
    left open: either gives every run exactly, and which is smaller depends on the tree), the
    second on the graph of the one that finishes first. `Found.graph` is the second pass's
    graph (graph.Graph), for the tick bound; `Found.advances` counts both machines'.

    `shares`: how many chunks of advances each machine takes per turn (1 each by default). A
    machine likely to finish first is given more, so that the other costs a fraction of it
    rather than as much; a wrong guess still ends, at the other's pace times the shares. The
    machine with the most shares first runs alone for `head_start` advances (most trees settle
    within them, and then the other costs nothing).

    `on_slow` is called when the first pass has done `slow_after` work (the machines' `work`:
    advances plus the choices made in them); it answers the work after which to ask it again
    (inf: never), or None: the tree was settled another way, and the search stops there,
    incomplete. Work is counted, not timed, so that the result never depends on the machine's
    speed or load; only `time_limit` (wall seconds, off unless the caller asks) reads a clock."""
    endings = {} if endings is None else endings
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    slow_at = None if slow_after is None or on_slow is None else float(slow_after)
    shares = shares or [1] * len(machines)
    passes = [(m, _open_pass(m, _CHUNK * share)) for m, share in zip(machines, shares, strict=True)]
    lead = machines[shares.index(max(shares))] if max(shares) > min(shares) else None
    open_: _Open | None = None
    while open_ is None:
        for m, gen in passes:
            if lead is not None and m is not lead and lead.advances < head_start:
                continue
            open_ = next(gen)
            if open_ is not None:
                machine = m
                break
        advances = sum(m.advances for m in machines)
        if open_ is None and (advances >= max_advances or (deadline and time.perf_counter() > deadline)):
            return Found({}, endings, 0, advances, incomplete=True)
        if open_ is None and slow_at is not None and on_slow is not None \
                and sum(m.work for m in machines) >= slow_at:
            again = on_slow()
            if again is None:
                return Found({}, endings, 0, advances, incomplete=True)
            slow_at = sum(m.work for m in machines) + again
    index = machine.m.index
    macros: dict[Any, list[_Macro]] = {}
    relevant = _relevant(open_, macros, index)
    start = open_.points[0]
    first = (0, _moved(start.cnt, ((False, 0),) * len(start.cnt), relevant[0]))
    found = walk_runs(open_, macros, relevant, first, endings, sum(m.advances for m in machines))
    found.over = open_.view
    return found
