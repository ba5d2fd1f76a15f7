"""The `properties:` block of a tree file: what every run must respect, as data.

Four patterns after Dwyer's specification patterns, over *events*: a leaf answering with an
outcome (`{node: grasp, outcome: done}`; `node` is a leaf id or a leaf type, `outcome` one
outcome or a list, left out: any) or the run's decision (`{decision: FINALIZE, reason: ...}`;
a `finalize` / `wait_clarify` leaf named by `node` stands for its decision and reason):

- absence: `never: E` (optionally `unless_after: A`, `reset_by: R`): E never happens, unless an
  A happened before it and no R since;
- precedence: `only_after: {event: E, after: A, reset_by: R}`: the same, written as a precedence;
- bounded existence: `at_most: {count: N, event: E, after: A}`: at most N events E (counted
  after the first A when `after` is given);
- response: `after: T, eventually: E`: every T is followed, before the run ends, by an E.

A, R and E may each be a list of events (any of them). Everything is checked against the tree
when it loads: a wrong key, node or outcome is one `file:line:col` error.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from bt_grasp.errors import did_you_mean
from bt_grasp.registry import Registry
from bt_grasp.spec.model import NodeSpec, Pos, looks_like_ref
from bt_grasp.spec.parse import fail
from bt_grasp.spec.yaml_pos import PosDict, PosList, kind_name, plain

__all__ = ["DECISIONS", "Event", "Property", "parse_properties"]

DECISIONS = {"finalize": "FINALIZE", "wait_clarify": "WAIT_CLARIFY"}
_EVENT_KEYS = ("node", "outcome", "decision", "reason")
_PATTERNS = {
    "never": ("never", "unless_after", "reset_by", "name"),
    "only_after": ("only_after", "name"),
    "at_most": ("at_most", "name"),
    "eventually": ("after", "eventually", "name"),
}
MAX_PROPERTIES = 64


@dataclass(frozen=True)
class Event:
    """Which events match: a leaf's answer (`leaves`, `outcomes` None: any) or an ending
    (`endings`: (decision, reason or None for any reason)). `text` is how it was written."""

    text: str
    leaves: frozenset[str] = frozenset()
    outcomes: frozenset[str] | None = None
    endings: frozenset[tuple[str, str | None]] = frozenset()

    def step(self, choice: str, outcome: str) -> bool:
        return choice in self.leaves and (self.outcomes is None or outcome in self.outcomes)

    def ending(self, text: str) -> bool:
        decision, _, reason = text.partition(": ")
        return (decision, reason) in self.endings or (decision, None) in self.endings


@dataclass(frozen=True)
class Property:
    """One property: `kind` is never (absence and precedence), at_most or eventually;
    `event` the event constrained (for eventually: the trigger), `allow` the events that allow
    it (never), arm the count (at_most) or answer the trigger (eventually); `reset` the events
    that take an allowance back; `count` the bound of at_most."""

    name: str
    kind: str
    event: tuple[Event, ...]
    allow: tuple[Event, ...] = ()
    reset: tuple[Event, ...] = ()
    count: int = 0
    pos: Pos = field(default=Pos("<unknown>", 0, 0), compare=False)
    # the property as the tree file wrote it (plain data): what spec/dump.py writes back, since
    # the events above are resolved (a leaf type to its leaves' ids) and cannot be unresolved
    written: Any = field(default=None, compare=False)

    def text(self) -> str:
        def words(events: tuple[Event, ...]) -> str:
            return " or ".join(e.text for e in events)
        if self.kind == "never":
            out = f"never {words(self.event)}"
            if self.allow:
                out += f" unless after {words(self.allow)}"
            return out + (f" (reset by {words(self.reset)})" if self.reset else "")
        if self.kind == "at_most":
            after = f" after {words(self.allow)}" if self.allow else ""
            return f"at most {self.count} x {words(self.event)}{after}"
        return f"after {words(self.event)}, eventually {words(self.allow)}"


class _Tree:
    """What events may name: leaf ids, leaf types, each leaf's outcomes, decision leaves."""

    def __init__(self, root: NodeSpec, registry: Registry) -> None:
        self.alphabet: dict[str, tuple[str, ...]] = {}
        self.by_type: dict[str, list[str]] = {}
        self.nodes: dict[str, NodeSpec] = {}
        for node in root.walk():
            nt = registry.get(node.type)
            if nt is None or nt.arity != "none":
                continue
            self.nodes[node.id] = node
            self.by_type.setdefault(node.type, []).append(node.id)
            self.alphabet[node.id] = tuple(nt.alphabet(node.params)) if nt.kind != "terminal" else ()


