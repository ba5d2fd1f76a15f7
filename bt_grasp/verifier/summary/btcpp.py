"""Summaries of the Nav2 controls that refill or re-tick (bt_grasp/interop/nodes.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.verifier.summary.node_sum import TICKS, NodeSum, m_add, m_min, m_sum
from bt_grasp.verifier.summary.tables import NEG, add, conv_all, get, scale


def recovery(rules: Any, node: Any, kids: list[NodeSum]) -> NodeSum:
    """RecoveryNode: up to n+1 runs of the action and n of the recovery, refilled per activation."""
    size = rules.size
    n = node.params.get("number_of_retries")
    n = 1 if n is None else int(n)
    main, rec = kids[0], kids[1]
    act = rules.base(conv_all([main.act] * (n + 1) + [rec.act] * n, size))
    tick = rules._tick_of([{k: v * (n + 1) for k, v in main.tick.items()},
                          {k: v * n for k, v in rec.tick.items()}])
    return NodeSum(act, {}, tick, main.min_s, main.min_f)

def pipeline(rules: Any, kids: list[NodeSum]) -> NodeSum:
    """PipelineSequence: each child once at the front; earlier ones re-ticked every later tick."""
    size = rules.size
    running = conv_all([{TICKS: rules.full(k)[TICKS]} for k in kids], size)[TICKS]
    parts = []
    for i, k in enumerate(kids):
        part = {key: v for key, v in k.act.items() if key != TICKS}
        if i < len(kids) - 1:  # re-ticked on every later tick of the pipeline
            for key, v in k.tick.items():
                extra = np.where(running == NEG, NEG, scale(running, v))
                part[key] = add(get(part, key, size), extra)
        parts.append(part)
    act = conv_all(parts, size)
    act[TICKS] = running
    min_f = m_min(*(m_add(m_sum([k.min_s for k in kids[:i]]), k.min_f) for i, k in enumerate(kids)))
    return NodeSum(act, {}, {}, m_sum([k.min_s for k in kids]), min_f)
