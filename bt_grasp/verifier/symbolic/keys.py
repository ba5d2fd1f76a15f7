"""The merge key of a modelled run: everything that can change its future, and nothing else.

The same reductions as the compiled tree's key (bt_grasp/verifier/compiled/state.py, docs/semantics.md
"Search"), read off the model's slots: a node's loop data only while it runs or is on the path
of the tick in progress, finished statuses only under a parallel that runs or is being ticked,
the blackboard keys some reader can still see (liveness.py), a label that only conditions
and switches can still see as far as they tell it apart (every value they do not name answers
them alike). Ticks left of running calls and timeouts are part of it (they bound
what can still happen); the tick count is not. The counters (actions, streak, retry starts,
scoped actions) are kept apart, as the key's second half: the search shares a future between
counter values that every comparison in it treats alike (explore.py).
"""

from __future__ import annotations

from typing import Any

from bt_grasp.value_key import value_key
from bt_grasp.verifier.compiled.liveness import Liveness
from bt_grasp.verifier.compiled.state import restartable
from bt_grasp.verifier.symbolic.model import RUNNING, K

_OTHER = ("other than every label a condition still compares it with",)
# kinds whose `a` slot holds data re-initialised when they start (RESET)
_SLOT_A = {K.SEQ, K.SEL, K.PAR, K.REPEAT, K.TIMEOUT, K.LEAF, K.SWITCH, K.BRETRY, K.RECOV, K.PIPE,
           K.TPAR}
_SLOT_B = {K.RECOV, K.PIPE, K.TPAR, K.TIMEOUT}


