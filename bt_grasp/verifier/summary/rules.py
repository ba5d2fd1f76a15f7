"""One summary per node type, built from its children's summaries (the compositional step).

A node's summary bounds its activations (start until it returns SUCCESS/FAILURE or is halted) as
the sum of two parts, both cost tables over the actions spent (summary.tables):
- `act`, the fresh part: what one activation costs outside capped descendants; a loop above the
  node repeats it. Key "ticks" counts the RUNNING returns that start a new tick, so an episode
  lasts at most 1 + ticks ticks;
- `once`, the capped part: everything bt_grasp `retry` and `budget` descendants may cost in the
  whole episode. Their budgets are never refilled, so a loop above cannot multiply it: it is
  paid once, however often the node is activated.
Besides: `tick`, the most one tick of the node can cost (loops that continue within a tick are
unrolled), and `min_s` / `min_f`, the fewest actions an activation ending SUCCESS / FAILURE while
no Decision is set can spend, as (in total, in the fresh part); INF_ACTIONS: it cannot end so.
Each RUNNING return of a retry follows such a failed attempt, which is why the action budget
bounds the ticks of a retry chain. The rules follow the real runner: bt_grasp/composites.py,
bt_grasp/nodes/base.py and the BT.CPP nodes of bt_grasp/interop/nodes.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bt_grasp.blackboard import ref_key
from bt_grasp.interop.nodes import may_run
from bt_grasp.registry import Registry
from bt_grasp.verifier.summary.btcpp import pipeline, recovery
from bt_grasp.verifier.summary.leaves import leaf_summary
from bt_grasp.verifier.summary.loops import budget, loops, timeout
from bt_grasp.verifier.summary.node_sum import (
    LOOPS,
    NEVER,
    TICKS,
    ZERO,
    NodeSum,
    m_add,
    m_min,
    m_once,
    m_sum,
)
from bt_grasp.verifier.summary.tables import (
    INF_ACTIONS,
    NEG,
    POS,
    Tables,
    add,
    conv,
    conv_all,
    get,
    masked,
    shift,
    tmax,
)

REACTIVE = ("reactive_sequence", "reactive_selector")  # sequence / selector with memory: false
LOOP_CAP = 64  # a loop whose iterations may cost no action is unrolled at most this often, else +inf


class Rules:
    """Summaries for the nodes of one tree (budgets and registry fixed)."""

    def __init__(self, spec: Any, registry: Registry) -> None:
        self.spec = spec
        self.reg = registry
        self.size = spec.budgets.actions + 1
        # no cap given: the structure's own bound is the cap (tick_budget.py), no limit here
        self.max_ticks = spec.budgets.max_ticks if spec.budgets.max_ticks is not None else math.inf
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
        self.known: dict[str, dict[str, frozenset[str]]] = {}
        self.may_write: dict[str, frozenset[str]] = {}
        self._collect_writes(spec.root)

    def _collect_writes(self, node: Any) -> frozenset[str]:
        """Every label key some leaf of the subtree may write (its outcome port)."""
        keys: set[str] = set()
        nt = self.reg.get(node.type)
        if nt is not None and nt.outcome_port:
            raw = node.params.get(nt.outcome_port) or nt.ports[nt.outcome_port].default
            keys.add(ref_key(raw) or str(raw))
        for child in node.sub_nodes():
            keys |= self._collect_writes(child)
        self.may_write[node.id] = frozenset(keys)
        return self.may_write[node.id]

    # -- helpers -----------------------------------------------------------------------------
    def zeros(self) -> np.ndarray:
        return np.zeros(self.size)

    def base(self, act: Tables) -> Tables:
        out = dict(act)
        out.setdefault(TICKS, self.zeros())
        return masked(out)

    def _tick_of(self, parts: list[dict[str, float]], how: str = "sum") -> dict[str, float]:
        out: dict[str, float] = {}
        for p in parts:
            for k, v in p.items():
                out[k] = (out.get(k, 0.0) + v) if how == "sum" else max(out.get(k, 0.0), v)
        return out

    def _loop(self, child: Tables, done: Tables, times: int | None, min_actions: int,
              per_tick: bool = True) -> Tables:
        """`times` runs of the child at most (None: no limit), each but the last ending in a way
        that costs at least `min_actions` and is followed by one RUNNING return (`per_tick`:
        then every further run needs a new tick, so the tick cap limits them too)."""
        size = self.size
        limit: Any  # an int count (max_ticks may be a float bound)
        limit = times if times is not None else INF_ACTIONS
        if per_tick:
            limit = min(limit, self.max_ticks + 1)  # one more run than ticks: the cap is reached
        if min_actions > 0:
            limit = min(limit, (size - 1) // min_actions + 1)
        if min_actions == 0 and limit > LOOP_CAP:
            out = {}
            for key, t in child.items():
                grows = key == TICKS or bool(np.any(t > 0))
                out[key] = np.where(t == NEG, NEG, POS) if grows else t.copy()
            out.setdefault(TICKS, np.where(get(child, TICKS, size) == NEG, NEG, POS))
            return out
        full = {k: get(done, k, size) for k in child}  # the runs before the last one ended
        best = self.base(dict(child))
        acc_full = full
        for j in range(2, limit + 1):
            run = {k: conv(acc_full[k], child[k]) for k in child}
            run[TICKS] = conv(get(acc_full, TICKS, size), get(child, TICKS, size)) + (j - 1)
            best = {k: np.maximum(get(best, k, size), get(run, k, size)) for k in set(best) | set(run)}
            acc_full = {k: conv(acc_full[k], full[k]) for k in full}
        return best

    def _cap_ticks(self, act: Tables, tick: dict[str, float], ticks: Any) -> Tables:
        """An activation lasting at most `ticks` ticks (a number, or a table over the actions)
        costs at most ticks × (one tick)."""
        out = dict(act)
        for key, t in act.items():
            if key == TICKS:
                out[key] = np.minimum(t, np.asarray(ticks) - 1)
            else:
                per_tick = tick.get(key, 0.0)
                out[key] = np.minimum(t, np.asarray(ticks) * per_tick if per_tick else 0.0)
        return out

    def leaf(self, node: Any, in_budget: bool) -> NodeSum:
        return leaf_summary(self.reg, self.size, node, in_budget)

    def ended(self, s: NodeSum, which: str) -> Tables:
        """Fresh-part tables of the activations that end SUCCESS ("s") / FAILURE ("f") live."""
        tab = s.s_tab if which == "s" else s.f_tab
        if tab is not None:
            return tab
        least = (s.min_s if which == "s" else s.min_f)[1]
        return {k: shift(t, least) for k, t in self.base(s.act).items()}

    # -- composites and decorators -------------------------------------------------------------
    def full(self, s: NodeSum) -> Tables:
        """Fresh and capped parts together: a bound on one activation."""
        return self.base(conv_all([s.act, s.once], self.size)) if s.once else self.base(s.act)

    def combine(self, node: Any, kids: list[NodeSum], kid_specs: list[Any], multi: bool,
                in_budget: bool) -> NodeSum:
        t = node.type
        size = self.size
        p = node.params
        tick_sum = self._tick_of([k.tick for k in kids])
        once = conv_all([k.once for k in kids], size) if any(k.once for k in kids) else {}
        if t in ("sequence", "selector", *REACTIVE):
            out = self._seq_sel(node, kids, kid_specs, t in ("sequence", "reactive_sequence"),
                                t not in REACTIVE and bool(p.get("memory", True)))
        elif t == "parallel":
            out = self._parallel(kids, p.get("policy") == "success_on_one")
        elif t == "btcpp_parallel":
            out = self._parallel(kids, False)
            out.min_s = ZERO if any(k.min_s[0] < INF_ACTIONS for k in kids) else NEVER
            out.min_f = ZERO if any(k.min_f[0] < INF_ACTIONS for k in kids) else NEVER
        elif t == "switch":
            out = self._switch(node, kids)
        elif t in LOOPS:
            out = loops(self, node, kids[0], multi)
        elif t == "recovery_node":
            out = recovery(self, node, kids)
        elif t == "pipeline_sequence":
            out = pipeline(self, kids)
        elif t == "round_robin":
            out = NodeSum(self.base(conv_all([k.act for k in kids], size)), {}, tick_sum,
                          m_min(*(k.min_s for k in kids)), m_sum([k.min_f for k in kids]))
        elif t == "timeout":
            out = timeout(self, node, kids[0], kid_specs[0])
        elif t == "inverter":
            c = kids[0]
            out = NodeSum(dict(c.act), {}, dict(c.tick), c.min_f, c.min_s,
                          s_tab=self.ended(c, "f"), f_tab=self.ended(c, "s"))
        elif t == "force_success":
            c = kids[0]
            out = NodeSum(dict(c.act), {}, dict(c.tick), m_min(c.min_s, c.min_f), NEVER,
                          s_tab=tmax([self.ended(c, "s"), self.ended(c, "f")], size))
        elif t == "force_failure":
            c = kids[0]
            out = NodeSum(dict(c.act), {}, dict(c.tick), NEVER, m_min(c.min_s, c.min_f),
                          f_tab=tmax([self.ended(c, "s"), self.ended(c, "f")], size))
        elif t == "opaque_decorator":
            c = kids[0]
            out = NodeSum(dict(c.act), {}, dict(c.tick), c.min_s, c.min_f, c.writes, c.s_tab, c.f_tab)
        elif t == "budget":
            c = kids[0]
            out = NodeSum(dict(c.act), {}, dict(c.tick), c.min_s, c.min_f, c.writes)
        else:  # an unknown control (one child or many) may tick every child any number of times:
            # only the tick cap bounds it (passing one child's summary through would be unsound
            # for a user decorator that repeats its child)
            out = NodeSum({k: np.full(size, POS) for k in conv_all([self.full(c) for c in kids], size)},
                          {}, tick_sum, ZERO, ZERO)
            self.unbounded_reasons[node.id] = f"no summary rule for node type {t}"
            once = {}
        if not out.tick:
            out.tick = tick_sum
        if t == "parallel" and p.get("policy") == "success_on_one":
            # The first branch to finish (SUCCESS or FAILURE) ends it: it lasts no longer than its
            # shortest-lived branch, and a branch beside it (an unbounded repeat of a check) runs
            # at most that many ticks, each costing at most one tick's worth.
            # (a branch with no activation at some action count bounds nothing there)
            lasts = np.min(np.stack([np.where(t == NEG, POS, t) for t in
                                     (get(self.full(k), TICKS, size) for k in kids)]), axis=0)
            if TICKS in once:
                once = {**once, TICKS: np.where(once[TICKS] == NEG, NEG, 0.0)}
            out.act = self._cap_ticks({**out.act, TICKS: np.where(get(out.act, TICKS, size) == NEG, NEG, lasts)},
                                      tick_sum, lasts + 1)
        elif t in ("parallel", "btcpp_parallel") and TICKS in once:
            # Branches run side by side: the parallel lasts as long as its longest branch, the
            # capped part (its retries' attempts) included. Summed, as the capped parts of
            # siblings are, the branches' ticks would count as if they ran one after another.
            out.act[TICKS] = tmax([{TICKS: get(self.full(k), TICKS, size)} for k in kids], size)[TICKS]
            once = {**once, TICKS: np.where(once[TICKS] == NEG, NEG, 0.0)}
        out.once = once
        if t == "retry":
            # Its starts are counted per episode: every activation together is paid once. Several
            # activations may each end in a halted attempt: no per-attempt minimum then.
            child = kids[0]
            n = int(p["attempts"])
            done = child.act if multi else self.ended(child, "f")
            loop = self._loop(child.act, done, n, 0 if multi else child.min_f[1], per_tick=not multi)
            if multi:  # RUNNING returns still follow attempts that failed, each spending min_f
                m = child.min_f[1]
                emits = np.minimum(n - 1, np.arange(size) // m) if 0 < m < INF_ACTIONS else (
                    self.zeros() if m >= INF_ACTIONS else np.full(size, n - 1.0))
                own = get(child.act, TICKS, size)
                for _ in range(n - 1):
                    own = conv(own, get(child.act, TICKS, size))
                # the RUNNING returns follow from the same actions the attempts spent: both
                # bounds hold at once for a total of `a` actions (added, not convolved)
                loop[TICKS] = np.minimum(loop[TICKS], add(own, emits.astype(float)))
            out.once = self.base(conv_all([loop, child.once], size))
            out.act = {TICKS: self.zeros()}
            out.min_s, out.min_f = m_once(out.min_s), m_once(out.min_f)
        elif t == "budget":
            budget(self, node, out, multi)
        out.act = self.base(out.act)
        if t in ("retry", "budget"):
            out.s_tab = out.f_tab = None  # derived again from the new fresh part
        top = {k: float(v[-1]) for k, v in self.full(out).items() if k != TICKS}
        # (opaque leaves still start after a Decision, which the live tables do not count)
        out.tick = {k: v if k.startswith("primitive:btcpp.") else min(v, top.get(k, v))
                    for k, v in out.tick.items()}
        return out

    def _seq_sel(self, node: Any, kids: list[NodeSum], specs: list[Any], is_seq: bool,
                 memory: bool) -> NodeSum:
        size = self.size
        # passing a child means SUCCESS (sequence) or FAILURE (selector) with no Decision yet
        passed = [k.min_s if is_seq else k.min_f for k in kids]
        stop = [k.min_f if is_seq else k.min_s for k in kids]
        min_pass = m_sum(passed)
        min_stop = NEVER
        prefix = ZERO
        for i in range(len(kids)):
            min_stop = m_min(min_stop, m_add(prefix, stop[i]))
            prefix = m_add(prefix, passed[i])
        min_s, min_f = (min_pass, min_stop) if is_seq else (min_stop, min_pass)
        writes: dict[str, frozenset[str]] = {}
        if is_seq and memory:
            for k, spec in zip(kids, specs, strict=True):
                writes = {key: v for key, v in writes.items() if key not in self.may_write[spec.id]}
                writes.update(k.writes)
        if memory or len(kids) == 1:
            go, halt = ("s", "f") if is_seq else ("f", "s")
            best: list[Tables] = []
            stops: list[Tables] = []
            acc: Tables = {TICKS: self.zeros()}
            for k in kids:
                best.append(conv_all([acc, k.act], size))  # children before passed, this one any prefix
                stops.append(conv_all([acc, self.ended(k, halt)], size))
                acc = conv_all([acc, self.ended(k, go)], size)
            through, stopped = self.base(acc), self.base(tmax(stops, size))
            s_tab, f_tab = (through, stopped) if is_seq else (stopped, through)
            return NodeSum(self.base(tmax(best, size)), {}, {}, min_s, min_f, writes, s_tab, f_tab)
        # reactive: earlier children are re-ticked (a fresh activation) on every tick
        if any(may_run(s, self.reg) for s in specs[:-1]):
            keys = set(conv_all([self.full(k) for k in kids], size))
            self.unbounded_reasons[node.id] = ("a reactive composite whose earlier children can "
                                               "return RUNNING: bounded by the tick cap only")
            act = {key: np.full(size, POS) for key in keys | {TICKS}}
            return NodeSum(act, {}, {}, min_s, min_f, writes)
        last = kids[-1]
        running = self.full(last)[TICKS]
        parts = [last.act]
        for k in kids[:-1]:
            parts.append({key: np.where(running == NEG, NEG, (running + 1) * v)
                          for key, v in k.tick.items() if v > 0})
        return NodeSum(self.base(conv_all(parts, size)), {}, {}, min_s, min_f, writes)

    def _parallel(self, kids: list[NodeSum], success_on_one: bool) -> NodeSum:
        size = self.size
        act = conv_all([{k: v for k, v in c.act.items() if k != TICKS} for c in kids], size)
        act[TICKS] = tmax([{TICKS: get(c.act, TICKS, size)} for c in kids], size)[TICKS]
        min_s = m_min(*(c.min_s for c in kids)) if success_on_one else m_sum([c.min_s for c in kids])
        return NodeSum(act, {}, {}, min_s, m_min(*(c.min_f for c in kids)))

    def _switch(self, node: Any, kids: list[NodeSum]) -> NodeSum:
        size = self.size
        labels = self.known.get(node.id, {}).get(ref_key(node.params.get("on")) or str(node.params.get("on")))
        if labels:  # the label was just written by a leaf that succeeded: only its cases can run
            names = [str(c) for c in node.cases] + ([None] if node.default is not None else [])
            reach = [k for name, k in zip(names, kids, strict=True)
                     if (name in labels) or (name is None and not labels <= set(map(str, node.cases)))]
            kids = reach or kids
        out = NodeSum(self.base(tmax([k.act for k in kids], size)), {},
                      self._tick_of([k.tick for k in kids], "max"),
                      m_min(*(k.min_s for k in kids)), m_min(*(k.min_f for k in kids)))
        out.s_tab = self.base(tmax([self.ended(k, "s") for k in kids], size))
        out.f_tab = self.base(tmax([self.ended(k, "f") for k in kids], size))
        if node.default is None and not self._routed(node):
            out.min_f = ZERO
            out.f_tab = self.base(tmax([out.f_tab, {TICKS: self.zeros()}], size))
        return out

    def _routed(self, node: Any) -> bool:
        """Every label the switch can read has a case and the label is written before it runs."""
        key = ref_key(node.params.get("on")) or str(node.params.get("on"))
        known = self.known.get(node.id, {}).get(key)
        labels = known if known else self.writers.get(key)
        return bool(labels) and labels <= set(map(str, node.cases)) and key in self.known.get(node.id, ())  # type: ignore[operator]  # bool(labels): not None

    def _is_action_key(self, key: str) -> bool:
        if not key.startswith("primitive:"):
            return False
        nt = self.reg.get(key.split(":", 1)[1])
        return bool(nt and nt.counts_as_action)

    # -- the walk ------------------------------------------------------------------------------
    def summarise(self, node: Any, multi: bool = False, in_budget: bool = False,
                  known: dict[str, frozenset[str]] | None = None) -> NodeSum:
        """Summarise `node`; `known`: label keys whose possible values are known when it starts."""
        known = known or {}
        self.known[node.id] = known
        nt = self.reg.require(node.type)
        if nt.kind not in ("composite", "decorator"):
            return self.leaf(node, in_budget)
        t = node.type
        reenters = t in LOOPS or t in ("recovery_node", "pipeline_sequence", *REACTIVE) or (
            t in ("sequence", "selector") and not node.params.get("memory", True)) or (
            t == "parallel" and node.params.get("policy") == "success_on_one")
        child_multi = multi or reenters
        child_budget = in_budget or t == "budget"
        specs = node.sub_nodes()
        kids = []
        in_order = t == "sequence" and node.params.get("memory", True)
        passes = in_order or t in ("inverter", "force_success", "force_failure", "timeout", "budget",
                                   "opaque_decorator")
        # children that may run again, or after a sibling that may have rewritten a label, know less
        seen = known if passes else {k: v for k, v in known.items() if k not in self.may_write[node.id]}
        for child in specs:
            s = self.summarise(child, child_multi, child_budget, seen)
            kids.append(s)
            if in_order:
                seen = {k: v for k, v in seen.items() if k not in self.may_write[child.id]} | s.writes
        return self.combine(node, kids, specs, multi, in_budget)
