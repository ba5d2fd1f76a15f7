"""The bt_grasp import graph has no circles.

Every import counts, wherever it stands: module level, inside a function, and under
``if TYPE_CHECKING:``. A lazy or typing-only import still ties two modules together (a reader,
a type checker and a refactoring must follow it), so a circle through one is a design knot even
when it imports fine today.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = "bt_grasp"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in the tree, at any depth (functions, ``if TYPE_CHECKING:``)."""
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _needed(name: str) -> list[str]:
    """Importing ``a.b.c`` runs ``a/__init__`` and ``a.b/__init__`` before ``a.b.c``.

    This holds for an importer inside ``a.b`` too, so a package ``__init__`` that imports a
    submodule which imports a sibling is a circle: keep such ``__init__`` files thin.
    """
    return [*_ancestors(name), name]


def _targets(node: ast.Import | ast.ImportFrom, package: str, modules: set[str]) -> set[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            anchor = parts[: len(parts) - node.level + 1]
            base = ".".join(anchor + ([base] if base else []))
        names = [base]
        names += [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
    return {dep for name in names if name.split(".")[0] == PACKAGE for dep in _needed(name)}


def import_graph() -> nx.DiGraph:
    """Edges module → module it needs imported, for every module of the package."""
    files = sorted(ROOT.rglob("*.py"))
    modules = {_module_name(f) for f in files}
    graph = nx.DiGraph()
    for path in files:
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        graph.add_node(module)
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for target in _targets(node, package, modules):
                if target != module and target in modules:
                    graph.add_edge(module, target)
    return graph


def _cycles(graph: nx.DiGraph) -> list[str]:
    """Each circle as ``a → b → … → a``: for every import edge inside a strongly connected
    component, the shortest way back, so every edge that ties the knot is shown once."""
    lines: set[str] = set()
    for component in nx.strongly_connected_components(graph):
        if len(component) < 2:
            continue
        sub = graph.subgraph(component)
        for u, v in sub.edges:
            path = [u, *nx.shortest_path(sub, v, u)]
            start = path.index(min(path[:-1]))
            ring = path[start:-1] + path[:start]
            lines.add(" → ".join([*ring, ring[0]]))
    return sorted(lines)


def test_graph_has_every_module_and_its_lazy_imports() -> None:
    graph = import_graph()
    assert set(graph.nodes) == {_module_name(f) for f in ROOT.rglob("*.py")}
    assert graph.has_edge("bt_grasp.default_registry", "bt_grasp.interop.nodes")
    assert graph.has_edge("bt_grasp.default_registry", "bt_grasp.interop")  # the package runs first
    assert graph.has_edge("bt_grasp.mcp_server.session", "bt_grasp.runner")  # imported inside a method
    assert graph.has_edge("bt_grasp.runner", "bt_grasp.drivers.base")  # under `if TYPE_CHECKING:`


def test_cycle_report_names_each_circle() -> None:
    graph = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    assert _cycles(graph) == ["a → b → c → a"]
    graph.add_edge("b", "a")
    assert _cycles(graph) == ["a → b → a", "a → b → c → a"]


def test_detects_function_level_typing_only_and_relative_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import sibling\n"
        "if TYPE_CHECKING:\n"
        "    from bt_grasp.typing_only import T\n"
        "def f():\n"
        "    from ..other.deep import x\n"
        "    import bt_grasp.lazy.mod\n"
    )
    modules = {"bt_grasp.pkg.sibling", "bt_grasp.other.deep", "bt_grasp.lazy.mod", "bt_grasp.typing_only"}
    found: set[str] = set()
    for node in _imports(ast.parse(source)):
        found |= _targets(node, "bt_grasp.pkg", modules)
    assert found == {"bt_grasp", "bt_grasp.pkg", "bt_grasp.pkg.sibling", "bt_grasp.typing_only",
                     "bt_grasp.other", "bt_grasp.other.deep", "bt_grasp.lazy", "bt_grasp.lazy.mod"}


def test_no_import_cycles() -> None:
    cycles = _cycles(import_graph())
    assert not cycles, "import circles:\n" + "\n".join(cycles)
