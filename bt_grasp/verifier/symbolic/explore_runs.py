"""The symbolic search's second pass (explore.py): every run, from the first pass's graph.

The walk goes depth first from the initial point with the episode's actual counters: at a way
that needs counter comparisons only the answers the counters give are taken, the counters move
by what the way grew them, and a state is (point, counters). Per state it keeps the worst future
of every cost as one tuple of numbers (one slot per cost name): a state's is the slot-wise
maximum over its ways of the way's costs plus the next state's, so that folding a way is two
C-level maps rather than a loop over a dictionary. A run reaching a state's worst value is not
carried along; it is read afterwards, forward from the initial state, taking at each state the
first way that attains the value (the run the depth-first fold would have kept).

The states are also listed in the order they were finished (each after every state it leads
to), which the tick bound (symbolic/tick_bound.py) walks instead of ordering the graph again.
"""

from __future__ import annotations

from operator import add, mul
from typing import Any, NamedTuple

from bt_grasp.verifier.compiled.search import ANY, Found, Step, Summary, _Counterexample
from bt_grasp.verifier.symbolic.graph import Edge, Graph, RunEdges

__all__ = ["walk_runs"]

class _Ways(NamedTuple):
    """A point's ways, and the comparisons of counters with thresholds they need: which ways a
    state of the point takes depends only on those comparisons' answers (its signature)."""

    compared: tuple[tuple[int, int], ...]  # (counter, threshold)
    rows: list[tuple[Any, ...]]
    taken: dict[tuple[bool, ...], list[tuple[Any, ...]]]  # per signature, the ways it takes


def _prepared(macros: dict[Any, list[Any]], relevant: dict[Any, frozenset[int]],
              names: list[str], timeless: bool) -> dict[Any, _Ways]:
    """Per point, its ways as tuples: (needs, kind, target, the moves of the counters into the
    target as (kept, added): 1 where a counter keeps its value, and what is added to it, cost
    vector or None, edge, way). `timeless`: the cost vector's last slot is the way's ticks."""
    pos = {name: i for i, name in enumerate(names)}
    width = len(names) + timeless
    out: dict[Any, _Ways] = {}
    for key, ways in macros.items():
        rows = []
        for way in ways:
            vec = None
            ticks = way.edge.ticks if timeless else 0
            if way.costs or ticks:
                slots = [0] * width
                for name, value in way.costs.items():
                    slots[pos[name]] += value
                if timeless:
                    slots[-1] = ticks
                vec = tuple(slots)
            # the next state's counters: counter * kept + added, slot by slot (a counter no
            # comparison ahead reads is 0; a restarted streak becomes its new value)
            kept: tuple[int, ...] = ()
            added: tuple[int, ...] = ()
            if way.kind in ("choice", "tick"):
                live = relevant[way.target]
                kept = tuple(int(i in live and not absolute) for i, (absolute, _) in enumerate(way.moves))
                added = tuple(amount if i in live else 0 for i, (_, amount) in enumerate(way.moves))
            rows.append((way.needs, way.kind, way.target, (kept, added), vec, way.edge, way))
        compared = tuple(sorted({(c, threshold) for way in ways for c, threshold, _ in way.needs}))
        out[key] = _Ways(compared, rows, {})
    return out


def _taken(ways: _Ways, counters: tuple[int, ...]) -> list[tuple[Any, ...]]:
    """The ways a state with these counters takes (worked out once per signature)."""
    signature = tuple([counters[c] >= threshold for c, threshold in ways.compared])
    taken = ways.taken.get(signature)
    if taken is None:
        answer = dict(zip(ways.compared, signature, strict=True))
        taken = ways.taken[signature] = [
            row for row in ways.rows
            if all(answer[(c, threshold)] == reached for c, threshold, reached in row[0])]
    return taken


def _holds_no_time(open_: Any, macros: dict[Any, list[Any]]) -> bool:
    """No state can idle and no way carries a call or timeout's ticks left to the next state:
    the most ticks from a state is then one more cost, the longest sum of the ways' ticks."""
    return not open_.idle and not any(way.edge.resources or way.edge.ask is not None
                                      for ways in macros.values() for way in ways)


