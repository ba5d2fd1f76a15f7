"""py_trees' Sequence, Selector, Parallel and simple decorators with their state as plain data.

Same semantics, tick for tick, as py_trees' own classes (which they subclass, so traces, DOT
and the Runner see ordinary py_trees behaviours); the difference is that the loop position is
an attribute (`index`) rather than a generator local, so a run stopped mid-tick can be
described, compared and restored (bt_grasp.resumable).
"""

from __future__ import annotations

from collections.abc import Iterator

import py_trees
from py_trees.behaviour import Behaviour
from py_trees.common import Status

from bt_grasp.resumable import Resumable


def finish_tick(node: Behaviour, new_status: Status) -> None:
    """The end of py_trees' tick: a node no longer running stops (halting what it must), then
    takes its new status."""
    if new_status != Status.RUNNING:
        node.stop(new_status)
    node.status = new_status


def _end_childless(node: py_trees.composites.Composite, status: Status) -> Iterator[Behaviour]:
    """A composite without children ends in the tick it starts, as py_trees' own does (a
    sequence or parallel succeeds, a selector fails)."""
    node.current_child = None
    node.stop(status)
    yield node


class _Looping(Resumable):
    """Sequence and selector alike: a loop over the children whose position is `self.index`."""

    RESET = ("index",)

    def __init__(self, name: str, memory: bool, children: list[Behaviour]) -> None:
        # cooperative: the py_trees composite after this mixin in the MRO takes these arguments
        super().__init__(name=name, memory=memory, children=children)  # type: ignore[call-arg]
        self.index = 0

    def halt_child(self, child: Behaviour) -> None:
        """Stop a child this node no longer ticks (a reactive composite says why: see composites)."""
        child.stop(Status.INVALID)


class Sequence(_Looping, py_trees.composites.Sequence):
    """py_trees' Sequence, tick for tick; the loop position is `self.index`."""

    def tick(self) -> Iterator[Behaviour]:
        kids = self.children
        if self.status != Status.RUNNING:
            self.index = 0
            self.current_child = kids[0] if kids else None
            for child in kids:
                if child.status != Status.INVALID:
                    child.stop(Status.INVALID)
            self.initialise()
        elif self.memory and self.current_child is not None:
            self.index = kids.index(self.current_child)
        else:
            self.index = 0
            self.current_child = kids[0] if kids else None
        if not kids:
            yield from _end_childless(self, Status.SUCCESS)
            return
        while self.index < len(kids):
            child = kids[self.index]
            for node in child.tick():
                yield node
                if node is child and node.status != Status.SUCCESS:
                    if not self.memory:  # kill dangling runners after this child
                        for later in kids[self.index + 1:]:
                            if later.status != Status.INVALID:
                                self.halt_child(later)
                    if node.status != Status.RUNNING:
                        self.stop(node.status)
                    else:
                        self.status = node.status
                    yield self
                    return
            if self.index + 1 < len(kids):
                self.current_child = kids[self.index + 1]
            self.index += 1
        self.stop(Status.SUCCESS)
        yield self

    def stop(self, new_status: Status = Status.INVALID) -> None:
        py_trees.composites.Composite.stop(self, new_status)  # py_trees' own, minus its debug log


