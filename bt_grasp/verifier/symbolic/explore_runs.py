"""The symbolic search's second pass (explore.py): every run, from the first pass's graph.

The walk goes depth first from the initial point with the episode's actual counters: at a way
that needs counter comparisons only the answers the counters give are taken, the counters move
by what the way grew them, and a state is (point, counters), packed in one int (_Code). Per
state it keeps the worst future of every cost as one tuple of numbers (one slot per cost name):
a state's is the slot-wise maximum over its ways of the way's costs plus the next state's, so
that folding a way is two C-level maps rather than a loop over a dictionary. A run reaching a state's worst value is not
carried along; it is read afterwards, forward from the initial state, taking at each state the
first way that attains the value (the run the depth-first fold would have kept).

The states are also listed in the order they were finished (each after every state it leads
to), which the tick bound (symbolic/tick_bound.py) and `--rates` walk instead of ordering the
graph again. Where the graph holds no time (no call spans a way, no state can idle), the ticks
are one more cost slot, and the tick bound reads the walk's value (Graph.worst).
"""

from __future__ import annotations

from operator import add
from typing import Any, NamedTuple

from bt_grasp.verifier.compiled.search import ANY, Found, Step, Summary, _Counterexample
from bt_grasp.verifier.symbolic.graph import Edge, Graph, RunEdges

__all__ = ["walk_runs"]

class _Ways(NamedTuple):
    """A point's ways, and the comparisons of counters with thresholds they need: which ways a
    state of the point takes depends only on those comparisons' answers (its signature)."""

    compared: tuple[tuple[int, int], ...]  # (counter, threshold)
    fields: tuple[tuple[int, int], ...]  # the same as (the counter's shift in a state, threshold)
    rows: list[tuple[Any, ...]]
    taken: dict[tuple[bool, ...], list[tuple[Any, ...]]]  # per signature, the ways it takes


class _Overflow(Exception):
    """A counter outgrew its field of a state's number: the walk starts again with wider ones."""


class _Code:
    """A state as one int: its point in the low bits, then each counter in a field of `width`
    bits. Hashing and comparing an int costs a fraction of a (point, counters) tuple, and a way
    moves the counters by two operations: `state & kept + added` (a field the way keeps, or
    one it clears: a counter no comparison ahead reads, a restarted streak). A field's top bit
    stays clear (a state with it set is an _Overflow), so adding less than a quarter of a
    field never carries into the next one."""

    def __init__(self, points: int, counters: int, width: int) -> None:
        self.low = max(points, 1).bit_length()
        self.width = width
        self.fmask = (1 << width) - 1
        self.shift = [self.low + i * width for i in range(counters)]
        self.guard = sum(1 << (s + width - 1) for s in self.shift)

    def state(self, point: int, counters: tuple[int, ...]) -> int:
        if any(not 0 <= c < 1 << (self.width - 1) for c in counters):
            raise _Overflow
        return point | sum(c << s for c, s in zip(counters, self.shift, strict=True))

    def move(self, target: int, moves: tuple[tuple[bool, int], ...], live: frozenset[int]) -> tuple[int, int]:
        """(kept, added) of a way into `target`: counters grow by their amount or (absolute)
        become it; a counter no comparison ahead of the target reads becomes 0."""
        kept, added = 0, target
        for i, (absolute, amount) in enumerate(moves):
            if i not in live:
                continue
            if not 0 <= amount < 1 << (self.width - 2):
                raise _Overflow  # (counters only grow: a negative amount is a restarted streak's)
            if not absolute:
                kept |= self.fmask << self.shift[i]
            added += amount << self.shift[i]
        return kept, added


def _prepared(macros: dict[Any, list[Any]], relevant: dict[Any, frozenset[int]],
              names: list[str], timeless: bool, code: _Code) -> dict[Any, _Ways]:
    """Per point, its ways as tuples: (needs, kind, target, the moves of the counters into the
    target as (kept, added) on the state's number (_Code.move), cost vector or None, edge,
    way). `timeless`: the cost vector's last slot is the way's ticks."""
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
            move = (0, 0)
            if way.kind in ("choice", "tick"):
                move = code.move(way.target, way.moves, relevant[way.target])
            rows.append((way.needs, way.kind, way.target, move, vec, way.edge, way))
        compared = tuple(sorted({(c, threshold) for way in ways for c, threshold, _ in way.needs}))
        fields = tuple((code.shift[c], threshold) for c, threshold in compared)
        out[key] = _Ways(compared, fields, rows, {})
    return out