def walk_runs(open_: Any, macros: dict[Any, list[Any]], relevant: dict[Any, frozenset[int]],
              first: tuple[Any, tuple[int, ...]], endings: dict[str, int], advances: int) -> Found:
    """The second pass from the state `first` (see the module docstring)."""
    names = sorted({name for ways in macros.values() for way in ways for name in way.costs})
    timeless = _holds_no_time(open_, macros)
    ways_of = _prepared(macros, relevant, names, timeless)
    zero = (0,) * (len(names) + timeless)
    edges_of = RunEdges()
    runs = Graph(edges=edges_of)
    state_ways = edges_of.ways
    memo: dict[Any, tuple[int, ...]] = {}
    on_path: dict[Any, int] = {}
    # per point: the resources it holds, and how it could idle (None: it cannot)
    held_at = {key: (frozenset(open_.points[key].res or {}), open_.idle.get(key)) for key in ways_of}
    # a frame: [state, counters, ways, next, worst futures (None: none yet), cost vector,
    # answer and ticks of the way into it]
    stack: list[list[Any]] = []
    dead_end = False

    def path_steps() -> list[Step]:
        return [f[6] for f in stack[1:] if f[6] is not None]

    def push(state: tuple[Any, tuple[int, ...]], vec: Any, step: Step | None, ticks: int) -> None:
        nonlocal dead_end
        key, counters = state
        on_path[state] = len(stack)
        held, idle = held_at[key]
        if idle is not None:  # what it holds only matters to the tick bound where it could idle
            runs.res[state] = held
            runs.idle[state] = idle
        taken = _taken(ways_of[key], counters)
        dead_end = dead_end or not taken
        state_ways[state] = (taken, counters)
        stack.append([state, counters, taken, 0, None, vec, step, ticks])

    push(first, None, None, 0)
    root: tuple[int, ...] | None = None
    order = runs.order
    try:
        while stack:
            frame = stack[-1]
            i = frame[3]
            ways = frame[2]
            if i >= len(ways):
                stack.pop()
                state = frame[0]
                del on_path[state]
                value = frame[4] if frame[4] is not None else zero
                memo[state] = value
                order.append(state)
                if stack:
                    vec = frame[5]
                    total = value if vec is None else tuple(map(add, value, vec))
                    parent = stack[-1]
                    best = parent[4]
                    parent[4] = total if best is None else tuple(map(max, best, total))
                else:
                    root = value
                continue
            frame[3] = i + 1
            _, kind, target, keep, vec, edge, way = ways[i]
            if kind == "end":
                endings[target] = endings.get(target, 0) + 1
                total = zero if vec is None else vec
            elif kind == "problem":
                step = edge.step
                raise _Counterexample(target, path_steps() + ([step] if step else []), path=way.path)
            else:
                kept, added = keep
                nxt = (target, tuple(map(add, map(mul, frame[1], kept), added)))
                known = memo.get(nxt)
                if known is None:
                    if nxt in on_path:
                        _loop(stack, on_path[nxt], edge, path_steps())
                    push(nxt, vec, edge.step, edge.ticks)
                    continue
                best = frame[4]
                if best is None:
                    frame[4] = known if vec is None else tuple(map(add, known, vec))
                else:
                    frame[4] = tuple(map(max, best, known if vec is None else map(add, known, vec)))
                continue
            best = frame[4]
            frame[4] = total if best is None else tuple(map(max, best, total))
    except _Counterexample as cx:
        return Found({}, endings, len(memo), advances, cx.problem, cx.prefix, cx.cycle,
                     cx.cycle_ticks, cx.path)
    assert root is not None
    if timeless and not dead_end:
        runs.worst, runs.ticks_slot = memo, len(names)
    summary = _summary(runs, memo, first, names, root)
    return Found(summary, endings, len(memo), advances, graph=runs, root=first)


def _loop(stack: list[list[Any]], depth: int, edge: Edge, steps: list[Step]) -> None:
    """The way back to a state on the current path: a run that can loop forever."""
    step = edge.step
    steps = steps + ([step] if step else [])
    before = len([f for f in stack[1:depth + 1] if f[6] is not None])
    ticks = sum(f[7] for f in stack[depth + 1:]) + edge.ticks
    raise _Counterexample(
        "loop: the tree returns to an earlier state with the same choices: it can loop forever",
        steps[:before], steps[before:], cycle_ticks=ticks)


def _summary(runs: Graph, memo: dict[Any, tuple[int, ...]], root: Any, names: list[str],
             worst: tuple[int, ...]) -> Summary:
    """The root's worst futures as search.Summary: per cost some run reaches (ANY: any run),
    each with a run reaching it, as a shared suffix list."""
    out: Summary = {ANY: (0, _cons(_forward(runs, memo, root, None, None)))}
    for slot, name in enumerate(names):
        if worst[slot] > 0:
            out[name] = (worst[slot], _cons(_forward(runs, memo, root, slot, name)))
    return out


def _forward(runs: Graph, memo: dict[Any, tuple[int, ...]], state: Any, slot: int | None,
             name: str | None) -> list[Step]:
    """The answers of the run that takes, at each state from `state`, the first way attaining
    the state's worst value of the cost `name` (None: the first way)."""
    steps: list[Step] = []
    want = 0 if slot is None else memo[state][slot]
    while True:
        for e in runs.edges[state]:
            if slot is None:
                rest = 0
                break
            rest = 0 if e.end else memo[e.target][slot]
            if (e.costs or {}).get(name, 0) + rest == want:  # type: ignore[arg-type]
                break
        else:  # pragma: no cover - the worst value is some way's
            raise AssertionError(f"no way attains the worst {name} at {state}")
        if e.step is not None:
            steps.append(e.step)
        if e.end:
            return steps
        state, want = e.target, rest


def _cons(steps: list[Step]) -> Any:
    out: Any = None
    for step in reversed(steps):
        out = (step, out)
    return out
