"""A node's resumable state as plain data, so a run can be saved, compared and restored.

The verifier explores runs by restoring saved states and compares states to merge runs whose
futures are equal. Both need every node to say, as plain hashable data, everything it needs to
continue exactly where it stopped — mid-tick included. No interpreter internals are read: a
node's loop position is an attribute, never a generator local.
"""

from __future__ import annotations

from typing import Any, ClassVar

from py_trees.common import Status

# One node's state: (status, index of current_child or None, RESET values, KEPT values).
NodeState = tuple[Status, "int | None", tuple[Any, ...], tuple[Any, ...]]


class Resumable:
    """Mixin for behaviours: `state()` returns plain data, `restore(state)` puts it back.

    RESET names the attributes a node re-initialises when it starts again: they matter only
    while it is RUNNING or in the middle of a tick. KEPT names attributes that survive
    completion (a round robin's position): they always matter. Values must be immutable plain
    data (ints, floats, strings, None, tuples).
    """

    RESET: ClassVar[tuple[str, ...]] = ()
    KEPT: ClassVar[tuple[str, ...]] = ()
    # A parent that reads its children's finished statuses (a parallel skips children that
    # already succeeded): for its children SUCCESS, FAILURE and INVALID are different states.
    READS_CHILD_STATUS: ClassVar[bool] = False

    def state(self) -> NodeState:
        child = getattr(self, "current_child", None)
        return (self.status,  # type: ignore[attr-defined]
                None if child is None else self.children.index(child),  # type: ignore[attr-defined]
                tuple([getattr(self, a) for a in self.RESET]) if self.RESET else (),
                tuple([getattr(self, a) for a in self.KEPT]) if self.KEPT else ())

    def restore(self, state: NodeState) -> None:
        status, child, reset, kept = state
        self.status = status  # type: ignore[attr-defined]
        if child is not None:
            self.current_child = self.children[child]  # type: ignore[attr-defined]
        elif hasattr(self, "current_child"):
            self.current_child = None
        for name, value in zip(self.RESET, reset, strict=True):
            setattr(self, name, value)
        for name, value in zip(self.KEPT, kept, strict=True):
            setattr(self, name, value)

    def future_state(self, active: bool, now: float) -> tuple[Any, ...]:
        """The part of state() that can change the future.

        `active`: the node is on the path of the tick in progress. A node that neither runs nor
        is active re-initialises its RESET data before it is ticked again, so that data is
        dropped; `now` lets clock-valued data be compared relative to the present.
        """
        status, child, reset, kept = self.state()
        parent = getattr(self, "parent", None)
        running = status is Status.RUNNING
        shown: Any = status.value if getattr(parent, "READS_CHILD_STATUS", False) else running
        if running or active:
            return (shown, child, self._canonical(reset, now), kept)
        return (shown, kept)

    def _canonical(self, reset: tuple[Any, ...], now: float) -> tuple[Any, ...]:
        """Override to drop RESET data that cannot matter or make clock times relative."""
        return reset
