"""Properties (spec/properties.py) checked over every run of the symbolic search's run graph.

The search's second pass (explore.py) records the graph of every run: states merged where their
futures are the same, edges labelled with the Runner's answer they take, endings. Two runs that
merge into one state may have different pasts, so a property is checked on the product of that
graph with the property's monitor: a small automaton whose state (allowed or not, a count, a
response pending) is part of the product's key. Every run of the tree is a path of the graph,
and every path a run, so a property HOLDS when no reachable product state violates it; else the
shortest path to a violation is its witness, replayed on the real Runner (the monitor is run
again on the Runner's own answers and decision) before it is reported.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.oracles import ScriptedOracle, scripts_of
from bt_grasp.spec.properties import Event, Property

__all__ = ["PropertyResult", "check_properties", "replay_property", "unchecked"]

Step = tuple[str, str]
_BAD = -1  # a monitor that has seen a violation (absorbing)


@dataclass
class PropertyResult:
    """One property's verdict: `holds` None when it was not checked (the search did not give
    every run), else True/False; a violation carries `witness` (the Runner's answers of a run
    that violates it, replayed) and where the run ended."""

    name: str
    text: str
    holds: bool | None
    witness: list[dict[str, str]] = field(default_factory=list)
    ending: str = ""
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        verdict = {True: "HOLDS", False: "VIOLATED", None: "NOT CHECKED"}[self.holds]
        out: dict[str, Any] = {"name": self.name, "property": self.text, "verdict": verdict}
        if self.holds is False:
            out["witness"] = self.witness
            out["ending"] = self.ending
        if self.why:
            out["why"] = self.why
        return out


def _any_step(events: tuple[Event, ...], step: Step) -> bool:
    return any(e.step(*step) for e in events)


def _any_end(events: tuple[Event, ...], text: str) -> bool:
    return any(e.ending(text) for e in events)


def _move(prop: Property, state: int, event: bool, allow: bool, reset: bool) -> int:
    """The monitor's next state on one event (`event`, `allow`, `reset`: what the event is)."""
    if state == _BAD:
        return _BAD
    if prop.kind == "never":  # state: 1 when allowed
        if event and state == 0:
            return _BAD
        if reset:
            state = 0
        return 1 if allow and prop.allow else state
    if prop.kind == "at_most":  # state: 0 before armed, then 1 + the count so far
        if event and state > 0:
            if state > prop.count:
                return _BAD
            state += 1
        return 1 if allow and state == 0 else state
    # eventually: state 1 while a trigger waits for its answer
    if allow:
        state = 0
    return 1 if event else state


def _start(prop: Property) -> int:
    return 1 if prop.kind == "at_most" and not prop.allow else 0


class _Monitors:
    """All properties' monitors at once, with their moves cached per (states, answer)."""

    def __init__(self, props: list[Property]) -> None:
        self.props = props
        self.cache: dict[tuple[tuple[int, ...], Any], tuple[int, ...]] = {}
        self.kinds: dict[Any, tuple[tuple[bool, bool, bool], ...] | None] = {}

    def start(self) -> tuple[int, ...]:
        return tuple(_start(p) for p in self.props)

    def kind(self, label: Any) -> tuple[tuple[bool, bool, bool], ...] | None:
        """What an answer (a Step) or an ending (text) is to each property; None: nothing."""
        if label not in self.kinds:
            test = _any_end if isinstance(label, str) else _any_step
            got = tuple((test(p.event, label), test(p.allow, label), test(p.reset, label))
                        for p in self.props)
            self.kinds[label] = got if any(any(k) for k in got) else None
        return self.kinds[label]

    def move(self, states: tuple[int, ...], label: Any) -> tuple[int, ...]:
        kind = self.kind(label)
        if kind is None:
            return states
        key = (states, label)
        out = self.cache.get(key)
        if out is None:
            out = tuple(_move(p, s, *k) for p, s, k in zip(self.props, states, kind, strict=True))
            self.cache[key] = out
        return out

    def end(self, states: tuple[int, ...], text: str) -> tuple[int, ...]:
        """After the decision: an answer still pending is a violation."""
        states = self.move(states, text)
        return tuple(_BAD if p.kind == "eventually" and s == 1 else s
                     for p, s in zip(self.props, states, strict=True))


Classes = dict[str, dict[str, tuple[str, ...]]]  # question -> answer in the graph -> what it stands for