def _text(value: Any, what: str, pos: Pos) -> str:
    if not isinstance(value, str) or not value.strip():
        raise fail(f"{what} must be a non-empty string, got {kind_name(value)}", pos)
    return value


def _event(raw: Any, pos: Pos, tree: _Tree) -> Event:
    if not isinstance(raw, PosDict):
        raise fail(f"an event must be a mapping such as {{node: grasp, outcome: done}} or "
                   f"{{decision: FINALIZE, reason: ...}}, got {kind_name(raw)}", pos)
    for key in raw:
        if key not in _EVENT_KEYS:
            raise fail(f"unknown event key '{key}'{did_you_mean(str(key), _EVENT_KEYS)}; allowed: "
                       f"{', '.join(_EVENT_KEYS)}", raw.key_pos[key])
    if ("node" in raw) == ("decision" in raw):
        raise fail("an event names either node: (a leaf id or type) or decision: "
                   "(FINALIZE or WAIT_CLARIFY)", raw.pos)
    if "decision" in raw:
        decision = _text(raw["decision"], "decision", raw.val_pos["decision"])
        if decision not in DECISIONS.values():
            raise fail(f"decision must be FINALIZE or WAIT_CLARIFY, got {decision!r}",
                       raw.val_pos["decision"])
        if "outcome" in raw:
            raise fail("a decision has no outcome (give reason: to name one ending)", raw.key_pos["outcome"])
        reason = _text(raw["reason"], "reason", raw.val_pos["reason"]) if "reason" in raw else None
        text = f"{decision}" + (f" {reason!r}" if reason else "")
        return Event(text, endings=frozenset({(decision, reason)}))
    if "reason" in raw:
        raise fail("reason: goes with decision:, not node:", raw.key_pos["reason"])
    name = _text(raw["node"], "node", raw.val_pos["node"])
    ids = [name] if name in tree.nodes else tree.by_type.get(name, [])
    if not ids:
        known = sorted(set(tree.nodes) | set(tree.by_type))
        raise fail(f"no leaf or leaf type '{name}' in the tree{did_you_mean(name, known)}",
                   raw.val_pos["node"])
    terminal = [i for i in ids if not tree.alphabet[i]]
    if terminal:
        if len(terminal) != len(ids) or "outcome" in raw:
            raise fail(f"'{name}' is a decision leaf: name it alone, without outcome:", raw.val_pos["node"])
        endings = set()
        for i in ids:
            node = tree.nodes[i]
            reason = node.params.get("reason")
            if node.type not in DECISIONS or not isinstance(reason, str) or looks_like_ref(reason):
                raise fail(f"leaf '{i}' does not end with a fixed decision and reason; name the "
                           "ending by decision: and reason:", raw.val_pos["node"])
            endings.add((DECISIONS[node.type], reason))
        return Event(name, endings=frozenset(endings))
    outcomes = None
    if "outcome" in raw:
        given = raw["outcome"]
        opos = raw.val_pos["outcome"]
        items = list(given) if isinstance(given, PosList) else [given]
        allowed = {o for i in ids for o in tree.alphabet[i]}
        for k, item in enumerate(items):
            where = given.item_pos[k] if isinstance(given, PosList) else opos
            item = _text(item, "outcome", where)
            if item not in allowed:
                raise fail(f"'{name}' has no outcome {item!r}; its outcomes: "
                           f"{', '.join(sorted(allowed))}", where)
        outcomes = frozenset(items)
        text = f"{name} {'/'.join(items)}"
    else:
        text = name
    return Event(text, leaves=frozenset(ids), outcomes=outcomes)