class KeyMaker:
    """Builds keys ((nodes, board, decision, reason, asking, pending), counters) from a Ticker's
    slots."""

    def __init__(self, ticker: Any, read_keys: set[str], limits: Any) -> None:
        t, m = ticker, ticker.m
        self.t, self.m = t, m
        self.read = sorted(read_keys)
        n = m.n
        self.paths: list[frozenset[int]] = []
        for i in range(n):
            path, cur = set(), i
            while cur >= 0:
                path.add(cur)
                cur = m.parent[cur]
            self.paths.append(frozenset(path))
        self.reads_status = [m.parent[i] >= 0 and m.kind[m.parent[i]] == K.PAR for i in range(n)]
        self.parent = list(m.parent)
        self.kept = [m.kind[i] == K.RROBIN for i in range(n)]
        self.quiet = [not self.kept[i] and not self.reads_status[i] for i in range(n)]
        # nodes whose `a` slot counts ticks left: calls that may span ticks, timeouts
        self.timed = frozenset(i for i in range(n) if (m.kind[i] == K.LEAF and m.max_ticks[i] > 1)
                               or m.kind[i] == K.TIMEOUT)
        self.forever = frozenset(i for i in range(n) if m.kind[i] == K.REPEAT and m.param[i] is None)
        # which slots a node shows while it runs or is on the path being ticked, worked out once:
        # a key is made at every point, and most nodes of a tree are quiet and idle there
        self.loud = frozenset(i for i in range(n) if not self.quiet[i])
        self.has_a = [i not in self.forever and m.kind[i] in _SLOT_A for i in range(n)]
        self.has_b = [m.kind[i] in _SLOT_B for i in range(n)]
        self.active: dict[str, frozenset[int]] = {}
        # counters are compared only with these limits: values beyond the largest are alike
        self.caps = [limits.actions, limits.perception_streak]
        retry_nodes: dict[int, list[int]] = {}
        budget_cap: dict[int, int] = {}
        for i in range(n):
            if m.kind[i] == K.RETRY:
                retry_nodes.setdefault(m.scope[i], []).append(i)
            elif m.kind[i] == K.BUDGET:
                budget_cap[m.scope[i]] = max(budget_cap.get(m.scope[i], 0), m.param[i])
        self.caps += [max(m.param[i] for i in retry_nodes.get(s, ())) if s in retry_nodes else 0
                      for s in range(len(m.retry_scopes))]
        self.caps += [budget_cap.get(s, 0) for s in range(len(m.budget_scopes))]
        # a retry scope whose only node starts at most once per episode: once that node has
        # finished, nothing reads the scope's count again
        self.once = {2 + s: ids[0] for s, ids in retry_nodes.items()
                     if len(ids) == 1 and not restartable(m.nodes[ids[0]])}
        liveness = Liveness(m.nodes, set(self.read))
        self.guards = {key: [[(m.index[comp.name], j, leaf) for comp, j, leaf in per_reader]
                             for per_reader in readers]
                       for key, readers in liveness.guards.items()}
        # keys some reader can always see, but whose every such reader compares it with labels
        # (a label condition, a switch): per reader the labels it tells apart (None: it sees the
        # whole value) and its guards (a reader whose guard holds cannot see the value)
        self.labelled: dict[str, list[tuple[frozenset[str] | None, list[tuple[int, int, bool]]]]] = {}
        for key, readers in liveness.readers.items():
            if key in self.guards:
                continue
            conds: list[tuple[frozenset[str] | None, list[tuple[int, int, bool]]]] = []
            for node, guards in readers:
                i = m.index[node.name]
                labels = self._labels(i, key)
                if labels is None and not guards:
                    break
                conds.append((labels, [(m.index[c.name], j, leaf) for c, j, leaf in guards]))
            else:
                self.labelled[key] = conds

    def _labels(self, i: int, key: str) -> frozenset[str] | None:
        """The labels node i compares the value at `key` with (LabelIs and Switch compare its
        text), or None: it reads more of it."""
        m = self.m
        if m.kind[i] == K.COND and m.param[i][0] == key:
            return frozenset((str(m.param[i][2]),))
        if m.kind[i] == K.SWITCH and m.param[i][0] == key:
            return frozenset(m.param[i][1])
        return None

    def _holds(self, guard: tuple[int, int, bool], active: frozenset[int]) -> bool:
        """liveness._holds on the model: the guard's composite has not passed its writer yet."""
        ci, j, leaf = guard
        t = self.t
        if ci in active:
            at = t.a[ci]
        elif t.st[ci] == RUNNING and self.m.memory[ci]:
            child = t.cur[ci]
            if child < 0:
                return False
            at = self.m.kids[ci].index(child)
        else:
            return True
        return at < j or (at == j and leaf)

    def dead(self, key: str, active: frozenset[int]) -> bool:
        guards = self.guards.get(key)
        if guards is None:
            return False
        # every reader has a guard that holds (plain loops: a key is made at every point, and
        # generator expressions cost more than the checks they wrap)
        holds = self._holds
        for per_reader in guards:
            for g in per_reader:
                if holds(g, active):
                    break
            else:
                return False
        return True

    def _label_class(self, key: str, value: Any, active: frozenset[int]) -> Any:
        """A label that only label conditions and switches can still see, as far as they tell
        it apart: itself when one that can still run compares it with it, else one class for
        every other value (they all fail, or take the default case, alike)."""
        if value is None:  # a switch takes its default on it, a condition compares "None"
            return None
        text = str(value)
        holds = self._holds
        shown: Any = _OTHER
        for labels, guards in self.labelled[key]:
            if any(holds(g, active) for g in guards):
                continue
            if labels is None:  # a reader that sees the whole value
                return value_key(value)
            if text in labels:
                shown = text
        return shown

    def key(self, asking: str | None = None, pending: tuple[str, ...] = ()) -> tuple[Any, ...]:
        t, m = self.t, self.m
        st, cur, a, b = t.st, t.cur, t.a, t.b
        active: frozenset[int] = frozenset()
        if asking:
            active = self.active.get(asking) or frozenset()
            if not active:
                active = self.active[asking] = self.paths[m.index[asking.split("#", 1)[0]]]
        # a quiet node shows only while it runs or is on the active path (the running ones found
        # by a comprehension over the statuses, cheaper than testing every node in a loop)
        shown_nodes = [i for i, s in enumerate(st) if s == RUNNING]
        shown_nodes.extend(active)
        shown_nodes.extend(self.loud)
        nodes: list[tuple[Any, ...]] = []
        reads_status, kept, has_a, has_b = self.reads_status, self.kept, self.has_a, self.has_b
        parent = self.parent
        for i in sorted(set(shown_nodes)):
            s = st[i]
            running = s == RUNNING
            if running or i in active:
                shown = s if reads_status[i] else running
                keep = (a[i], b[i]) if kept[i] else ()
                nodes.append((i, shown, cur[i], a[i] if has_a[i] else None,
                              b[i] if has_b[i] else None, keep))
            else:
                # A parallel reads its children's finished statuses only while it runs (or is
                # being ticked): started again, it stops every child first, so under an idle
                # parallel a finished child is alike to one never started (stopping a subtree
                # with nothing running changes only slots no key shows).
                p = parent[i]
                shown = s if reads_status[i] and (st[p] == RUNNING or p in active) else running
                nodes.append((i, shown, (a[i], b[i]) if kept[i] else ()))
        bb, dead, labelled = t.bb, self.dead, self.labelled
        board = tuple([(k, value_key(bb[k]) if k not in labelled else self._label_class(k, bb[k], active))
                       for k in self.read if k in bb and not dead(k, active)])
        rest = (tuple(nodes), board, t.decision, t.reason if t.decision else None, asking, pending)
        return (rest, self.counters(active))

    def counters(self, active: frozenset[int] = frozenset()) -> tuple[Any, ...]:
        """The counters as far as any comparison ahead can tell them apart: capped at the
        largest limit they are compared with, a finished once-only retry scope as "done"."""
        t = self.t
        values = t.counters()
        out: list[Any] = [v if v < cap else cap for v, cap in zip(values, self.caps, strict=True)]
        for c, node in self.once.items():
            if values[c] >= 1 and node not in active and t.st[node] != RUNNING:
                out[c] = "done"
        return tuple(out)
