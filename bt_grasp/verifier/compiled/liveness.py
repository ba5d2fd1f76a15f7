"""Which blackboard labels can still be read before they are overwritten.

The merge key (state.RunState.key) keeps a label only while some reader can still see today's
value. A reader is *guarded* by an earlier sibling on its path that certainly writes the label
before the reader runs: in a sequence, a child whose every successful activation writes it; in a
selector, a child whose every failed activation writes it (the next child only runs after it
failed). A guard holds while its composite is not already past the writer. A label whose every
reader is guarded is dead: two runs that differ only there have the same future.

"Certainly writes" is judged per activation, from the node types:
- a bt_grasp leaf writes its outcome port whenever it ends with an outcome; it ends without one
  only when a Decision is already set, or (action leaves) when a scoped `budget` is spent;
- a sequence that succeeds ran every child to success; a selector that fails ran every child to
  failure; inverter / force_success / force_failure pass their child's ending on.
Failures are only trusted in *plain* trees (bt_grasp nodes only): there, nothing that happens
after a Decision costs anything or asks the oracle, so a stale label read then changes nothing.
BT.CPP opaque leaves still start after a Decision, so in trees with them only successes count.
"""

from __future__ import annotations

from typing import Any

from py_trees.behaviour import Behaviour
from py_trees.common import Status

from bt_grasp.blackboard import ref_key
from bt_grasp.composites import ActionBudget, BudgetedRetry, LogicalTimeout, Repeat, Switch
from bt_grasp.nodes.base import Leaf
from bt_grasp.py_trees_controls import ForceFailure, ForceSuccess, Inverter, Selector, Sequence

# (sequence or selector, index of the guarding child, the guarding child is a leaf)
Guard = tuple[Any, int, bool]

_PLAIN_CONTROLS = (Sequence, Selector, Inverter, ForceSuccess, ForceFailure, BudgetedRetry, Repeat,
                   LogicalTimeout, ActionBudget, Switch)


def reads(node: Behaviour) -> set[str]:
    """Blackboard keys a node reads (input ports holding "{key}", a switch's label)."""
    if isinstance(node, Switch):
        return {node.key}
    nt = getattr(node, "node_type", None)
    params = getattr(node, "params", None)
    if nt is None or params is None:
        return set()
    out = set()
    for name, port in nt.ports.items():
        key = ref_key(params.get(name, port.default))
        if key is not None and port.type != "key":
            out.add(key)
    return out


def _is_plain(node: Behaviour) -> bool:
    if type(node).__module__.startswith("bt_grasp.interop"):
        return False
    return isinstance(node, (Leaf, *_PLAIN_CONTROLS))


class Liveness:
    """Per read key, the guards of each of its readers; `dead()` checks them in a run's state."""

    def __init__(self, nodes: list[Behaviour], read: set[str]) -> None:
        self.plain = all(_is_plain(n) for n in nodes)
        self.guards: dict[str, list[list[Guard]]] = {}
        # every reader of every read key with its guards (none: it can always see the value)
        self.readers: dict[str, list[tuple[Behaviour, list[Guard]]]] = {}
        readers: dict[str, list[Behaviour]] = {}
        for node in nodes:
            for key in reads(node) & read:
                readers.setdefault(key, []).append(node)
        for key, rs in readers.items():
            per_reader = [self._guards_of(r, key) for r in rs]
            self.readers[key] = list(zip(rs, per_reader, strict=True))
            if all(per_reader):  # a key with an unguarded reader is always live
                self.guards[key] = per_reader

    def _guards_of(self, reader: Behaviour, key: str) -> list[Guard]:
        out: list[Guard] = []
        cur = reader
        while cur.parent is not None:
            parent = cur.parent
            how = "s" if isinstance(parent, Sequence) else "f" if isinstance(parent, Selector) else None
            if how is not None:
                below = parent.children.index(cur)
                for j in range(below):
                    child = parent.children[j]
                    if self.writes(child, key, how):
                        out.append((parent, j, isinstance(child, Leaf)))
            cur = parent
        return out

    def writes(self, node: Behaviour, key: str, how: str) -> bool:
        """Does every activation of `node` ending SUCCESS ("s") / FAILURE ("f") write `key`?"""
        if isinstance(node, Leaf):
            if key not in leaf_writes(node):
                return False
            return how == "s" or (self.plain and not (node.node_type.counts_as_action
                                                      and _budgeted(node)))
        if isinstance(node, (Sequence, Selector)):
            # ending "s" in a sequence (or "f" in a selector): every child passed; the other
            # ending: the first children passed, then child m stopped it
            passing = "s" if isinstance(node, Sequence) else "f"
            if how == passing:
                return any(self.writes(c, key, passing) for c in node.children)
            if not self.plain:
                return False
            wrote = False  # a child before the one that stopped it wrote the key on passing
            for child in node.children:
                if not (wrote or self.writes(child, key, how)):
                    return False
                wrote = wrote or self.writes(child, key, passing)
            return True
        if not self.plain:
            return False
        if isinstance(node, Inverter):
            return self.writes(node.decorated, key, "f" if how == "s" else "s")
        if isinstance(node, (ForceSuccess, ForceFailure)):
            if how != ("s" if isinstance(node, ForceSuccess) else "f"):
                return False
            return self.writes(node.decorated, key, "s") and self.writes(node.decorated, key, "f")
        return False

    def dead(self, key: str, active: frozenset[int], index: dict[str, int]) -> bool:
        """True when no reader of `key` can run before a guard overwrites it. `active`: the
        indices of the nodes on the path of the tick in progress (their position is live)."""
        guards = self.guards.get(key)
        if guards is None:
            return False
        return all(any(_holds(g, active, index) for g in per_reader) for per_reader in guards)


def _holds(guard: Guard, active: frozenset[int], index: dict[str, int]) -> bool:
    """The guard's composite has not passed its writing child yet (a leaf still being asked has
    not written yet; a composite child in progress might have, so it does not count)."""
    comp, j, leaf = guard
    if index[comp.name] in active:
        at = comp.index
    elif comp.status is Status.RUNNING and comp.memory:
        child = comp.current_child
        if child is None:
            return False
        at = comp.children.index(child)
    else:
        return True  # it starts afresh from its first child
    return at < j or (at == j and leaf)


def leaf_writes(leaf: Leaf) -> set[str]:
    """Keys a bt_grasp leaf writes whenever it ends with an outcome (its outcome port; the
    Watchdog with a literal `semantic: true` also writes `<label>.semantic`, "n/a" or a verdict)."""
    nt = leaf.node_type
    if type(leaf).update is not Leaf.update or not nt.outcome_port:
        return set()
    out = {leaf.out_key(nt.outcome_port)}
    if nt.name == "evaluate_grasp" and leaf.params.get("semantic") is True:
        out.add(f"{leaf.out_key('label')}.semantic")
    return out


def _budgeted(node: Behaviour) -> bool:
    cur = node.parent
    while cur is not None:
        if isinstance(cur, ActionBudget):
            return True
        cur = cur.parent
    return False
