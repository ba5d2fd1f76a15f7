"""The validated, position-carrying form of a tree file.

Everything downstream (compiler, verifier, exporters, CLI) consumes these dataclasses rather than
raw YAML, so that any later error can still point at `file:line:col` in the user's file.
Positions are excluded from equality: two trees are equal when their structure and values are,
which is what round-trip tests and include-expanded views need.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.blackboard import KEY_PATTERN as KEY_PATTERN  # re-exported for older imports
from bt_grasp.blackboard import KEY_RE as KEY_RE
from bt_grasp.blackboard import REF_RE as REF_RE
from bt_grasp.blackboard import ref_key as _ref_key


def ref_key(value: Any) -> str | None:
    """blackboard.ref_key(value, strict=True), kept for older imports."""
    return _ref_key(value, strict=True)


def looks_like_ref(value: Any) -> bool:
    """True for strings the user meant as a blackboard reference, well-formed or not:
    braced ("{goal object}"), or a single word with one brace ("{goal.object")."""
    if not isinstance(value, str):
        return False
    if value.startswith("{") and value.endswith("}"):
        return True
    return (value.startswith("{") or value.endswith("}")) and not any(c.isspace() for c in value)


@dataclass(frozen=True)
class Pos:
    """A 1-based position in a source file."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass
class NodeSpec:
    """One node of a tree after validation, default filling and include expansion.

    `params` holds every port of the node type (defaults filled in, None for optional ports
    without a default); blackboard references stay as "{a.b}" strings for the compiler to bind.
    """

    type: str
    id: str
    params: dict[str, Any] = field(default_factory=dict)
    children: list[NodeSpec] = field(default_factory=list)
    cases: dict[str, NodeSpec] = field(default_factory=dict)
    default: NodeSpec | None = None
    pos: Pos = field(default=Pos("<unknown>", 0, 0), compare=False, repr=False)
    param_pos: dict[str, Pos] = field(default_factory=dict, compare=False, repr=False)
    # Extras beyond the shared API (all excluded from equality):
    id_given: bool = field(default=True, compare=False, repr=False)  # False: "<type>_<n>" generated
    id_pos: Pos | None = field(default=None, compare=False, repr=False)
    case_pos: dict[str, Pos] = field(default_factory=dict, compare=False, repr=False)

    def walk(self) -> Iterator[NodeSpec]:
        """Pre-order: the node, its children, then its cases (in file order), then default."""
        yield self
        for child in self.children:
            yield from child.walk()
        for case in self.cases.values():
            yield from case.walk()
        if self.default is not None:
            yield from self.default.walk()

    def sub_nodes(self) -> list[NodeSpec]:
        """Direct sub-nodes in walk order (children, cases, default)."""
        out = list(self.children) + list(self.cases.values())
        if self.default is not None:
            out.append(self.default)
        return out


@dataclass
class Budgets:
    """Episode-wide budgets; literal integers so the verifier's bounds are static.

    `max_ticks` None: not given, the tick cap in force is the tree's own structural bound
    (bt_grasp/tick_budget.py), so a tree whose retries and budgets bound it proves.
    """

    actions: int = 10
    perception_streak: int = 5
    max_ticks: int | None = None


@dataclass
class TreeSpec:
    """A whole tree file, includes expanded."""

    name: str
    description: str
    goal: dict[str, Any]
    budgets: Budgets
    root: NodeSpec
    # Where the tree came from; not part of equality (a dump reloaded from text equals the
    # original, includes expanded).
    file: str = field(default="<string>", compare=False)
    source: str = field(default="", compare=False, repr=False)
    includes: list[str] = field(default_factory=list, compare=False)
    user_nodes: list[str] = field(default_factory=list)
    # The registry the tree was validated against (a copy holding `user_nodes` when there are
    # any), so the compiler builds exactly the types that were checked.
    registry: Any = field(default=None, compare=False, repr=False)
    # What every run must respect (spec/properties.py: Property), checked by `verify`.
    properties: list[Any] = field(default_factory=list, compare=False)

    def node(self, node_id: str) -> NodeSpec | None:
        """The node with this id, or None."""
        for n in self.root.walk():
            if n.id == node_id:
                return n
        return None
