"""The BT.CPP / Nav2 controls of bt_grasp.interop.controls, as the model ticks them.

Statement for statement the tick loops of RecoveryNode, PipelineSequence, RoundRobin and
ThresholdParallel, on the ticker's slots (bt_grasp/verifier/symbolic/ticker.py): `a` and `b` hold what the
runtime class keeps as attributes (see the ticker's module docstring).
"""

from __future__ import annotations

from bt_grasp.verifier.symbolic.model import FAILURE, INVALID, RUNNING, SUCCESS, K
from bt_grasp.verifier.symbolic.ticker_state import TickerState


class ControlsMixin(TickerState):
    """Ticks of the BT.CPP controls; mixed into the Ticker, whose state and stop() they use."""

    def reset_state(self, i: int) -> None:
        kind = self.m.kind[i]
        if kind == K.RECOV:
            self.a[i] = self.b[i] = 0  # retry count, index
        elif kind == K.PIPE:
            self.a[i] = 0  # last running (the index is set at every tick)
        elif kind == K.RROBIN:
            self.a[i] = self.b[i] = 0  # index, failures in a row
        elif kind == K.TPAR:
            self.b[i] = ()  # finished children

    def control_finish(self, i: int, status: int) -> None:
        """_Control._finish: a finished control halts running children and resets itself."""
        if status != RUNNING:
            for c in self.m.kids[i]:
                if self.st[c] == RUNNING:
                    self.stop(c, INVALID)
            self.reset_state(i)
            self.stop(i, status)
        self.st[i] = status

    def _t_recov(self, i: int) -> None:
        if self.st[i] != RUNNING:
            self.reset_state(i)
        self._recov_loop(i, False)

    def _recov_loop(self, i: int, resumed: bool) -> None:
        """RecoveryNode's loop from its child b[i]: ticked now, or (`resumed`) just returned."""
        a, b = self.a, self.b
        kids, retries = self.m.kids[i], self.m.param[i]
        result = FAILURE
        while b[i] < 2 and a[i] <= retries:
            c = kids[b[i]]
            self.cur[i] = c
            s = self.tick_child(c, resumed)
            resumed = False
            if s == RUNNING:
                result = RUNNING
                break
            if b[i] == 0:
                if s == SUCCESS:
                    result = SUCCESS
                    break
                if a[i] < retries:
                    b[i] = 1
                    continue
                result = FAILURE
                break
            if s == SUCCESS:
                a[i] += 1
                b[i] = 0
                continue
            result = FAILURE
            break
        self.control_finish(i, result)

    def _t_pipe(self, i: int) -> None:
        if self.st[i] != RUNNING:
            self.reset_state(i)
        self.b[i] = 0
        self._pipe_loop(i, False)

    def _pipe_loop(self, i: int, resumed: bool) -> None:
        """PipelineSequence's loop from its child b[i]: ticked now, or (`resumed`) just returned."""
        a, b = self.a, self.b
        kids = self.m.kids[i]
        result = SUCCESS
        while b[i] < len(kids):
            c = kids[b[i]]
            self.cur[i] = c
            s = self.tick_child(c, resumed)
            resumed = False
            if s == FAILURE:
                result = FAILURE
                break
            if s == RUNNING and b[i] >= a[i]:
                a[i] = b[i]
                result = RUNNING
                break
            b[i] += 1
        self.control_finish(i, result)

    def _t_rrobin(self, i: int) -> None:
        self._rrobin_loop(i, False)

    def _rrobin_loop(self, i: int, resumed: bool) -> None:
        """RoundRobin's loop from its child a[i]: ticked now, or (`resumed`) just returned."""
        st, a, b = self.st, self.a, self.b
        kids = self.m.kids[i]
        n = len(kids)
        result = FAILURE
        while b[i] < n:
            c = kids[a[i]]
            self.cur[i] = c
            s = self.tick_child(c, resumed)
            resumed = False
            if s == RUNNING:
                result = RUNNING
                break
            a[i] = (a[i] + 1) % n
            if s == SUCCESS:
                b[i] = 0
                result = SUCCESS
                break
            b[i] += 1
        if result == SUCCESS:  # keep the position: that is the round robin
            for c in kids:
                if st[c] == RUNNING:
                    self.stop(c, INVALID)
            self.composite_stop(i, SUCCESS)
            st[i] = SUCCESS
            return
        self.control_finish(i, result)

    def _t_tpar(self, i: int) -> None:
        if self.st[i] != RUNNING:
            self.reset_state(i)
        self.a[i] = 0  # the loop position (ThresholdParallel.index)
        self._tpar_loop(i, False)

    def _tpar_loop(self, i: int, resumed: bool) -> None:
        """ThresholdParallel's loop; `resumed`: its child a[i] - 1 just returned."""
        st, a = self.st, self.a
        kids = self.m.kids[i]
        need, max_failure = self.m.param[i]
        n = len(kids)
        while a[i] < n or resumed:
            if resumed:
                resumed = False
                j, c = a[i] - 1, kids[a[i] - 1]
                done = dict(self.b[i])
            else:
                j, c = a[i], kids[a[i]]
                a[i] += 1
                done = dict(self.b[i])
                if j in done:
                    continue
                self.cur[i] = c
                self.dispatch[c](c)
            if st[c] in (SUCCESS, FAILURE):
                done[j] = st[c]
                self.b[i] = tuple(sorted(done.items()))
        finished = dict(self.b[i]).values()
        successes = sum(1 for s in finished if s == SUCCESS)
        failures = sum(1 for s in finished if s == FAILURE)
        if successes >= need:
            result = SUCCESS
        elif failures >= max_failure or n - failures < need:
            result = FAILURE
        else:
            result = RUNNING
        self.control_finish(i, result)

