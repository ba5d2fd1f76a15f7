"""What the structure alone says: labels a switch does not route, static call bounds, keys read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bt_grasp.blackboard import ref_key
from bt_grasp.registry import Registry


def keys_read(spec: Any, registry: Registry) -> set[str]:
    """Blackboard keys some node of the tree reads (input ports holding "{key}" references).

    Only these can influence the future, so the state fingerprint ignores every other key.
    """
    keys: set[str] = set()
    for node in spec.root.walk():
        nt = registry.get(node.type)
        values = dict(node.params)
        if nt is not None:  # an input port left at a default "{key}" reads that key too
            for name, port in nt.ports.items():
                values.setdefault(name, port.default)
        for name, value in values.items():
            port = nt.ports.get(name) if nt else None  # type: ignore[assignment]  # the loop name above, now optional
            key = ref_key(value)
            if key is not None and (port is None or port.type != "key"):
                keys.add(key)
    return keys


def _writers(spec: Any, registry: Registry) -> dict[str, set[str]]:
    """Blackboard key -> outcome names that leaves can write there."""
    out: dict[str, set[str]] = {}
    for node in spec.root.walk():
        nt = registry.get(node.type)
        if nt is None or not nt.outcome_port:
            continue
        raw = node.params.get(nt.outcome_port) or nt.ports[nt.outcome_port].default
        key = ref_key(raw) or str(raw)
        out.setdefault(key, set()).update(nt.alphabet(node.params))
    return out


def unrouted_labels(spec: Any, registry: Registry) -> list[str]:
    """'switch_id: LABEL' for every label a writer can produce that a switch has no case for."""
    writers = _writers(spec, registry)
    missing = []
    for node in spec.root.walk():
        if node.type != "switch" or node.default is not None:
            continue
        key = ref_key(node.params.get("on")) or str(node.params.get("on"))
        for label in sorted(writers.get(key, set()) - set(map(str, node.cases))):
            missing.append(f"{node.id}: {label}")
    return missing


def static_bounds(spec: Any, registry: Registry) -> dict[str, int | None]:
    """Worst-case calls per primitive from the structure and the literal budgets alone.

    None means the structure alone does not bound it (an unbounded repeat, or a reactive
    composite re-ticking world calls while a later child runs).
    """
    inf = None

    from bt_grasp.interop.nodes import may_run, static_counts

    Counts = dict[str, int | None]

    def can_run(node: Any) -> bool:
        return bool(may_run(node, registry))

    def _kids(node: Any) -> list[Any]:
        kids = list(node.children) + list(node.cases.values())
        if node.default is not None:
            kids.append(node.default)
        return kids

    def combine(a: Counts, b: Counts, op: Callable[[int | None, int | None], int | None]) -> Counts:
        out = dict(a)
        for k, v in b.items():
            out[k] = op(out[k], v) if k in out else v
        return out

    def add(x: int | None, y: int | None) -> int | None:
        return None if x is None or y is None else x + y

    def mx(x: int | None, y: int | None) -> int | None:
        return None if x is None or y is None else max(x, y)

    def scale(d: Counts, n: int | None) -> Counts:
        return {k: (None if v is None or n is None else v * n) for k, v in d.items()}

    def count(node: Any) -> Counts:
        nt = registry.get(node.type)
        if nt is None:
            return {}
        if nt.kind not in ("composite", "decorator"):
            if node.type in ("opaque_action", "opaque_condition"):
                return {f"primitive:btcpp.{node.params.get('btcpp_id')}": 1}
            if nt.kind == "primitive":
                return {f"primitive:{nt.name}": 1}
            if nt.perception:
                return {"perception": 1}
            return {}
        kids = _kids(node)
        counted = [count(c) for c in kids]  # once per child: the tree is walked in linear time
        interop = static_counts(node, counted, registry)
        if interop is not None:
            return dict(interop)
        if node.type == "switch":
            out: Counts = {}
            for c in counted:
                out = combine(out, c, mx)
            return out
        if node.type in ("reactive_sequence", "reactive_selector") or (
                node.type in ("sequence", "selector") and not node.params.get("memory", True)):
            seen_runner = False
            out = {}
            for child, c in zip(reversed(kids), reversed(counted), strict=True):
                if seen_runner and c:
                    c = {k: inf for k in c}
                out = combine(out, c, add)
                seen_runner = seen_runner or can_run(child)
            return out
        out = {}
        for c in counted:
            out = combine(out, c, add)
        if node.type == "retry":
            return scale(out, int(node.params["attempts"]))
        if node.type == "repeat":
            times = node.params.get("times")
            return scale(out, int(times) if times is not None else inf) if out else out
        if node.type == "budget":
            cap = int(node.params["actions"])
            return {k: (cap if (v is None or v > cap) and _is_action(k, registry) else v)
                    for k, v in out.items()}
        if nt.name not in ("sequence", "selector", "reactive_sequence", "reactive_selector",
                           "parallel", "timeout", "inverter",
                           "force_success", "force_failure"):
            return scale(out, inf) if out and can_run(node) else out
        return out

    counts = count(spec.root)
    budget = spec.budgets.actions
    action_keys = [k for k in counts if _is_action(k, registry)]
    total_actions = 0
    for k in action_keys:
        worst = counts[k]
        bounded = budget if worst is None else min(worst, budget)
        counts[k] = bounded
        total_actions += bounded
    counts["actions"] = min(total_actions, budget)
    counts.setdefault("perception", 0)
    return dict(sorted(counts.items()))


def _is_action(key: str, registry: Registry) -> bool:
    nt = registry.get(key.split(":", 1)[1]) if key.startswith("primitive:") else None
    return bool(nt and nt.counts_as_action)
