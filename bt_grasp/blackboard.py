"""A per-episode blackboard with change tracking.

bt_grasp keeps its own blackboard instead of py_trees' process-global one so that episodes,
benchmark workers and the verifier's many re-runs never share state.
"""

from __future__ import annotations

import re
from collections.abc import ItemsView
from typing import Any

# A blackboard reference: "{goal.object}", "{grasp.label}", "{target}". Segments are non-empty;
# "-" and "/" are allowed because node ids (which may carry an include prefix "inc/") appear in
# keys such as "{inc/grasp_1.trial_id}".
_SEGMENT = r"[A-Za-z_][\w\-/]*"
KEY_PATTERN = rf"{_SEGMENT}(?:\.[\w\-/]+)*"
REF_RE = re.compile(rf"^\{{({KEY_PATTERN})\}}$")
KEY_RE = re.compile(rf"^{KEY_PATTERN}$")
_LENIENT_REF = re.compile(r"^\{([A-Za-z_][\w.\-/]*)\}$")


def ref_key(value: Any, strict: bool = False) -> str | None:
    """'{goal.object}' -> 'goal.object'; anything else -> None. `strict`: only the spelling a tree
    file must use (REF_RE: no surrounding spaces, no empty key segment), as the loader checks
    it; otherwise what a run binds, surrounding spaces ignored."""
    if isinstance(value, str):
        m = REF_RE.match(value) if strict else _LENIENT_REF.match(value.strip())
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
