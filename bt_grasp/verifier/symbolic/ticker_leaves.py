"""The leaves of a modelled tree (bt_grasp/verifier/symbolic/ticker.py), as the Runner ticks them.

Statement for statement Leaf.tick with its guards (the episode's budgets, named budgets, the
perception streak), the oracle's questions (`<id>#running`, then the outcome), `simulate` for
leaf classes that write more than their outcome, and the conditions, decisions and opaque BT.CPP
leaves, on the ticker's slots (`a`: a call's ticks running; `gen`: its activation).
"""

from __future__ import annotations

from typing import Any

from bt_grasp.blackboard import ref_key
from bt_grasp.interop.nodes import OUTCOME_STATUS
from bt_grasp.nodes.base import ENDS_NOW, STILL_RUNNING
from bt_grasp.nodes.terminal import quote_goal
from bt_grasp.outcomes import Decision
from bt_grasp.verifier.symbolic.model import FAILURE, INVALID, RUNNING, SUCCESS
from bt_grasp.verifier.symbolic.ticker_state import TickerState

_STATUS = {"SUCCESS": SUCCESS, "FAILURE": FAILURE, "RUNNING": RUNNING, "INVALID": INVALID}
_OPAQUE_STATUS = {o: _STATUS[s.name] for o, s in OUTCOME_STATUS.items()}


class _Board:
    """The modelled blackboard as the compiled leaves read it inside `simulate`."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def resolve(self, value: Any) -> Any:
        key = ref_key(value)
        return self._data.get(key) if key is not None else value

    def set(self, key: str, value: Any) -> None:  # pragma: no cover - simulate only returns writes
        raise AssertionError(f"simulate wrote {key} directly")


class _Asker:
    """The oracle a compiled leaf's `simulate` asks (the Watchdog's semantic verdict)."""

    def __init__(self, ticker: Any) -> None:
        self.ticker = ticker

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        return str(self.ticker.choose(node_id, alphabet))


class LeavesMixin(TickerState):
    """Ticks of the leaves; mixed into the Ticker, whose state, ledger and oracle they use."""

    def _t_leaf(self, i: int) -> None:
        st = self.st
        if st[i] == RUNNING:
            if self.decision is not None:
                self.halt(i, "decided")
                new = FAILURE
            else:
                new = self.oracle_tick(i)
        elif self.decision is not None:
            new = FAILURE
        elif not self.pass_guards(i):
            new = FAILURE
        else:
            self.a[i] = 0
            self.gen[i] += 1
            new = self.oracle_tick(i)
        st[i] = new

    def oracle_tick(self, i: int) -> int:
        m = self.m
        name = m.name[i]
        ticks = self.a[i]
        if ticks + 1 < m.max_ticks[i] and \
                self.choose(f"{name}#running", (ENDS_NOW, STILL_RUNNING)) == STILL_RUNNING:
            self.a[i] = ticks + 1
            return RUNNING
        outcome = self.choose(name, m.alphabet[i])
        if m.simulates[i]:
            res = self._simulate(i, outcome)
            for key, value in res.writes.items():
                self.set(key, value)
            status = SUCCESS if res.status.name == "SUCCESS" else FAILURE
        else:
            status = SUCCESS if outcome in m.success[i] else FAILURE
        if m.out_key[i] is not None:
            self.set(m.out_key[i], outcome)
        return status

    def _simulate(self, i: int, outcome: str) -> Any:
        ctx = self.sim_ctx
        ctx.blackboard, ctx.oracle = _Board(self.bb), self._asker
        ctx.events, ctx.all_events = [], []
        return self.m.nodes[i].simulate(outcome)

    def pass_guards(self, i: int) -> bool:
        m, limits = self.m, self.limits
        if m.action[i]:
            if self.compare(i, 0, self.actions, limits.actions):
                self.decide(Decision.WAIT_CLARIFY, limits.actions_spent())
                return False
            base = 2 + len(m.retry_scopes)
            for scope, limit in self.scopes:
                if self.compare(i, base + scope, self.scoped[scope], limit):
                    self.set(f"{m.name[i]}.error", f"budget '{m.budget_scopes[scope]}' spent")
                    self.refusals += 1
                    return False
            self.actions += 1
            for scope, _ in self.scopes:
                self.scoped[scope] += 1
            self.streak = 0
        elif m.perception[i]:
            if self.compare(i, 1, self.streak, limits.perception_streak):
                self.decide(Decision.WAIT_CLARIFY, f"perception loop: {limits.perception_streak} "
                            "perception calls in a row without a manipulation")
                return False
            self.streak += 1
            self.pcalls += 1
        if m.primitive[i] >= 0:
            self.prim[m.primitive[i]] += 1
        return True

    def _t_cond(self, i: int) -> None:
        if self.decision is not None:
            new = FAILURE
        else:
            key, raw, label = self.m.param[i]
            actual = self.bb.get(key) if key is not None else raw
            new = SUCCESS if str(actual) == str(label) else FAILURE
        self.st[i] = new

    def _t_term(self, i: int) -> None:
        if self.decision is not None:
            new = FAILURE
        else:
            decision, reason = self.m.param[i]
            key = ref_key(reason)
            self.decide(decision, quote_goal(str(self.bb.get(key) if key is not None else reason), self.bb))
            new = SUCCESS
        self.st[i] = new

    def _t_opaque(self, i: int) -> None:
        m = self.m
        if self.st[i] != RUNNING:  # OpaqueLeaf.initialise counts the start
            self.prim[m.primitive[i]] += 1
            self.gen[i] += 1
        if self.decision is not None:
            new = FAILURE
        else:
            new = _OPAQUE_STATUS.get(self.choose(m.name[i], m.alphabet[i]), FAILURE)
        self.st[i] = new
