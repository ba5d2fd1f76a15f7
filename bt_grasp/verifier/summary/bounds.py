"""Worst-case bounds of a tree from per-subtree summaries, in time polynomial in the tree size.

Each node is summarised once from its children's summaries (summary.rules), over the actions an
activation consumes (summary.tables). The root's summary, the episode guards (action budget,
perception streak) and the tick cap give a bound per cost key that is at least the cost of every
run of the real Runner. Witness runs (summary.witness) give, per key, an outcome sequence meant to
reach the bound; a bound is only known to be tight when replaying its witness reaches it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.default_registry import default_registry
from bt_grasp.interop.nodes import register_interop_types
from bt_grasp.registry import Registry
from bt_grasp.tick_budget import tick_cap
from bt_grasp.verifier.summary.node_sum import TICKS
from bt_grasp.verifier.summary.rules import Rules
from bt_grasp.verifier.summary.tables import INF_ACTIONS, POS
from bt_grasp.verifier.summary.witness import search

WITNESS_RUNS = 16  # biased Runner episodes played to find a witness per key
WITNESS_CLIMBS = 400  # then local-search steps towards the keys whose bound no run reached yet,
# while the episodes played have cost at most this much work (summary_witness.play_work: about
# 0.3 CPU s): a count, not a clock, so that which witness is found, and so which bounds are
# reported as reached, never depends on how busy the machine is
WITNESS_WORK = 20_000


@dataclass
class Summary:
    bounds: dict[str, int | None]   # "actions", "ticks", "perception", "primitive:<name>"; None = unbounded
    witnesses: dict[str, list[tuple[str, str]]]  # key -> outcome sequence [(node_id, outcome), ...]
    decides: bool | None            # True: every run ends in a Decision within max_ticks (proved);
                                    # False: some run provably does not; None: cannot tell
    reasons: dict[str, str] = field(default_factory=dict)  # why a bound is None / loose, why not decides


def _tree_keys(spec: Any, registry: Registry) -> set[str]:
    """Every cost key a run of this tree can increase."""
    keys = {"actions", "ticks", "perception"}
    for node in spec.root.walk():
        nt = registry.get(node.type)
        if node.type in ("opaque_action", "opaque_condition"):
            keys.add(f"primitive:btcpp.{node.params.get('btcpp_id')}")
        elif nt is not None and nt.kind == "primitive":
            keys.add(f"primitive:{nt.name}")
    return keys


def _after_decision_keys(spec: Any, registry: Registry) -> set[str]:
    """Cost keys of opaque leaves that may still start later in the tick that set the Decision.

    bt_grasp leaves do nothing once a Decision is set; opaque BT.CPP leaves still count their
    start. One can follow a decision source (a terminal leaf, or a guarded leaf whose refusal
    decides) if it lies in a later branch, or below a control that loops within a tick.
    """
    paths: dict[str, list[tuple[str, str, int]]] = {}  # (ancestor id, its type, branch taken)

    def walk(node: Any, path: list[tuple[str, str, int]]) -> None:
        paths[node.id] = path
        for i, child in enumerate(node.sub_nodes()):
            walk(child, path + [(node.id, node.type, i)])

    walk(spec.root, [])
    sources, opaque = [], []
    for node in spec.root.walk():
        nt = registry.get(node.type)
        if node.type in ("opaque_action", "opaque_condition"):
            opaque.append(node)
        elif nt is not None and (nt.kind == "terminal" or nt.counts_as_action or nt.perception):
            sources.append(node)
    keys = set()
    for leaf in opaque:
        lp = paths[leaf.id]
        for src in sources:
            sp = paths[src.id]
            depth = 0
            while depth < min(len(lp), len(sp)) and lp[depth] == sp[depth]:
                depth += 1
            looping = any(t in ("recovery_node", "round_robin") for _, t, _ in lp[:depth + 1])
            if looping or (depth < len(lp) and depth < len(sp) and sp[depth][2] < lp[depth][2]):
                keys.add(f"primitive:btcpp.{leaf.params.get('btcpp_id')}")
                break
    return keys


def _as_int(value: float) -> int | None:
    if value == POS or math.isnan(value):
        return None
    return max(0, int(math.floor(value + 1e-9)))


def summary_bounds(spec: Any, registry: Registry | None = None) -> Summary:
    """The bounds and what the structure alone says about deciding: no witness runs."""
    registry = registry or getattr(spec, "registry", None) or default_registry()
    register_interop_types(registry)
    rules = Rules(spec, registry)
    root = rules.summarise(spec.root)
    budgets = spec.budgets
    a = budgets.actions
    reasons: dict[str, str] = {}
    whole = rules.full(root)

    def at_budget(key: str) -> float:
        t = whole.get(key)
        return 0.0 if t is None else max(0.0, float(t[a]))

    ticks_structural = at_budget(TICKS) + 1
    cap = float(tick_cap(spec, registry).value)
    ticks = min(cap, ticks_structural)
    bounds: dict[str, int | None] = {"ticks": _as_int(ticks)}
    late = _after_decision_keys(spec, registry)
    for key in sorted(_tree_keys(spec, registry) - {"ticks"}):
        live = at_budget(key)
        if key in late:
            live += root.tick.get(key, 0.0)  # opaque leaves still start in the tick of the Decision
        value = min(live, ticks * root.tick.get(key, 0.0))
        if key == "actions" or rules._is_action_key(key):
            value = min(value, a)
        if key == "perception":
            value = min(value, budgets.perception_streak * (a + 1))
        if live == POS and value < POS:
            reasons[key] = (f"bounded by the tick cap only: {int(ticks)} ticks × at most "
                            f"{root.tick.get(key, 0.0):g} per tick")
        bounds[key] = _as_int(value)
    if ticks_structural == POS:
        reasons["ticks"] = "the structure does not bound the ticks; max_ticks does"
    for node_id, why in rules.unbounded_reasons.items():
        reasons.setdefault(f"node:{node_id}", why)
    finishes = root.min_s[0] < INF_ACTIONS or root.min_f[0] < INF_ACTIONS
    if not finishes and ticks_structural <= cap:
        return Summary(bounds, {}, True, reasons)
    parts = []
    if finishes:
        parts.append("the root may finish without a Decision (structure alone cannot rule it out)")
    if ticks_structural > cap:
        parts.append(f"the structure bounds ticks by {ticks_structural:g}, above the tick cap "
                     f"{cap:g}")
    reasons["decides"] = "; ".join(parts)
    return Summary(bounds, {}, None, reasons)


def summarise(spec: Any, registry: Registry | None = None) -> Summary:
    """Sound worst-case bounds of `spec` (a TreeSpec, includes expanded), with witness runs."""
    registry = registry or getattr(spec, "registry", None) or default_registry()
    summary = summary_bounds(spec, registry)
    bounds, reasons = summary.bounds, summary.reasons
    found = search(spec, registry, WITNESS_RUNS, WITNESS_CLIMBS, bounds, work=WITNESS_WORK)
    for key, value in found.best.items():
        bound = bounds.get(key)
        if bound is not None and value > bound:
            reasons[key] = f"a witness run reached {value} > bound {bound}: the summary is unsound here"
    summary.witnesses = found.witnesses
    if summary.decides is True and found.undecided:
        reasons["decides"] = f"a run ended with '{found.undecided[0][0]}': the summary is unsound here"
    if summary.decides is None and found.undecided:
        summary.decides = False
        why, choices = found.undecided[0]
        reasons["decides"] = f"a run ends with '{why}' ({len(choices)} choices; see witnesses['decides'])"
        found.witnesses["decides"] = choices
    return summary
