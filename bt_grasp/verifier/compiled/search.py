"""Exhaustive search over a tree's explicit run states, with worst-case bounds and witnesses.

The search is depth-first over *choice points* (a leaf asking the oracle for an outcome) and
tick boundaries. To reach a choice point the Machine (bt_grasp/verifier/compiled/machine.py) restores
the snapshot taken at the start of its tick and replays the choices already made in that tick
(never from the start of the episode). Each point's merge key (RunState.key) holds everything
that can change the future; a point whose key was fully explored before is not explored again
— its worst future per cost, and a run reaching it, are reused. A key met again on the current
path is a loop. A run must end in a decision; ending without one, reaching `max_ticks` or
looping is a counterexample.

Calls that span ticks are explored as bt_grasp/verifier/compiled/running.py explains: tick by tick where
something observes how long they run, else only their longest call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.context import EpisodeLimits
from bt_grasp.verifier.compiled.machine import Machine
from bt_grasp.verifier.compiled.state import COUNTER, REFUSED, RETRY_TICKS, STREAK
from bt_grasp.verifier.transitions import Point

__all__ = ["ANY", "Step", "search", "unroll"]

Step = tuple[str, str]                 # (choice id, outcome)
Cons = "tuple[Step, Cons] | None"      # a run suffix as a shared linked list
Summary = dict[str, tuple[int, Any]]   # cost key -> (worst future value, a suffix reaching it)
ANY = ""                               # Summary key of some complete suffix (value 0)


def unroll(cons: Any) -> list[Step]:
    out: list[Step] = []
    while cons is not None:
        out.append(cons[0])
        cons = cons[1]
    return out


@dataclass
class _Frame:
    point: Point
    step: Step | None        # the choice that led here from the parent frame (None: a tick)
    n_children: int
    next_child: int = 0
    best: Summary = field(default_factory=dict)


@dataclass
class Found:
    """The search's verdict. `problem` set: `prefix` (+ `cycle` repeated for a loop) is a
    counterexample; `incomplete`: a limit stopped the search first."""

    summary: Summary
    endings: dict[str, int]
    states: int
    advances: int
    problem: str | None = None
    prefix: list[Step] = field(default_factory=list)
    cycle: list[Step] = field(default_factory=list)
    cycle_ticks: int = 0
    path: list[str] = field(default_factory=list)
    incomplete: bool = False
    graph: Any = None  # the symbolic search's states and edges (graph.Graph), for the tick bound
    root: Any = None   # the symbolic search's initial state in that graph
    over: Any = None   # () -> a graph whose paths include every run (explore.py), rooted at 0


class _Counterexample(Exception):
    def __init__(self, problem: str, prefix: list[Step], cycle: list[Step] | None = None,
                 path: list[str] | None = None, cycle_ticks: int = 0) -> None:
        super().__init__(problem)
        self.problem, self.prefix, self.cycle, self.path = problem, prefix, cycle or [], path or []
        self.cycle_ticks = cycle_ticks


class _Limit(Exception):
    pass


def _combine(parent: _Frame, child_costs: dict[str, int], child: Summary, step: Step | None) -> None:
    """Fold a child's worst futures into its parent's, each key with a suffix that reaches it."""
    base = parent.point.costs
    keys = set(child) | set(child_costs)
    any_suffix = child[ANY][1]
    acted = child_costs.get("actions", 0) > base.get("actions", 0)
    for k in keys:
        delta = child_costs.get(k, 0) - base.get(k, 0)
        value, suffix = child.get(k, (0, any_suffix))
        if k == STREAK and acted:  # an action reset the streak: what follows does not add
            value = 0
        total = delta + value
        if k not in parent.best or total > parent.best[k][0]:
            parent.best[k] = (total, (step, suffix) if step is not None else suffix)


_ACTIONS, _STREAK, _RETRY, _SCOPED = 2, 3, 4, 5  # where RunState.key holds these counters
_RETRY_COST = COUNTER + "retry:"
_FREE = object()  # a counter nothing compares again: any value shares


class _Spare:
    """Memo entries that hold for any counter values the limits still cover.

    A counter here only grows and is only ever compared with fixed limits: the action count
    with the budget, a retry scope's starts with its retries' attempts, a named scope's actions
    with its budgets' limits; the perception streak too, until an action resets it (its `w`
    counts the perception calls before the first action; after it both runs are alike). A
    state explored from a value `c'` whose runs raise that counter by at most `w`, with
    `c' + w` below the smallest limit it meets, saw every comparison pass.
    The same state from a value `c` passes them too, step by step the same, when the largest
    value compared is still below that limit: `c + w - 1` if each passed check is followed by
    a rise, else `c + w` (a retry checks after its child fails without starting it; a named
    budget refusing an action comes after the checks of the episode's and outer budgets
    passed, so action counts are shared at the edge only by runs where none refuses). Its
    runs are then the same choices with the same costs (the counter `c - c'` higher, worst
    futures the same). Such states share one summary; the rest of the key must match exactly.
    A counter that may reach its limit is shared only with its own value; a retry scope whose
    retries are not ticked again in those runs, with any value.
    """

    def __init__(self, limits: EpisodeLimits, memo: dict[tuple[Any, ...], Summary],
                 retry_floor: dict[str, int] | None = None,
                 scope_floor: dict[str, int] | None = None) -> None:
        self.limit, self.streak_limit = limits.actions, limits.perception_streak
        self.retry_floor = retry_floor or {}
        self.scope_floor = scope_floor or {}
        self.by_rest: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], Summary]]] = {}
        for key, summary in memo.items():
            self.add(key, summary)

    def _split(self, key: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[tuple[int, str, int]]]:
        """The key without the counter values that can be shared, and those values as
        (slack: 0 for actions-like, 1 for retries; cost name; value)."""
        counters = [(0, "actions", key[_ACTIONS])]
        streak = key[_STREAK]
        if streak < self.streak_limit:
            counters.append((0, STREAK, streak))
            streak = None
        shown = []
        for part, floor, kind, slack in ((key[_RETRY], self.retry_floor, "retry", 1),
                                         (key[_SCOPED], self.scope_floor, "scoped", 0)):
            masked = []
            for scope, n in part:
                if scope in floor and (kind == "retry" or isinstance(n, int) and n < floor[scope]):
                    masked.append((scope, None))
                    counters.append((slack, f"{COUNTER}{kind}:{scope}", n))
                else:
                    masked.append((scope, n))
            shown.append(tuple(masked))
        rest = key[:_ACTIONS] + (streak, *shown) + key[_SCOPED + 1:]
        return rest, counters

    def _floor(self, name: str) -> int:
        if name == "actions":
            return self.limit
        if name == STREAK:
            return self.streak_limit
        kind, scope = name[len(COUNTER):].split(":", 1)
        return (self.retry_floor if kind == "retry" else self.scope_floor)[scope]

    def add(self, key: tuple[Any, ...], summary: Summary) -> None:
        rest, counters = self._split(key)
        need = []
        refused = summary.get(REFUSED, (0, None))[0] > 0
        for slack, name, value in counters:
            more = summary.get(name, (0, None))[0]
            floor = self._floor(name)
            if name.startswith(_RETRY_COST) and \
                    summary.get(RETRY_TICKS + name[len(_RETRY_COST):], (0, None))[0] == 0:
                need.append((0, floor, 0, _FREE))  # no retry of the scope runs again
            elif isinstance(value, int) and value + more < floor:
                need.append((max(slack, int(refused)), floor, more, None))
            elif name == "actions":
                return
            else:  # this counter may reach a limit: shared only with its own value
                need.append((0, floor, more, value))
        self.by_rest.setdefault(rest, []).append((tuple(need), summary))

    def get(self, key: tuple[Any, ...]) -> Summary | None:
        rest, counters = self._split(key)
        for need, summary in self.by_rest.get(rest, ()):
            if all(exact is _FREE or (value == exact if exact is not None else
                                      isinstance(value, int) and value + more + slack <= floor)
                   for (slack, floor, more, exact), (_, _, value)
                   in zip(need, counters, strict=True)):
                return summary
        return None


def search(machine: Machine, max_advances: int, time_limit: float | None,
           memo: dict[tuple[Any, ...], Summary] | None = None,
           endings: dict[str, int] | None = None, work_limit: int | None = None) -> Found:
    """Depth-first search from the initial state; see the module docstring. `time_limit` is in
    wall-clock seconds (off unless the caller asks), `work_limit` in the machine's `work`
    (advances plus the choices made in them): a count, so that where it stops, and so what
    the caller does next, does not depend on the machine's speed or load.

    `memo` and `endings` may come from an earlier search of the same machine that a limit
    stopped: fully explored states stay valid, so a second search continues where it left off.
    """
    memo = {} if memo is None else memo
    endings = {} if endings is None else endings
    spare = _Spare(machine.limits, memo, machine.state.retry_floor, machine.state.scope_floor)
    on_path: dict[tuple[Any, ...], int] = {}
    stack: list[_Frame] = []
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    work_at = None if work_limit is None else machine.work + work_limit
    max_ticks = machine.limits.max_ticks

    def path_steps() -> list[Step]:
        return [f.step for f in stack[1:] if f.step is not None]

    def enter(point: Point, step: Step | None) -> Summary | None:
        """Push a frame for `point`, or return its known summary."""
        if point.kind == "end":
            endings[point.text] = endings.get(point.text, 0) + 1
            return {ANY: (0, None)}
        if point.kind == "problem":
            raise _Counterexample(point.text, path_steps() + ([step] if step else []), path=point.path)
        key: Any = point.key  # a choice or tick point always has one
        known = memo.get(key)
        if known is None:
            known = spare.get(key)
        if known is not None:
            if point.costs["ticks"] + known.get("ticks", (0, None))[0] > max_ticks:
                # the same future from a later tick: its longest run now reaches the cap
                tail = unroll(known.get("ticks", known[ANY])[1])
                raise _Counterexample(f"tick cap ({max_ticks}) reached: the tree loops",
                                      path_steps() + ([step] if step else []) + tail)
            return known
        if key in on_path:
            depth = on_path[key]
            steps = path_steps() + ([step] if step else [])
            before = len([f for f in stack[1:depth + 1] if f.step is not None])
            raise _Counterexample(
                "loop: the tree returns to an earlier state with the same choices: it can loop forever",
                steps[:before], steps[before:], cycle_ticks=point.tick - stack[depth].point.tick)
        n = len(point.alphabet) if point.kind == "choice" else 1
        on_path[key] = len(stack)
        stack.append(_Frame(point, step, n))
        return None

    machine.stop_at = lambda key: key in memo or key in on_path or spare.get(key) is not None
    root_summary: Summary | None = None
    try:
        if enter(machine.start(), None) is not None:  # pragma: no cover - the first key is new
            raise AssertionError("fresh search found a memo entry")
        while stack:
            frame: Any = stack[-1]
            if frame.next_child >= frame.n_children:
                stack.pop()
                del on_path[frame.point.key]
                memo[frame.point.key] = frame.best
                spare.add(frame.point.key, frame.best)
                if stack:
                    _combine(stack[-1], frame.point.costs, frame.best, frame.step)
                else:
                    root_summary = frame.best
                continue
            if machine.advances >= max_advances or (deadline and time.perf_counter() > deadline) \
                    or (work_at is not None and machine.work >= work_at):
                raise _Limit()
            i = frame.next_child
            frame.next_child += 1
            p = frame.point
            if p.kind == "choice":
                child = machine.advance(p.snap, [*p.script, i])
                step: Step | None = (p.node_id, p.alphabet[i])
            else:
                child = machine.advance(p.snap, [])
                step = None
            # the new choices the advance went past (first outcome each), then where it stopped
            for point in [*machine.dive, child]:
                known = enter(point, step)
                if known is not None:
                    _combine(stack[-1], point.costs, known, step)
                    break
                if point is not child:
                    stack[-1].next_child = 1
                    step = (point.node_id, point.alphabet[0])
    except _Counterexample as cx:
        return Found({}, endings, len(memo), machine.advances, cx.problem, cx.prefix, cx.cycle,
                     cx.cycle_ticks, cx.path)
    except _Limit:
        return Found({}, endings, len(memo), machine.advances, incomplete=True)
    assert root_summary is not None
    return Found(root_summary, endings, len(memo), machine.advances)
