"""The bt_grasp decorators of a modelled tree (bt_grasp/verifier/symbolic/ticker.py): retry, the simple
decorators and BT.CPP's, timeout, budget and switch, statement for statement as the runtime
classes of bt_grasp.composites tick them, on the ticker's slots (see its module docstring).
"""

from __future__ import annotations

from bt_grasp.composites import DEADLINE_OUTCOMES, DEADLINE_PASSED
from bt_grasp.verifier.symbolic.model import FAILURE, INVALID, RUNNING, SUCCESS, K
from bt_grasp.verifier.symbolic.ticker_state import TickerState

ENTRY, AFTER = 1, 2  # which of a timeout's checks asks whether its deadline has passed


class DecoratorsMixin(TickerState):
    """Ticks of the decorators; mixed into the Ticker, whose state and stop() they use."""

    def _t_retry(self, i: int) -> None:
        c = self.m.kids[i][0]
        scope, attempts = self.m.scope[i], self.m.param[i]
        if self.st[c] != RUNNING:
            if self.compare(i, 2 + scope, self.rstarts[scope], attempts) or self.decision is not None:
                self.finish(i, FAILURE)
                return
            self.rstarts[scope] += 1
        self.dispatch[c](c)
        update = self.after[i]  # _retry_after, as the search may wrap it (symbolic/machine.py)
        assert update is not None
        update(i)

    def _retry_after(self, i: int) -> None:
        scope, attempts = self.m.scope[i], self.m.param[i]
        s = self.st[self.m.kids[i][0]]
        if s == FAILURE:
            spent = self.compare(i, 2 + scope, self.rstarts[scope], attempts)  # its update compares too
            s = RUNNING if not spent and self.decision is None else FAILURE
        self.finish(i, s)

    def _t_decorator(self, i: int) -> None:
        """py_trees' Decorator.tick with each decorator's update (and BT.CPP's retry's)."""
        c = self.m.kids[i][0]
        if self.st[i] != RUNNING and self.m.kind[i] in (K.REPEAT, K.BRETRY):
            self.a[i] = 0  # initialise: successes / try count
        self.dispatch[c](c)
        self._decorator_after(i)

    def _decorator_after(self, i: int) -> None:
        st, a = self.st, self.a
        kind = self.m.kind[i]
        s = st[self.m.kids[i][0]]
        if kind == K.INV:
            new = FAILURE if s == SUCCESS else SUCCESS if s == FAILURE else s
        elif kind == K.FSUC:
            new = SUCCESS if s == FAILURE else s
        elif kind == K.FFAIL:
            new = FAILURE if s == SUCCESS else s
        elif kind == K.REPEAT:
            new = s
            if s == SUCCESS:
                a[i] += 1
                times = self.m.param[i]
                new = SUCCESS if times is not None and a[i] >= times else RUNNING
        elif kind == K.BRETRY:
            new = s
            if s == FAILURE:
                a[i] += 1
                attempts = self.m.param[i]
                new = RUNNING if attempts < 0 or a[i] < attempts else FAILURE
        else:  # opaque decorator: transparent
            new = s
        if new != RUNNING:
            self.stop(i, new)
        st[i] = new

    def _t_timeout(self, i: int) -> None:
        c = self.m.kids[i][0]
        starting = self.st[i] != RUNNING
        if starting:
            self.a[i] = 0
            self.gen[i] += 1
        else:
            self.a[i] += 1
        if self.due(i, starting, ENTRY):
            self.halt_timeout_child(i)
            self.finish(i, FAILURE)
            return
        self.dispatch[c](c)
        self._timeout_after(i)

    def _timeout_after(self, i: int) -> None:
        s = self.st[self.m.kids[i][0]]
        if s == RUNNING and self.due(i, False, AFTER):
            self.halt_timeout_child(i)
            s = FAILURE
        self.finish(i, s)

    def due(self, i: int, starting: bool, check: int) -> bool:
        """LogicalTimeout._due; `check` (ENTRY / AFTER the child) is in the timeout's `b` slot
        while the oracle is asked: the two questions look alike but have different futures."""
        seconds, allowance = self.m.param[i]
        if seconds <= 0:
            return True
        if starting:
            return False
        if self.a[i] >= allowance:
            return True
        self.b[i] = check
        try:
            return self.choose(f"{self.m.name[i]}#deadline", DEADLINE_OUTCOMES) == DEADLINE_PASSED
        finally:
            self.b[i] = 0

    def halt_timeout_child(self, i: int) -> None:
        c = self.m.kids[i][0]
        if self.st[c] == RUNNING:
            previous, self.halt_reason = self.halt_reason, "timeout"
            try:
                self.stop(c, INVALID)
            finally:
                self.halt_reason = previous
        self.set(f"{self.m.name[i]}.label", "TIMEOUT")

    def _t_budget(self, i: int) -> None:
        c = self.m.kids[i][0]
        # a choice the search stops at leaves the scope pushed: every advance restores `scopes`
        self.scopes.append((self.m.scope[i], self.m.param[i]))
        self.dispatch[c](c)
        self._budget_after(i)

    def _budget_after(self, i: int) -> None:
        """The rest of the budget's tick, its scope still on `scopes` (pushed as it began)."""
        self.scopes.pop()
        self.finish(i, self.st[self.m.kids[i][0]])

    def _t_switch(self, i: int) -> None:
        kids = self.m.kids[i]
        if self.st[i] != RUNNING or self.a[i] < 0:
            key, cases, default = self.m.param[i]
            label = self.bb.get(key)
            self.a[i] = cases.get(str(label), default) if label is not None else default
        if self.a[i] < 0:
            self.cur[i] = -1
            self.finish(i, FAILURE)
            return
        c = kids[self.a[i]]
        self.cur[i] = c
        self.dispatch[c](c)
        self._switch_after(i)

    def _switch_after(self, i: int) -> None:
        self.finish(i, self.st[self.m.kids[i][self.a[i]]])
