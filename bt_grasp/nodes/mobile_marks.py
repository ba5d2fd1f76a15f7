"""The markers the mobile leaves share: where they are kept, when one is stale, how they are shown
to the user and named as overlay files.

Markers are the integer ids of the last Set-of-Mark overlay of their kind; the mapping lives in
ctx.memory (with the located objects) and, JSON-friendly, on the blackboard (`objects.marks`,
`receptacles.marks`). A marker that is unknown, or was drawn before the robot last moved, is the
outcome `stale_marker` — never an exception — so trees can route on it.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.mobile.som import Mark
from bt_grasp.mobile.user import SeenItem


def _png_name(node_id: str, tick: int) -> str:
    """Overlay file name: included node ids contain '/', which must not become folders."""
    return f"{node_id.replace('/', '__')}_t{tick}.png"


def _view(ctx: Any) -> int:
    return ctx.memory.view


def _marks(ctx: Any, kind: str) -> dict[int, Mark]:
    return ctx.memory.marks.setdefault(kind, {})


def _lookup(ctx: Any, kind: str, marker: Any) -> tuple[Mark | None, str]:
    """(mark, "") or (None, why it is stale/unknown)."""
    try:
        mid = int(marker)
    except (TypeError, ValueError):
        return None, f"not a marker id: {marker!r}"
    mark = _marks(ctx, kind).get(mid)
    if mark is None:
        return None, f"unknown {kind} marker {mid}"
    if mark.view != _view(ctx):
        return None, f"{kind} marker {mid} was drawn before the robot moved"
    return mark, ""


def _seen(marks: dict[int, Mark]) -> list[SeenItem]:
    """What the user is shown: each mark's description, image position and mask (the overlay)."""
    return [SeenItem(m.marker, f"a {m.name}", None, m.point2d, m.attributes.get("colour"), m.attributes.get("category"),
                     None, getattr(m.located, "mask", None), m.observation) for m in marks.values()]


def inventory_text(marks: dict[int, Mark]) -> str:
    return ", ".join(f"{k}: a {m.name}" for k, m in sorted(marks.items()))