def check_properties(props: list[Property], graph: Any, root: Any,
                     classes: Classes | None = None) -> dict[str, tuple[list[Step], bool]]:
    """Each violated property's witness (the shortest run's answers to the violation; for a
    response, to the decision), found on the product of the run graph with the monitors.
    `classes`: where the search answers a leaf whose outcome nothing reads with one outcome of
    each status, the outcomes each stands for (all are followed: a property may tell them apart)."""
    classes = classes or {}
    mon = _Monitors(props)
    first = (root, mon.start())
    parent: dict[Any, tuple[Any, Step | None]] = {first: (None, None)}
    found: dict[int, tuple[Any, Step | None]] = {}
    todo = deque([first])
    edges = graph.edges
    idle = getattr(graph, "idle", {})
    while todo and len(found) < len(props):
        node = todo.popleft()
        state, states = node
        if state in idle:  # the run may stay here idle tick after tick, answering alike
            _idle_ticks(mon, node, list(idle[state][0]), parent, found, todo)
        for edge in edges.get(state, ()):
            step = edge.step
            if step is None:
                answers: Any = (None,)
            else:
                same = classes.get(step[0])
                answers = (step,) if same is None else [(step[0], o) for o in same.get(step[1], (step[1],))]
            for answer in answers:
                after = states if answer is None else mon.move(states, answer)
                if edge.end:
                    after = mon.end(after, edge.target)
                for i, s in enumerate(after):
                    if s == _BAD and states[i] != _BAD and i not in found:
                        found[i] = (node, answer)
                if edge.end:
                    continue
                child = (edge.target, after)  # a violated monitor stays violated: one key
                if child not in parent:
                    parent[child] = (node, answer)
                    todo.append(child)
    out = {}
    for i, (node, step) in found.items():
        steps = [] if step is None else [step]
        idled = False
        while node is not None:
            node, back = parent[node]
            if isinstance(back, tuple) and back and isinstance(back[0], tuple):
                steps.extend(reversed(back))  # an idle tick's answers
                idled = True
            elif back is not None:
                steps.append(back)
        out[props[i].name] = (steps[::-1], idled)
    return out


def _idle_ticks(mon: _Monitors, node: Any, steps: list[Step], parent: dict[Any, Any],
                found: dict[int, Any], todo: deque[Any]) -> None:
    """A state where a tick may pass changing nothing but time left: its answers (a guard asked
    again, say) may come any number of times, so each monitor state they lead to is a successor
    of the same state, until they lead nowhere new. Their count is not bounded here by the
    time left; a witness that needs more idle ticks than the run allows fails its replay, and
    is then reported as not checked, never as a violation."""
    state, states = node
    if not any(mon.kind(s) is not None for s in steps):
        return  # nothing any property looks at happens in it
    here = node
    while True:
        after = states
        for step in steps:
            after = mon.move(after, step)
        nxt = (state, after)
        if nxt in parent:
            return
        parent[nxt] = (here, tuple(steps))
        todo.append(nxt)
        for i, s in enumerate(after):
            if s == _BAD and states[i] != _BAD and i not in found:
                found[i] = (nxt, None)
        here, states = nxt, after


def violates(prop: Property, answers: list[Step], ending: str) -> bool:
    """The monitor run over one whole run: its answers in order, then its decision."""
    mon = _Monitors([prop])
    states = mon.start()
    for step in answers:
        states = mon.move(states, step)
    return mon.end(states, ending)[0] == _BAD


def replay_property(setup: Any, prop: Property, steps: list[Step], idled: bool = False) -> PropertyResult:
    """A violation's witness on the real Runner: the same answers, then the Runner's own.
    `idled`: the witness repeats idle ticks, whose number the check does not bound."""
    oracle = ScriptedOracle(scripts_of(steps))
    res = setup.replay(oracle)
    ending = f"{res.decision.value}: {res.reason}"
    result = PropertyResult(prop.name, prop.text(), False,
                            [{"node": n, "outcome": o} for n, o in oracle.choices], ending)
    if not violates(prop, list(oracle.choices), ending):
        result.holds = None
        result.why = ("the witness repeats an idle tick (a call going on, its guard asked again) "
                      "more often than the call's time allows, and the check does not count "
                      "that time: not checked" if idled else
                      "internal error: the witness replays on the Runner without violating the "
                      "property; the state model missed something")
    return result


def unchecked(props: list[Property], why: str) -> list[PropertyResult]:
    return [PropertyResult(p.name, p.text(), None, why=why) for p in props]


def property_results(setup: Any, graph: Any, root: Any, classes: Classes | None = None,
                     over: Callable[[], Any] | None = None) -> list[PropertyResult]:
    """Every property of the tree over the run graph, each violation replayed on the Runner.
    `over`: a smaller graph (rooted at 0) whose paths include every run: a property holding on
    it holds (the run graph is only searched for the others, for an actual run)."""
    props: list[Property] = list(getattr(setup.spec, "properties", []) or [])
    if not props:
        return []
    if over is not None:
        maybe = check_properties(props, over(), 0, classes)
        left = [p for p in props if p.name in maybe]
        witnesses = check_properties(left, graph, root, classes) if left else {}
    else:
        witnesses = check_properties(props, graph, root, classes)
    return [replay_property(setup, p, *witnesses[p.name]) if p.name in witnesses
            else PropertyResult(p.name, p.text(), True) for p in props]