def _events(raw: Any, pos: Pos, tree: _Tree) -> tuple[Event, ...]:
    """One event, or a non-empty list of them (any of them)."""
    if isinstance(raw, PosList):
        if not raw:
            raise fail("an empty list of events (give at least one)", pos)
        return tuple(_event(item, p, tree) for item, p in zip(raw, raw.item_pos, strict=True))
    return (_event(raw, pos, tree),)


def _fields(raw: Any, pos: Pos, keys: tuple[str, ...], what: str) -> PosDict:
    if not isinstance(raw, PosDict):
        raise fail(f"{what} must be a mapping, got {kind_name(raw)}", pos)
    for key in raw:
        if key not in keys:
            raise fail(f"unknown key '{key}' in {what}{did_you_mean(str(key), keys)}; allowed: "
                       f"{', '.join(keys)}", raw.key_pos[key])
    return raw


def _need(raw: PosDict, key: str, what: str) -> Any:
    if key not in raw:
        raise fail(f"{what} needs '{key}:'", raw.pos)
    return raw[key]


def _one(raw: Any, pos: Pos, n: int, tree: _Tree) -> Property:
    if not isinstance(raw, PosDict):
        raise fail(f"a property must be a mapping (never:, only_after:, at_most: or after: + "
                   f"eventually:), got {kind_name(raw)}", pos)
    kinds = [k for k in _PATTERNS if k in raw]
    if len(kinds) != 1:
        raise fail("a property has exactly one of never:, only_after:, at_most:, eventually: "
                   f"(got {', '.join(kinds) or 'none'})", raw.pos)
    kind = kinds[0]
    _fields(raw, raw.pos, _PATTERNS[kind], f"a {kind} property")
    name = _text(raw["name"], "name", raw.val_pos["name"]) if "name" in raw else f"{kind}_{n}"
    val = raw.val_pos
    if kind == "never":
        allow = _events(raw["unless_after"], val["unless_after"], tree) if "unless_after" in raw else ()
        reset = _events(raw["reset_by"], val["reset_by"], tree) if "reset_by" in raw else ()
        if reset and not allow:
            raise fail("reset_by: takes back what unless_after: allows; give unless_after: too",
                       raw.key_pos["reset_by"])
        return Property(name, "never", _events(raw["never"], val["never"], tree), allow, reset,
                        pos=raw.pos)
    if kind == "only_after":
        body = _fields(raw["only_after"], val["only_after"], ("event", "after", "reset_by"), "only_after")
        return Property(name, "never", _events(_need(body, "event", "only_after"), body.pos, tree),
                        _events(_need(body, "after", "only_after"), body.pos, tree),
                        _events(body["reset_by"], body.val_pos["reset_by"], tree)
                        if "reset_by" in body else (), pos=raw.pos)
    if kind == "at_most":
        body = _fields(raw["at_most"], val["at_most"], ("count", "event", "after"), "at_most")
        count = _need(body, "count", "at_most")
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 1000:
            raise fail(f"count must be an integer 0..1000, got {kind_name(count)}", body.val_pos["count"])
        after = _events(body["after"], body.val_pos["after"], tree) if "after" in body else ()
        return Property(name, "at_most", _events(_need(body, "event", "at_most"), body.pos, tree),
                        after, count=count, pos=raw.pos)
    trigger = _need(raw, "after", "an eventually property")
    return Property(name, "eventually", _events(trigger, val["after"], tree),
                    _events(raw["eventually"], val["eventually"], tree), pos=raw.pos)


def parse_properties(raw: Any, pos: Pos, root: NodeSpec, registry: Registry) -> list[Property]:
    """The `properties:` list, checked against the tree (includes expanded)."""
    if raw is None:
        return []
    if not isinstance(raw, PosList):
        raise fail(f"properties must be a list, got {kind_name(raw)}", pos)
    if len(raw) > MAX_PROPERTIES:
        raise fail(f"more than {MAX_PROPERTIES} properties", pos)
    tree = _Tree(root, registry)
    out = [replace(_one(item, p, n, tree), written=plain(item))
           for n, (item, p) in enumerate(zip(raw, raw.item_pos, strict=True), 1)]
    seen: set[str] = set()
    for prop, p in zip(out, raw.item_pos, strict=True):
        if prop.name in seen:
            raise fail(f"two properties are named {prop.name!r} (names must be unique)", p)
        seen.add(prop.name)
    return out
