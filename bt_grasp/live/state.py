"""The state of a run as trace records tell it, folded one record at a time.

`run --live` folds the records the runner hands out, `watch` the lines of a trace file, and
`dot --tick` the ticks up to the one it draws: the same fold, so all three agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bt_grasp.structure import iter_structure
from bt_grasp.trace_reader import clock_of

LEDGER_KEYS = ("actions", "perception_streak", "retry_starts", "scoped_actions")


@dataclass
class Running:
    """A node RUNNING since the start of tick `since_tick`, when the clock read `since_clock`."""

    since_tick: int
    since_clock: float


@dataclass
class Scope:
    """A named budget: `kind` "retry" (child starts) or "budget" (actions), `limit` per episode."""

    name: str
    kind: str
    limit: int


@dataclass
class LiveState:
    """What a viewer knows after the records so far. Plain data; `fold` is the only writer."""

    header: dict[str, Any] = field(default_factory=dict)
    tick: int = 0
    clock: float = 0.0
    status: dict[str, str] = field(default_factory=dict)      # node -> status this tick (visited only)
    running: dict[str, Running] = field(default_factory=dict)  # node -> since when, while RUNNING
    halted: dict[str, str] = field(default_factory=dict)       # node -> why, preempted this tick
    last_event: dict[str, Any] | None = None
    ledger: dict[str, Any] = field(default_factory=dict)       # counters, as far as the trace says
    final: dict[str, Any] | None = None
    leaves: frozenset[str] = frozenset()
    scopes: list[Scope] = field(default_factory=list)
    records: int = 0

    @property
    def structure(self) -> dict[str, Any] | None:
        return self.header.get("structure")

    @property
    def budgets(self) -> dict[str, Any]:
        return self.header.get("budgets") or {}

    def fold(self, record: dict[str, Any]) -> None:
        """Take one trace record (header, tick or final) into account."""
        self.records += 1
        kind = record.get("type")
        if kind == "header":
            if self.tick or self.final:  # a new run starts (the file was written again)
                self.__dict__.update(LiveState(records=self.records).__dict__)
            self._header(record)
        elif kind == "tick":
            self._tick(record)
        elif kind == "final":
            self.final = record

    def _header(self, record: dict[str, Any]) -> None:
        # Header lines before the first tick refine one another, as in read_trace.
        self.header = {**self.header, **record}
        if self.structure:
            self.leaves, self.scopes = _leaves_and_scopes(self.structure)

    def _tick(self, record: dict[str, Any]) -> None:
        started = self.clock  # the clock when this tick began: the end of the last one
        self.tick = int(record["tick"])
        self.clock = clock_of(record, self.clock)
        self.status = dict(record["visited"])
        # A leaf preempted while RUNNING (a parent's halt, a deadline) was visited RUNNING before
        # its parent stopped it; the leaf writes `<id>.halted`, so it is not running any more.
        self.halted = {key[:-7]: str(value) for key, value in (record.get("blackboard") or {}).items()
                       if key.endswith(".halted")}
        for node in self.halted:
            if node in self.status:
                self.status[node] = "INVALID"
        # A node visited with another status earlier in this tick (a retry started its child
        # again after a failure) started running anew in this tick.
        ended = {node for node, status in record["visited"] if status != "RUNNING"} | set(self.halted)
        running = {}
        for node, status in self.status.items():
            if status == "RUNNING":
                kept = self.running.get(node) if node not in ended else None
                running[node] = kept or Running(self.tick, started)
        self.running = running
        events = record.get("events") or []
        if events:
            self.last_event = events[-1]
        for key, value in (record.get("ledger") or {}).items():
            self.ledger[key] = value

    # -- derived views ------------------------------------------------------------------------
    def running_leaves(self) -> dict[str, tuple[float, int]]:
        """RUNNING leaves -> (logical seconds, ticks) since they started running."""
        return {node: (self.clock - r.since_clock, self.tick - r.since_tick + 1)
                for node, r in self.running.items() if node in self.leaves}

    def budgets_left(self) -> list[tuple[str, int | None, int]]:
        """(name, left or None when the trace does not say, limit) for every budget known."""
        b, led = self.budgets, self.ledger
        known = bool(led)
        out: list[tuple[str, int | None, int]] = []
        for name, key in (("actions", "actions"), ("perception streak", "perception_streak")):
            if isinstance(b.get(key), int):
                used = led.get(key) if known else None
                out.append((name, None if used is None else b[key] - used, b[key]))
        if isinstance(b.get("max_ticks"), int):
            out.append(("ticks", b["max_ticks"] - self.tick, b["max_ticks"]))
        for scope in self.scopes:
            counts = led.get("retry_starts" if scope.kind == "retry" else "scoped_actions")
            used = None if counts is None else counts.get(scope.name, 0)
            out.append((f"{scope.kind} {scope.name}", None if used is None else scope.limit - used,
                        scope.limit))
        return out


def _leaves_and_scopes(structure: dict[str, Any]) -> tuple[frozenset[str], list[Scope]]:
    leaves, scopes, seen = set(), [], set()
    for _, _, node in iter_structure(structure):
        if not (node.get("children") or node.get("cases") or "default" in node):
            leaves.add(node["id"])
        params = node.get("params") or {}
        limit_key = {"retry": "attempts", "budget": "actions"}.get(node["type"])
        if limit_key and isinstance(params.get(limit_key), int):
            name = str(params.get("scope") or node["id"])
            if (node["type"], name) not in seen:
                seen.add((node["type"], name))
                scopes.append(Scope(name, node["type"], params[limit_key]))
    return frozenset(leaves), scopes


def state_at(header: dict[str, Any], ticks: list[dict[str, Any]], tick: int | None = None) -> LiveState:
    """The state after tick `tick` (the last one when None) of a trace read back."""
    state = LiveState()
    state.fold(header)
    for rec in ticks:
        if tick is not None and rec["tick"] > tick:
            break
        state.fold(rec)
    return state
