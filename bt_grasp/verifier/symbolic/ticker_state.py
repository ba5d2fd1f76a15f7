"""What the Ticker's parts share: its slots, its ledger and the hooks each part calls.

The Ticker (ticker.py) is assembled from mixins, one per family of nodes (ticker_leaves.py,
ticker_decorators.py, ticker_controls.py); each reads and writes the same plain lists, declared
once here, and calls the Ticker's stop / finish / halt / decide / set / compare / choose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bt_grasp.outcomes import Decision


class TickerState:
    """The slots and hooks of a Ticker (see ticker.py's module docstring for the slots)."""

    # per node: status, current child, two data slots, activation count, tick dispatch
    st: list[int]
    cur: list[int]
    a: list[Any]
    b: list[Any]
    gen: list[int]
    dispatch: list[Any]
    m: Any  # the Model
    # the run: blackboard, limits, decision and ledger
    bb: dict[str, Any]
    limits: Any
    decision: Decision | None
    halt_reason: str
    actions: int
    streak: int
    pcalls: int
    refusals: int
    rstarts: list[int]
    scopes: list[tuple[int, int]]
    scoped: list[int]
    prim: list[int]
    sim_ctx: Any
    _asker: Any
    choose: Callable[[str, tuple[str, ...]], str]
    compare: Callable[[int, int, int, int], bool]
    after: list[Callable[[int], None] | None]  # per node: the rest of its tick once its child returned
    # the Ticker's own steps (ticker.py), which every part calls
    stop: Callable[[int, int], None]
    composite_stop: Callable[[int, int], None]
    finish: Callable[[int, int], None]
    halt_child: Callable[[int, int], None]
    halt: Callable[[int, str], None]
    decide: Callable[[Decision, str], None]
    set: Callable[[str, Any], None]

    def tick_child(self, c: int, resumed: bool) -> int:
        """Child c's status in its parent's loop: ticked now, or (`resumed`) it just returned."""
        if not resumed:
            self.dispatch[c](c)
        return self.st[c]
