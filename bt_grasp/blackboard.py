"""A per-episode blackboard with change tracking.

bt_grasp keeps its own blackboard instead of py_trees' process-global one so that episodes,
benchmark workers and the verifier's many re-runs never share state.
"""

from __future__ import annotations

import re
from collections.abc import ItemsView
from typing import Any

_REF = re.compile(r"^\{([A-Za-z_][\w.\-/]*)\}$")


def ref_key(value: Any) -> str | None:
    """'{goal.object}' -> 'goal.object'; anything else -> None."""
    if isinstance(value, str):
        m = _REF.match(value.strip())
        if m:
            return m.group(1)
    return None


class Blackboard:
    """Flat dotted keys ("grasp.label") to values; remembers what changed since the last drain."""

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(initial or {})
        self._changed: dict[str, Any] = dict(self._data)

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def set(self, key: str, value: Any) -> None:
        self._data[key] = value
        self._changed[key] = value

    def resolve(self, value: Any) -> Any:
        """A port value: blackboard reference -> its current value, literal -> itself."""
        key = ref_key(value)
        return self._data.get(key) if key is not None else value

    def drain_changes(self) -> dict[str, Any]:
        changed, self._changed = self._changed, {}
        return changed

    def items(self) -> ItemsView[str, Any]:
        return self._data.items()
