"""Static call bounds of the BT.CPP / Nav2 node types, for the verifier's static pass."""

from __future__ import annotations

from typing import Any

from bt_grasp.interop.outcomes import DEFAULT_OUTCOMES
from bt_grasp.registry import Registry


def may_run(node: Any, registry: Registry) -> bool:
    """Can this subtree return RUNNING? (Then a reactive or pipeline parent re-ticks its elders.)

    A bt_grasp leaf does when its call may span ticks (a primitive: NodeType.max_ticks > 1); so do
    an opaque leaf declaring `running`, `btcpp_retry` between attempts, and anything above them.
    """
    nt = registry.get(node.type)
    if node.type in ("opaque_action", "opaque_condition"):
        return "running" in (node.params.get("outcomes") or DEFAULT_OUTCOMES)
    if nt is not None and nt.kind not in ("composite", "decorator") and nt.max_ticks > 1:
        return True
    if node.type in ("btcpp_retry", "retry", "repeat"):
        return True
    kids = list(node.children) + list(getattr(node, "cases", {}).values())
    if getattr(node, "default", None) is not None:
        kids.append(node.default)
    return nt is not None and any(may_run(k, registry) for k in kids)


def static_counts(node: Any, child_counts: list[dict[str, int | None]], registry: Registry
                  ) -> dict[str, int | None] | None:
    """Worst-case calls of one activation of an interop composite/decorator, from its children's.

    Returns None for node types that are not interop types (the caller handles those). Counts
    use verify's convention: None = no static bound. These are per activation: a parent that
    re-enters the node multiplies them, which is exactly how a refilled budget shows up.
    """

    def add(a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else a + b

    def scale(d: dict[str, int | None], n: int | None) -> dict[str, int | None]:
        return {k: (None if v is None or n is None else v * n) for k, v in d.items()}

    def total(parts: list[dict[str, int | None]]) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for part in parts:
            for k, v in part.items():
                out[k] = add(out[k], v) if k in out else v
        return out

    t = node.type
    if t == "btcpp_retry":
        n = int(node.params["num_attempts"])
        return scale(child_counts[0], None if n < 0 else n)
    if t == "recovery_node":
        n = node.params.get("number_of_retries")
        n = 1 if n is None else int(n)
        return total([scale(child_counts[0], n + 1), scale(child_counts[1], n)])
    if t == "pipeline_sequence":
        # An elder is re-ticked on every tick a younger child stays RUNNING: unbounded then.
        parts = []
        for i, counts in enumerate(child_counts):
            later_runs = any(may_run(k, registry) for k in node.children[i + 1:])
            parts.append(scale(counts, None) if later_runs and counts else counts)
        return total(parts)
    if t in ("round_robin", "btcpp_parallel", "opaque_decorator"):
        return total(child_counts)  # each child at most once per activation
    return None