class Selector(_Looping, py_trees.composites.Selector):
    """py_trees' Selector, tick for tick; the loop position is `self.index`.

    py_trees keeps the child that ran last tick in a local (`previous`); here it is
    `current_child`, which the loop does not change until it returns.
    """

    def tick(self) -> Iterator[Behaviour]:
        kids = self.children
        if self.status != Status.RUNNING:
            self.current_child = kids[0] if kids else None
            self.initialise()
        if not kids:
            yield from _end_childless(self, Status.FAILURE)
            return
        if self.memory:
            assert self.current_child is not None
            self.index = kids.index(self.current_child)
            for child in kids[:self.index]:
                if child.status != Status.INVALID:
                    child.stop(Status.INVALID)
        else:
            self.index = 0
        while self.index < len(kids):
            child = kids[self.index]
            for node in child.tick():
                yield node
                if node is child and node.status in (Status.RUNNING, Status.SUCCESS):
                    if self.current_child is not child:
                        # a higher priority child took over: invalidate everything after it
                        for later in kids[self.index + 1:]:
                            if later.status != Status.INVALID:
                                self.halt_child(later)
                        self.current_child = child
                    if node.status == Status.SUCCESS:
                        self.stop(node.status)
                    else:
                        self.status = node.status
                    yield self
                    return
            self.index += 1
        self.stop(Status.FAILURE)
        self.current_child = kids[-1]
        yield self

    def stop(self, new_status: Status = Status.INVALID) -> None:
        py_trees.composites.Composite.stop(self, new_status)  # py_trees' own, minus its debug log


class Parallel(Resumable, py_trees.composites.Parallel):
    """py_trees' Parallel, tick for tick; the loop position is `self.index`."""

    RESET = ("index",)
    READS_CHILD_STATUS = True

    def __init__(self, name: str, policy: py_trees.common.ParallelPolicy.Base,
                 children: list[Behaviour]) -> None:
        super().__init__(name=name, policy=policy, children=children)
        self.index = 0

    def tick(self) -> Iterator[Behaviour]:
        kids = self.children
        if self.status != Status.RUNNING:
            for child in kids:
                if child.status != Status.INVALID:
                    child.stop(Status.INVALID)
            self.current_child = None
            self.initialise()
        if not kids:
            yield from _end_childless(self, Status.SUCCESS)
            return
        self.index = 0
        while self.index < len(kids):
            child = kids[self.index]
            if not (self.policy.synchronise and child.status == Status.SUCCESS):
                yield from child.tick()
            self.index += 1
        finish_tick(self, self._verdict())
        yield self

    def _verdict(self) -> Status:
        kids = self.children
        self.current_child = kids[-1]
        failed = next((c for c in kids if c.status == Status.FAILURE), None)
        if failed is not None:
            self.current_child = failed
            return Status.FAILURE
        if isinstance(self.policy, py_trees.common.ParallelPolicy.SuccessOnAll):
            return Status.SUCCESS if all(c.status == Status.SUCCESS for c in kids) else Status.RUNNING
        for child in reversed(kids):  # SuccessOnOne
            if child.status == Status.SUCCESS:
                self.current_child = child
                return Status.SUCCESS
        return Status.RUNNING

    def stop(self, new_status: Status = Status.INVALID) -> None:
        """py_trees' Parallel.stop minus its debug log: halt running children, then stop."""
        for child in self.children:
            if child.status == Status.RUNNING:
                child.stop(Status.INVALID)
        py_trees.composites.Composite.stop(self, new_status)


class QuietDecorator(py_trees.decorators.Decorator):
    """py_trees' Decorator.tick and .stop without their debug logs (and tick without its scan of
    every Status for an invalid return: update() returns a Status by type), whose formatting is
    a measurable share of the verifier's time. Same effect, line for line."""

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        yield from self.decorated.tick()
        finish_tick(self, self.update())
        yield self

    def stop(self, new_status: Status) -> None:
        self.terminate(new_status)
        decorated = self.decorated
        if new_status == Status.INVALID:
            decorated.stop(new_status)
        if decorated.status == Status.RUNNING:
            decorated.stop(Status.INVALID)
        self.status = new_status


class Inverter(Resumable, QuietDecorator, py_trees.decorators.Inverter):
    """py_trees' Inverter; stateless beyond its status."""


class ForceSuccess(Resumable, QuietDecorator, py_trees.decorators.FailureIsSuccess):
    """py_trees' FailureIsSuccess; stateless beyond its status."""


class ForceFailure(Resumable, QuietDecorator, py_trees.decorators.SuccessIsFailure):
    """py_trees' SuccessIsFailure; stateless beyond its status."""
