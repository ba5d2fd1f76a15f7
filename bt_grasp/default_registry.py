"""The default registry: every built-in node type, the BT.CPP interop types and installed plug-ins.

Assembling the registry is its own job so that the table (bt_grasp.registry) and the modules that
declare node types (bt_grasp.builtin_types, bt_grasp.interop.nodes) never import each other back.
"""

from __future__ import annotations

from bt_grasp.builtin_types import register_all
from bt_grasp.interop.nodes import register_interop_types
from bt_grasp.registry import Registry

_DEFAULT: Registry | None = None


def default_registry() -> Registry:
    """The registry with every built-in node type and installed plug-ins (built once, shared)."""
    global _DEFAULT
    if _DEFAULT is None:
        reg = Registry()
        register_all(reg)
        register_interop_types(reg)
        reg.load_entry_points()
        _DEFAULT = reg
    return _DEFAULT