def _taken(ways: _Ways, state: int, fmask: int) -> list[tuple[Any, ...]]:
    """The ways a state takes (worked out once per signature)."""
    signature = tuple([(state >> shift) & fmask >= threshold for shift, threshold in ways.fields])
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
    """The second pass from the state `first`, a point and its counters (see the module
    docstring); the run graph's states are numbers (_Code)."""
    before = dict(endings)
    width = 8
    while True:
        try:
            return _walk(open_, macros, relevant, first, endings, advances,
                         _Code(max(open_.points), len(first[1]), width))
        except _Overflow:
            endings.clear()
            endings.update(before)
            width *= 2


def _walk(open_: Any, macros: dict[Any, list[Any]], relevant: dict[Any, frozenset[int]],
          first_point: tuple[Any, tuple[int, ...]], endings: dict[str, int], advances: int,
          code: _Code) -> Found:
    names = sorted({name for ways in macros.values() for way in ways for name in way.costs})
    timeless = _holds_no_time(open_, macros)
    ways_of = _prepared(macros, relevant, names, timeless, code)
    zero = (0,) * (len(names) + timeless)
    fmask, guard, low = code.fmask, code.guard, (1 << code.low) - 1
    edges_of = RunEdges()
    runs = Graph(edges=edges_of)
    state_ways = edges_of.ways
    memo: dict[int, tuple[int, ...]] = {}
    on_path: dict[int, int] = {}
    # per point: the bits of a state its ways depend on (the point, the counters compared), its
    # ways, the resources it holds, and how it could idle (None: it cannot)
    at: dict[int, tuple[int, _Ways, frozenset[int], Any]] = {}
    for key, ways in ways_of.items():
        bits = key
        for c, _ in ways.compared:
            bits |= fmask << code.shift[c]
        at[key] = (low | bits, ways, frozenset(open_.points[key].res or {}), open_.idle.get(key))
    # the ways taken, per state's bits that choose them (its point, its compared counters)
    taken_by: dict[int, list[tuple[Any, ...]]] = {}
    # a frame: [state, an iterator over its ways (where the walk is in them), the worst futures
    # through the ways taken so far, cost vector of the way into it, its edge]
    stack: list[list[Any]] = []

    def path_steps() -> list[Step]:
        return [f[4].step for f in stack[1:] if f[4].step is not None]

    def enter(state: int, vec: Any, edge: Any) -> None:
        if state & guard:
            raise _Overflow
        bits, ways, held, idle = at[state & low]
        on_path[state] = len(stack)
        if idle is not None:  # what it holds only matters to the tick bound where it could idle
            runs.res[state] = held
            runs.idle[state] = idle
        taken = taken_by.get(state & bits)
        if taken is None:
            taken = taken_by[state & bits] = _taken(ways, state, fmask)
        state_ways[state] = taken
        stack.append([state, iter(taken), [], vec, edge])

    first = code.state(*first_point)
    enter(first, None, None)
    root: tuple[int, ...] | None = None
    order = runs.order
    try:
        while True:
            frame = stack[-1]
            here, ways_left, totals = frame[0], frame[1], frame[2]
            for _, kind, target, (kept, added), vec, edge, way in ways_left:  # resumes where it left
                if kind == "end":
                    endings[target] = endings.get(target, 0) + 1
                    totals.append(zero if vec is None else vec)
                    continue
                if kind == "problem":
                    step = edge.step
                    raise _Counterexample(target, path_steps() + ([step] if step else []), path=way.path)
                state = (here & kept) + added
                known = memo.get(state)
                if known is None:  # first met: walk it
                    if state in on_path:
                        _loop(stack, on_path[state], edge, path_steps())
                    enter(state, vec, edge)
                    break
                totals.append(known if vec is None else tuple(map(add, known, vec)))
            else:  # every way taken: the state's worst futures
                stack.pop()
                del on_path[here]
                value = (tuple(map(max, *totals)) if len(totals) > 1 else totals[0]) if totals else zero
                memo[here] = value
                order.append(here)
                if not stack:
                    root = value
                    break
                vec = frame[3]
                stack[-1][2].append(value if vec is None else tuple(map(add, value, vec)))
    except _Counterexample as cx:
        return Found({}, endings, len(memo), advances, cx.problem, cx.prefix, cx.cycle,
                     cx.cycle_ticks, cx.path)
    assert root is not None
    if timeless and all(taken for taken in taken_by.values()):  # (a state with no way on has no tick bound)
        runs.worst, runs.ticks_slot = memo, len(names)
    summary = _summary(runs, memo, first, names, root)
    return Found(summary, endings, len(memo), advances, graph=runs, root=first)


def _loop(stack: list[list[Any]], depth: int, edge: Edge, steps: list[Step]) -> None:
    """The way back to a state on the current path: a run that can loop forever."""
    step = edge.step
    steps = steps + ([step] if step else [])
    before = len([f for f in stack[1:depth + 1] if f[4].step is not None])
    ticks = sum(f[4].ticks for f in stack[depth + 1:]) + edge.ticks
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
