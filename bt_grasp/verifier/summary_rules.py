"""One summary per node type, built from its children's summaries (the compositional step).

A node's summary bounds its activations (start until it returns SUCCESS/FAILURE or is halted):
- `act`: cost tables of one activation (see summary_tables); key "ticks" counts the RUNNING
  returns that start a new tick, so an episode lasts at most 1 + act["ticks"] ticks;
- `epi`: cost tables of all its activations in one episode together (retry budgets are per
  episode, so a loop above a retry cannot multiply what the retry allows);
- `tick`: the most one tick of it can cost (loops that continue within a tick are unrolled);
- `min_s` / `min_f`: the fewest episode actions an activation that ends SUCCESS / FAILURE while
  no Decision is set can consume (INF_ACTIONS: cannot end so). Each RUNNING return of a retry
  follows such a failed attempt, which is why the action budget bounds the ticks of a retry chain.
The rules follow the real runner: bt_grasp/composites.py, bt_grasp/nodes/base.py and the BT.CPP
nodes of bt_grasp/interop/nodes.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bt_grasp.blackboard import ref_key
from bt_grasp.interop.nodes import DEFAULT_OUTCOMES, may_run
from bt_grasp.registry import Registry
from bt_grasp.verifier.summary_tables import (
    INF_ACTIONS,
    NEG,
    POS,
    Tables,
    cap_index,
    conv,
    conv_all,
    from_index,
    get,
    madd,
    scale,
    shift,
    tmax,
    tmin,
)

TICK_PERIOD = 0.05  # bt_grasp.context.LogicalClock's default: every tick advances the clock this much
LOOP_CAP = 64  # a loop whose iterations may cost no action is unrolled at most this often, else +inf
TICKS = "ticks"
LOOPS = ("retry", "repeat", "btcpp_retry")


@dataclass
class NodeSum:
    act: Tables
    epi: Tables
    tick: dict[str, float] = field(default_factory=dict)
    min_s: int = 0
    min_f: int = 0
    writes: frozenset[str] = frozenset()  # blackboard keys certainly written when it succeeds


def _mul(n: int, m: int) -> int:
    return INF_ACTIONS if m >= INF_ACTIONS else min(INF_ACTIONS, n * m)


class Rules:
    """Summaries for the nodes of one tree (budgets and registry fixed)."""

    def __init__(self, spec: Any, registry: Registry) -> None:
        self.spec = spec
        self.reg = registry
        self.size = spec.budgets.actions + 1
        self.max_ticks = spec.budgets.max_ticks
        self.scopes: dict[str, int] = {}
        for node in spec.root.walk():
            if node.type == "retry":
                scope = str(node.params.get("scope") or node.id)
                self.scopes[scope] = self.scopes.get(scope, 0) + 1
        self.writers: dict[str, set[str]] = {}
        for node in spec.root.walk():
            nt = registry.get(node.type)
            if nt is not None and nt.outcome_port:
                raw = node.params.get(nt.outcome_port) or nt.ports[nt.outcome_port].default
                self.writers.setdefault(ref_key(raw) or str(raw), set()).update(nt.alphabet(node.params))
        self.unbounded_reasons: dict[str, str] = {}

    # -- helpers -----------------------------------------------------------------------------
    def zeros(self) -> np.ndarray:
        return np.zeros(self.size)

    def base(self, act: Tables) -> Tables:
        out = dict(act)
        out.setdefault(TICKS, self.zeros())
        return out

    def _tick_of(self, parts: list[dict[str, float]], how: str = "sum") -> dict[str, float]:
        out: dict[str, float] = {}
        for p in parts:
            for k, v in p.items():
                out[k] = (out.get(k, 0.0) + v) if how == "sum" else max(out.get(k, 0.0), v)
        return out

    def _loop(self, child: Tables, times: int | None, min_actions: int) -> Tables:
        """`times` runs of the child at most (None: no limit), each but the last ending in a way
        that costs at least `min_actions` and is followed by one RUNNING return."""
        size = self.size
        limit = times if times is not None else INF_ACTIONS
        limit = min(limit, self.max_ticks)  # every further iteration needs a new tick
        if min_actions > 0:
            limit = min(limit, (size - 1) // min_actions + 1)
        if min_actions == 0 and limit > LOOP_CAP:
            out = {}
            for key, t in child.items():
                grows = key == TICKS or bool(np.any(t > 0))
                out[key] = np.where(t == NEG, NEG, POS) if grows else t.copy()
            out.setdefault(TICKS, np.where(get(child, TICKS, size) == NEG, NEG, POS))
            return out
        full = {k: shift(t, min_actions) for k, t in child.items()}
        best = self.base(dict(child))
        acc_full = full
        for j in range(2, limit + 1):
            run = {k: conv(acc_full[k], child[k]) for k in child}
            run[TICKS] = conv(get(acc_full, TICKS, size), get(child, TICKS, size)) + (j - 1)
            best = {k: np.maximum(get(best, k, size), get(run, k, size)) for k in set(best) | set(run)}
            acc_full = {k: conv(acc_full[k], full[k]) for k in full}
        return best

    def _cap_ticks(self, act: Tables, tick: dict[str, float], ticks: int) -> Tables:
        """An activation lasting at most `ticks` ticks costs at most ticks × (one tick)."""
        out = dict(act)
        for key, t in act.items():
            if key == TICKS:
                out[key] = np.minimum(t, ticks - 1)
            else:
                out[key] = np.minimum(t, ticks * tick.get(key, 0.0))
        return out

    # -- leaves ------------------------------------------------------------------------------
    def leaf(self, node: Any, in_budget: bool) -> NodeSum:
        nt = self.reg.require(node.type)
        size = self.size
        act: Tables = {TICKS: self.zeros()}
        epi: Tables = {TICKS: self.zeros()}
        tick: dict[str, float] = {}
        min_s, min_f = 0, 0
        writes: frozenset[str] = frozenset()
        if nt.outcome_port:
            raw = node.params.get(nt.outcome_port) or nt.ports[nt.outcome_port].default
            writes = frozenset({ref_key(raw) or str(raw)})
        if node.type in ("opaque_action", "opaque_condition"):
            outcomes = tuple(node.params.get("outcomes") or DEFAULT_OUTCOMES)
            key = f"primitive:btcpp.{node.params.get('btcpp_id')}"
            act[key] = np.ones(size)  # counted once per start, however long it runs
            epi[key] = np.full(size, POS)
            tick[key] = 1.0
            if "running" in outcomes:
                act[TICKS] = np.full(size, POS)
                epi[TICKS] = np.full(size, POS)
            min_s = 0 if "success" in outcomes else INF_ACTIONS
            min_f = 0 if "failure" in outcomes else INF_ACTIONS
            return NodeSum(act, epi, tick, min_s, min_f, frozenset())
        if nt.kind == "terminal":
            return NodeSum(act, epi, tick, INF_ACTIONS, INF_ACTIONS, frozenset())
        keys = []
        if nt.kind == "primitive":
            keys.append(f"primitive:{nt.name}")
        if nt.counts_as_action:
            keys.append("actions")
        if nt.perception:
            keys.append("perception")
        for key in keys:
            act[key] = from_index(1, 1.0, size) if nt.counts_as_action else np.ones(size)
            epi[key] = np.full(size, POS)
            tick[key] = 1.0
        if nt.counts_as_action:
            min_s = 1
            min_f = 0 if in_budget else 1  # a spent scoped budget fails the leaf with no action
        successes = self._success_outcomes(nt)
        alphabet = nt.alphabet(node.params)
        if successes is not None and alphabet and not set(alphabet) & successes:
            min_s = INF_ACTIONS
        return NodeSum(act, epi, tick, min_s, min_f, writes)

    def _success_outcomes(self, nt: Any) -> set[str] | None:
        cls = nt.factory
        if cls is None:
            from bt_grasp.nodes.catalog import LEAF_CLASSES

            cls = LEAF_CLASSES.get(nt.name)
        outs = getattr(cls, "SUCCESS_OUTCOMES", None)
        if nt.name == "label_is" or not outs:
            return None
        return set(outs)

    # -- composites and decorators -------------------------------------------------------------
    def combine(self, node: Any, kids: list[NodeSum], kid_specs: list[Any], multi: bool,
                in_budget: bool) -> NodeSum:
        t = node.type
        size = self.size
        p = node.params
        epi_all = conv_all([k.epi for k in kids], size) if kids else {TICKS: self.zeros()}
        tick_sum = self._tick_of([k.tick for k in kids])
        if t in ("sequence", "selector"):
            out = self._seq_sel(node, kids, kid_specs, t == "sequence", bool(p.get("memory", True)))
        elif t == "parallel":
            one = p.get("policy") == "success_on_one"
            out = self._parallel(kids, one)
        elif t == "btcpp_parallel":
            out = self._parallel(kids, False)
            out.min_s = 0 if any(k.min_s < INF_ACTIONS for k in kids) else INF_ACTIONS
            out.min_f = 0 if any(k.min_f < INF_ACTIONS for k in kids) else INF_ACTIONS
        elif t == "switch":
            out = self._switch(node, kids)
        elif t in LOOPS:
            out = self._loops(node, kids[0], multi)
        elif t == "recovery_node":
            out = self._recovery(node, kids)
        elif t == "pipeline_sequence":
            out = self._pipeline(kids)
        elif t == "round_robin":
            out = NodeSum(self.base(conv_all([k.act for k in kids], size)), {}, tick_sum,
                          min(k.min_s for k in kids), self._sum_min([k.min_f for k in kids]))
        elif t == "timeout":
            out = self._timeout(node, kids[0], kid_specs[0])
        elif t == "budget":
            out = self._budget(node, kids[0])
        elif t == "inverter":
            c = kids[0]
            out = NodeSum(dict(c.act), {}, dict(c.tick), c.min_f, c.min_s)
        elif t == "force_success":
            c = kids[0]
            out = NodeSum(dict(c.act), {}, dict(c.tick), min(c.min_s, c.min_f), INF_ACTIONS)
        elif t == "force_failure":
            c = kids[0]
            out = NodeSum(dict(c.act), {}, dict(c.tick), INF_ACTIONS, min(c.min_s, c.min_f))
        elif t == "opaque_decorator" or len(kids) == 1:
            c = kids[0]
            out = NodeSum(dict(c.act), {}, dict(c.tick), c.min_s, c.min_f, c.writes)
        else:  # an unknown control: every child any number of times -> only the tick cap bounds it
            out = NodeSum({k: np.full(size, POS) for k in conv_all([c.act for c in kids], size)},
                          {}, tick_sum, 0, 0)
            self.unbounded_reasons[node.id] = f"no summary rule for node type {t}"
        if not out.tick:
            out.tick = tick_sum
        # episode caps: what every activation together may cost
        if t == "retry":
            # several activations may each end in a halted attempt: no per-attempt minimum then
            per_episode = self._loop(kids[0].act, int(p["attempts"]), 0) if multi else out.act
            out.epi = tmin(self.base(dict(per_episode)), epi_all, size)
            out.epi[TICKS] = self.base(per_episode)[TICKS]  # its own RUNNING returns come on top
        elif t in ("repeat", "btcpp_retry"):
            m = kids[0].min_s if t == "repeat" else kids[0].min_f
            emits = (np.arange(size) // m).astype(float) if 0 < m < INF_ACTIONS else (
                self.zeros() if m >= INF_ACTIONS else np.full(size, POS))
            out.epi = dict(epi_all)
            out.epi[TICKS] = conv(get(epi_all, TICKS, size), emits)
        elif t == "budget":
            out.epi = self._budget_tables(node, epi_all)
        else:
            out.epi = epi_all
        out.act = self.base(tmin(out.act, out.epi, size))
        top = {k: float(v[-1]) for k, v in out.act.items() if k != TICKS}
        out.tick = {k: min(v, top.get(k, v)) for k, v in out.tick.items()}
        return out

    @staticmethod
    def _sum_min(values: list[int]) -> int:
        total = 0
        for v in values:
            total = madd(total, v)
        return total

    def _seq_sel(self, node: Any, kids: list[NodeSum], specs: list[Any], is_seq: bool,
                 memory: bool) -> NodeSum:
        size = self.size
        # passing a child means SUCCESS (sequence) or FAILURE (selector) with no Decision yet
        passed = [k.min_s if is_seq else k.min_f for k in kids]
        stop = [k.min_f if is_seq else k.min_s for k in kids]
        min_pass = self._sum_min(passed)
        min_stop = INF_ACTIONS
        prefix = 0
        for i in range(len(kids)):
            min_stop = min(min_stop, madd(prefix, stop[i]))
            prefix = madd(prefix, passed[i])
        min_s, min_f = (min_pass, min_stop) if is_seq else (min_stop, min_pass)
        writes = frozenset().union(*(k.writes for k in kids)) if is_seq else frozenset()
        if memory or len(kids) == 1:
            best: Tables = {}
            acc: Tables = {TICKS: self.zeros()}
            for i, k in enumerate(kids):
                here = conv_all([acc, k.act], size)  # children 0..i-1 passed, child i any prefix
                best = {key: np.maximum(get(best, key, size), get(here, key, size))
                        if best else here[key] for key in set(best) | set(here)}
                done = {key: shift(t, passed[i]) for key, t in k.act.items()}
                done.setdefault(TICKS, shift(self.zeros(), passed[i]))
                acc = conv_all([acc, done], size)
            return NodeSum(self.base(best), {}, {}, min_s, min_f, writes)
        # reactive: earlier children are re-ticked (a fresh activation) on every tick
        earlier = [s for s in specs[:-1]]
        if any(may_run(s, self.reg) for s in earlier):
            keys = set(conv_all([k.act for k in kids], size))
            self.unbounded_reasons[node.id] = ("a reactive composite whose earlier children can "
                                               "return RUNNING: bounded by the tick cap only")
            act = {key: np.full(size, POS) for key in keys | {TICKS}}
            return NodeSum(act, {}, {}, min_s, min_f, writes)
        last = kids[-1]
        running = get(last.act, TICKS, size)
        parts = [last.act]
        for k in kids[:-1]:
            parts.append({key: np.where(running == NEG, NEG, (running + 1) * v)
                          for key, v in k.tick.items() if v > 0})
        return NodeSum(self.base(conv_all(parts, size)), {}, {}, min_s, min_f, writes)

    def _parallel(self, kids: list[NodeSum], success_on_one: bool) -> NodeSum:
        size = self.size
        act = conv_all([{k: v for k, v in c.act.items() if k != TICKS} for c in kids], size)
        act[TICKS] = tmax([{TICKS: get(c.act, TICKS, size)} for c in kids], size)[TICKS]
        if success_on_one:
            min_s = min(c.min_s for c in kids)
        else:
            min_s = self._sum_min([c.min_s for c in kids])
        min_f = min(c.min_f for c in kids)
        return NodeSum(act, {}, {}, min_s, min_f)

    def _switch(self, node: Any, kids: list[NodeSum]) -> NodeSum:
        size = self.size
        out = NodeSum(self.base(tmax([k.act for k in kids], size)), {}, self._tick_of(
            [k.tick for k in kids], "max"), min(k.min_s for k in kids), min(k.min_f for k in kids))
        if node.default is None:
            out.min_f = 0 if not self._routed(node) else out.min_f
        return out

    def _routed(self, node: Any) -> bool:
        """Every label the switch can read has a case and the label is written before it runs."""
        key = ref_key(node.params.get("on")) or str(node.params.get("on"))
        labels = self.writers.get(key)
        return bool(labels) and labels <= set(map(str, node.cases)) and key in self.known.get(node.id, ())

    def _loops(self, node: Any, child: NodeSum, multi: bool) -> NodeSum:
        t, p = node.type, node.params
        if t == "retry":
            n = int(p["attempts"])
            scope = str(p.get("scope") or node.id)
            act = self._loop(child.act, n, child.min_f)
            exhausted = multi or self.scopes.get(scope, 1) > 1
            min_f = 0 if exhausted else _mul(n, child.min_f)
            return NodeSum(act, {}, dict(child.tick), child.min_s, min_f, child.writes)
        if t == "repeat":
            times = p.get("times")
            times = int(times) if times is not None else None
            act = self._loop(child.act, times, child.min_s)
            min_s = INF_ACTIONS if times is None else _mul(times, child.min_s)
            if act[TICKS][-1] == POS:
                self.unbounded_reasons[node.id] = "a repeat whose runs may spend no action"
            return NodeSum(act, {}, dict(child.tick), min_s, child.min_f, child.writes)
        n = int(p["num_attempts"])
        act = self._loop(child.act, None if n < 0 else n, child.min_f)
        if act[TICKS][-1] == POS:
            self.unbounded_reasons[node.id] = "a BT.CPP retry whose attempts may spend no action"
        min_f = INF_ACTIONS if n < 0 else _mul(n, child.min_f)
        return NodeSum(act, {}, dict(child.tick), child.min_s, min_f, child.writes)

    def _recovery(self, node: Any, kids: list[NodeSum]) -> NodeSum:
        size = self.size
        n = node.params.get("number_of_retries")
        n = 1 if n is None else int(n)
        main, rec = kids[0], kids[1]
        parts = [main.act] * (n + 1) + [rec.act] * n
        act = self.base(conv_all(parts, size))
        tick = self._tick_of([{k: v * (n + 1) for k, v in main.tick.items()},
                              {k: v * n for k, v in rec.tick.items()}])
        return NodeSum(act, {}, tick, main.min_s, main.min_f)

    def _pipeline(self, kids: list[NodeSum]) -> NodeSum:
        size = self.size
        running = conv_all([{TICKS: get(k.act, TICKS, size)} for k in kids], size)[TICKS]
        parts = []
        for i, k in enumerate(kids):
            part = {key: v for key, v in k.act.items() if key != TICKS}
            if i < len(kids) - 1:
                for key, v in k.tick.items():
                    extra = np.where(running == NEG, NEG, scale(running, v))
                    part[key] = get(part, key, size) + extra
            parts.append(part)
        act = conv_all(parts, size)
        act[TICKS] = running
        return NodeSum(act, {}, {}, self._sum_min([k.min_s for k in kids]),
                       min(madd(self._sum_min([k.min_s for k in kids[:i]]), k.min_f)
                           for i, k in enumerate(kids)))

    def _timeout(self, node: Any, child: NodeSum, child_spec: Any) -> NodeSum:
        seconds = float(node.params["seconds"])
        ticks = math.floor(seconds / TICK_PERIOD + 1e-6) + 2  # ticks one activation can span
        act = self._cap_ticks(child.act, child.tick, ticks)
        timed = any(self.reg.require(n.type).kind in ("primitive", "perception") for n in child_spec.walk())
        can_expire = seconds <= 0 or timed or may_run(child_spec, self.reg)
        return NodeSum(self.base(act), {}, dict(child.tick), child.min_s,
                       0 if can_expire else child.min_f, child.writes)

    def _budget_tables(self, node: Any, tables: Tables) -> Tables:
        limit = int(node.params["actions"])
        out = {}
        for key, t in tables.items():
            t = cap_index(t, limit)
            if key == "actions" or self._is_action_key(key):
                t = np.minimum(t, limit)
            out[key] = t
        return out

    def _budget(self, node: Any, child: NodeSum) -> NodeSum:
        limit = float(node.params["actions"])
        tick = {k: (min(v, limit) if k == "actions" or self._is_action_key(k) else v)
                for k, v in child.tick.items()}
        return NodeSum(self._budget_tables(node, child.act), {}, tick, child.min_s, child.min_f,
                       child.writes)

    def _is_action_key(self, key: str) -> bool:
        if not key.startswith("primitive:"):
            return False
        nt = self.reg.get(key.split(":", 1)[1])
        return bool(nt and nt.counts_as_action)

    # -- the walk ------------------------------------------------------------------------------
    known: dict[str, frozenset[str]]

    def summarise(self, node: Any, multi: bool = False, in_budget: bool = False,
                  known: frozenset[str] = frozenset()) -> NodeSum:
        if not hasattr(self, "known"):
            self.known = {}
        self.known[node.id] = known
        nt = self.reg.require(node.type)
        if nt.kind not in ("composite", "decorator"):
            return self.leaf(node, in_budget)
        t = node.type
        reenters = t in LOOPS or t in ("recovery_node", "pipeline_sequence") or (
            t in ("sequence", "selector") and not node.params.get("memory", True)) or (
            t == "parallel" and node.params.get("policy") == "success_on_one")
        child_multi = multi or reenters
        child_budget = in_budget or t == "budget"
        specs = node.sub_nodes()
        kids = []
        seen = known
        for child in specs:
            s = self.summarise(child, child_multi, child_budget, seen)
            kids.append(s)
            if t == "sequence":
                seen = seen | s.writes
        return self.combine(node, kids, specs, multi, in_budget)
