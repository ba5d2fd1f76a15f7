"""Summaries of the loops and scoped decorators of bt_grasp: retry / repeat / BT.CPP retry, timeout,
budget (see summary.rules for what a NodeSum holds)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.composites import tick_allowance
from bt_grasp.interop.nodes import may_run
from bt_grasp.verifier.summary.node_sum import NEVER, TICKS, ZERO, NodeSum, m_mul, m_once
from bt_grasp.verifier.summary.tables import NEG, POS, Tables, cap_index, conv, get

TICK_PERIOD = 0.05  # bt_grasp.context.LogicalClock's default: every tick advances the clock this much


def loops(rules: Any, node: Any, child: NodeSum, multi: bool) -> NodeSum:
    """Retry (its loop is built in Rules.combine, in the capped part), repeat, BT.CPP retry."""
    t, p = node.type, node.params
    if t == "retry":
        n = int(p["attempts"])
        exhausted = multi or rules.scopes.get(str(p.get("scope") or node.id), 1) > 1
        min_f = ZERO if exhausted else m_mul(n, child.min_f)
        return NodeSum({}, {}, dict(child.tick), child.min_s, min_f, child.writes)
    if t == "repeat":
        times = p.get("times")
        times = int(times) if times is not None else None
        act = rules._loop(child.act, rules.ended(child, "s"), times, child.min_s[1])
        min_s = NEVER if times is None else m_mul(times, child.min_s)
        if act[TICKS][-1] == POS:
            rules.unbounded_reasons[node.id] = "a repeat whose runs may spend no action"
        return NodeSum(act, {}, dict(child.tick), min_s, child.min_f, child.writes)
    n = int(p["num_attempts"])
    act = rules._loop(child.act, rules.ended(child, "f"), None if n < 0 else n, child.min_f[1])
    if act[TICKS][-1] == POS:
        rules.unbounded_reasons[node.id] = "a BT.CPP retry whose attempts may spend no action"
    min_f = NEVER if n < 0 else m_mul(n, child.min_f)
    return NodeSum(act, {}, dict(child.tick), child.min_s, min_f, child.writes)


def timeout(rules: Any, node: Any, child: NodeSum, child_spec: Any) -> NodeSum:
    """An activation spans at most the ticks that fit in `seconds`; it may expire (fail)."""
    seconds = float(node.params["seconds"])
    # ticks one activation can span: its start tick, the entries its deadline allows, and the
    # entry at which the deadline is certain (composites.tick_allowance)
    ticks = tick_allowance(seconds, TICK_PERIOD) + 1
    act = rules._cap_ticks(child.act, child.tick, ticks)
    timed = any(rules.reg.require(n.type).kind in ("primitive", "perception") for n in child_spec.walk())
    can_expire = seconds <= 0 or timed or may_run(child_spec, rules.reg)
    s_tab = rules._cap_ticks(rules.ended(child, "s"), child.tick, ticks)
    f_tab = rules.base(act) if can_expire else rules._cap_ticks(rules.ended(child, "f"), child.tick, ticks)
    return NodeSum(rules.base(act), {}, dict(child.tick), child.min_s,
                   ZERO if can_expire else child.min_f, child.writes, s_tab, f_tab)


def budget(rules: Any, node: Any, out: NodeSum, multi: bool) -> None:
    """At most `actions` actions inside per episode: the action keys move to the capped part
    (what one activation allows when there is only one, else the limit itself)."""
    limit = int(node.params["actions"])
    size = rules.size
    fresh: Tables = {}
    once: Tables = {}
    for key in set(out.act) | set(out.once):
        if key == "actions" or rules._is_action_key(key):
            total = conv(get(out.act, key, size), get(out.once, key, size))
            if multi:
                total = np.where(total == NEG, NEG, np.arange(size, dtype=float))
            once[key] = np.minimum(cap_index(total, limit), limit)
        else:
            fresh[key] = cap_index(get(out.act, key, size), limit)
            if key in out.once:
                once[key] = cap_index(out.once[key], limit)
    out.act, out.once = fresh, once
    out.tick = {k: (min(v, limit) if k == "actions" or rules._is_action_key(k) else v)
                for k, v in out.tick.items()}
    out.min_s, out.min_f = m_once(out.min_s), m_once(out.min_f)
