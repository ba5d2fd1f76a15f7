"""Node types as data: name, kind, typed ports, child arity and outcome alphabet.

The spec validator, the compiler, the JSON Schema export, the BT.CPP exporter and the verifier all
read this one table, so a node type is declared once. Leaves register their class here
(`register_leaf`); user node types come from `module:Class` or the `bt_grasp.nodes` entry points.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from bt_grasp.errors import UserError, did_you_mean

Kind = Literal["perception", "primitive", "watchdog", "condition", "terminal", "composite",
               "decorator", "action"]
Arity = Literal["none", "one", "many", "cases"]
PortType = Literal["str", "int", "float", "bool", "label", "key", "any", "list"]


@dataclass(frozen=True)
class Port:
    """A node parameter. `key` ports name a blackboard key the node writes ("{grasp.label}")."""

    name: str
    type: PortType = "str"
    required: bool = False
    default: Any = None
    doc: str = ""
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class KeyUse:
    """A blackboard entry a leaf reads or writes that none of its port values names.

    Leaves write sub-entries of a key port (`{result}.best`), diagnostics under their id
    (`{id}.reason`) or fixed entries (`scene`). BT.CPP only lets a node touch entries through
    remapped ports, so the exporter declares each of these as a port of its own and remaps it
    to the entry: `key` is a template over the node's port keys and `{id}`.
    """

    port: str                                   # the port name it is declared as in BT.CPP
    key: str                                    # "{result}.best", "{id}.reason" or "scene"
    direction: Literal["input", "output"] = "output"  # BT.CPP's XSD has no inout_port
    doc: str = ""


@dataclass
class NodeType:
    """Everything bt_grasp knows about one node type."""

    name: str
    kind: Kind
    ports: dict[str, Port] = field(default_factory=dict)
    arity: Arity = "none"
    outcomes: tuple[str, ...] = ()
    doc: str = ""
    counts_as_action: bool = False
    perception: bool = False  # counts toward the perception-streak guard
    outcome_port: str | None = None  # the `key` port this leaf writes its outcome name to
    # Leaves: the leaf class, called as cls(node_id, params, ctx).
    # Composites/decorators: a callable (node_id, params, children, ctx) -> py_trees Behaviour,
    # where children are the already-built child behaviours (decorators get one).
    factory: Callable[..., Any] | None = None
    # Optional hook: (params) -> alphabet, when the outcomes depend on parameters.
    outcomes_for: Callable[[dict[str, Any]], tuple[str, ...]] | None = None
    # Blackboard entries the leaf reads or writes besides its port values (see KeyUse).
    keys: tuple[KeyUse, ...] = ()
    # Leaves: the most ticks one call may span (1: it ends in the tick that starts it). A motion
    # still running at the last of them is cancelled as timed out, so the verifier's tick bound
    # holds at run time too.
    max_ticks: int = 1

    def alphabet(self, params: dict[str, Any]) -> tuple[str, ...]:
        return self.outcomes_for(params) if self.outcomes_for else self.outcomes


class Registry:
    """Name -> NodeType. One default instance holds the built-ins; tests may build their own."""

    def __init__(self) -> None:
        self._types: dict[str, NodeType] = {}

    def add(self, node_type: NodeType, replace: bool = False) -> NodeType:
        if node_type.name in self._types and not replace:
            raise ValueError(f"node type {node_type.name!r} is already registered")
        self._types[node_type.name] = node_type
        return node_type

    def get(self, name: str) -> NodeType | None:
        return self._types.get(name)

    def require(self, name: str, file: str | None = None, line: int | None = None,
                col: int | None = None) -> NodeType:
        nt = self._types.get(name)
        if nt is None:
            raise UserError(f"unknown node type '{name}'{did_you_mean(name, self._types)}",
                            file, line, col)
        return nt

    def names(self) -> list[str]:
        return sorted(self._types)

    def __contains__(self, name: str) -> bool:
        return name in self._types

    def __iter__(self):
        return iter(self._types.values())

    def all_outcomes(self) -> set[str]:
        out: set[str] = set()
        for nt in self._types.values():
            out.update(nt.outcomes)
        return out

    def load_user_class(self, ref: str, folder: Path | None = None) -> NodeType:
        """Register a user leaf from 'module:Class' (the class carries NODE_TYPE: NodeType).

        The module comes from the Python path or, failing that, from `folder` (the tree file's own
        folder), so a module written beside a tree needs no PYTHONPATH."""
        module_name, _, attr = ref.partition(":")
        if not module_name or not attr:
            raise UserError(f"node class reference '{ref}' must look like 'package.module:Class'")
        try:
            cls = getattr(_import_user_module(module_name, folder), attr)
        except ModuleNotFoundError as exc:
            where = f"beside the tree ({folder}) nor " if folder is not None else ""
            raise UserError(f"cannot load node class '{ref}': {exc} {where}on the Python path "
                            f"(write {module_name.partition('.')[0]}.py beside the tree or install it)") from None
        except (ImportError, AttributeError) as exc:
            raise UserError(f"cannot load node class '{ref}': {exc}") from None
        node_type = getattr(cls, "NODE_TYPE", None)
        if not isinstance(node_type, NodeType):
            raise UserError(f"'{ref}' has no NODE_TYPE = NodeType(...) attribute (a complete node: "
                            "docs/writing-nodes.md, or python -m bt_grasp.examples DIR)")
        if node_type.factory is None:
            node_type.factory = cls
        return self.add(node_type, replace=True)

    def load_entry_points(self) -> None:
        """Node types of installed plug-ins; a broken one is one UserError naming its entry point."""
        from bt_grasp.plugins import NODES, discover, load_entry_point

        for ep in discover(NODES).values():
            load_entry_point(ep)
            try:
                self.load_user_class(ep.value)
            except UserError as exc:
                raise UserError(f"plug-in {NODES} '{ep.name}': {exc.message}") from None


def _import_user_module(name: str, folder: Path | None) -> ModuleType:
    """`name` from the Python path, else from `folder` when the module's file is there. Only that
    folder is searched, and only for this import: a tree's nodes never shadow installed modules."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        top = name.partition(".")[0]
        beside = folder is not None and ((folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file())
        if exc.name != top or not beside:
            raise
    where = str(folder)
    sys.path.insert(0, where)
    try:
        return importlib.import_module(name)
    finally:
        if where in sys.path:
            sys.path.remove(where)
