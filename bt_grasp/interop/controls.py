"""BehaviorTree.CPP / Nav2 control nodes as py_trees behaviours, with BT.CPP's own semantics.

Imported BT.CPP trees must keep *their* semantics, not ours: RetryUntilSuccessful and Nav2's
RecoveryNode refill their counters whenever they are halted or finish, PipelineSequence re-ticks
earlier children, RoundRobin remembers where it stopped. These classes reproduce that (from the
BT.CPP v4 and Nav2 documentation) so that `bt-grasp verify` explores what the C++ tree would do —
including runs where a preemption refills a recovery budget — instead of a bt_grasp idealisation.

Every behaviour's state is plain data (bt_grasp.resumable): counters and loop positions are
attributes, so the verifier sees them (two states that differ only in a retry counter have
different futures) and can restore them.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

import py_trees
from py_trees.behaviour import Behaviour
from py_trees.common import Status

from bt_grasp.py_trees_controls import QuietDecorator
from bt_grasp.resumable import NodeState, Resumable


def _stop_if_running(node: Behaviour) -> None:
    """BT.CPP's haltChild(): halt a RUNNING child; a finished child only forgets its status."""
    if node.status == Status.RUNNING:
        node.stop(Status.INVALID)


# -- decorators --------------------------------------------------------------------------------

class BtcppRetry(Resumable, QuietDecorator, py_trees.decorators.Decorator):
    """BT.CPP RetryUntilSuccessful: restart a failing child up to `num_attempts` times (-1: forever).

    The counter is refilled whenever the node finishes or is halted — the BT.CPP behaviour that
    bt_grasp's own `retry` deliberately does not have. One attempt per tick (the node returns
    RUNNING between attempts, as BT.CPP does for asynchronous children) so an infinite retry
    shows up as a loop to the verifier instead of hanging a tick.
    """

    RESET = ("try_count",)

    def __init__(self, name: str, child: Behaviour, num_attempts: int) -> None:
        super().__init__(name=name, child=child)
        self.num_attempts = num_attempts
        self.try_count = 0

    def initialise(self) -> None:
        self.try_count = 0

    def update(self) -> Status:
        child = self.decorated.status
        if child == Status.FAILURE:
            self.try_count += 1
            if self.num_attempts < 0 or self.try_count < self.num_attempts:
                self.feedback_message = f"attempt {self.try_count} failed, retrying"
                return Status.RUNNING
            self.feedback_message = f"{self.try_count} attempts failed"
            return Status.FAILURE
        return child

    def terminate(self, new_status: Status) -> None:
        self.try_count = 0  # refilled on success, failure and halt alike


class OpaqueDecorator(Resumable, QuietDecorator, py_trees.decorators.Decorator):
    """A BT.CPP decorator bt_grasp does not model (RateController, GoalUpdater, ...).

    It is transparent: the child is ticked every time and its status passed through. For
    throttling decorators that over-approximates how often the child is called, so bounds the
    verifier reports stay sound for call counts.
    """

    def update(self) -> Status:
        return self.decorated.status


# -- composites --------------------------------------------------------------------------------

class _Control(Resumable, py_trees.composites.Composite):
    """Shared plumbing for controls whose tick loop is written out (as in BT.CPP)."""

    def _finish(self, status: Status) -> None:
        if status != Status.RUNNING:
            for child in self.children:
                _stop_if_running(child)
            self.reset_state()
            self.stop(status)
        self.status = status

    def _tick_child(self, child: Behaviour) -> Generator[Behaviour, None, Status]:
        """Tick `child` as the current one, yielding what its tick yields; its status."""
        self.current_child = child
        yield from child.tick()
        return child.status

    def reset_state(self) -> None:  # pragma: no cover - overridden
        pass

    def stop(self, new_status: Status = Status.INVALID) -> None:
        if new_status == Status.INVALID and self.status == Status.RUNNING:
            self.reset_state()  # halted while running: BT.CPP halt() resets the node
        super().stop(new_status)

    def update(self) -> Status:  # pragma: no cover - tick() sets the status
        return self.status


class RecoveryNode(_Control):
    """Nav2 RecoveryNode: child 0 is the action, child 1 the recovery.

    SUCCESS iff child 0 succeeds; when it fails, child 1 runs and, if it succeeds, child 0 runs
    again — at most `number_of_retries` recoveries. The count is reset when the node finishes or
    is halted, so a parent that preempts and re-enters it gets a full budget again.
    """

    RESET = ("retry_count", "index")

    def __init__(self, name: str, children: list[Behaviour], number_of_retries: int) -> None:
        super().__init__(name=name, children=children)
        self.number_of_retries = number_of_retries
        self.retry_count = 0
        self.index = 0

    def reset_state(self) -> None:
        self.retry_count = 0
        self.index = 0

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.reset_state()
            self.initialise()
        result = Status.FAILURE
        while self.index < 2 and self.retry_count <= self.number_of_retries:
            child = self.children[self.index]
            status = yield from self._tick_child(child)
            if status == Status.RUNNING:
                result = Status.RUNNING
                break
            if self.index == 0:
                if status == Status.SUCCESS:
                    result = Status.SUCCESS
                    break
                if self.retry_count < self.number_of_retries:
                    self.index = 1
                    continue
                result = Status.FAILURE
                break
            if status == Status.SUCCESS:
                self.retry_count += 1
                self.index = 0
                continue
            result = Status.FAILURE
            break
        self._finish(result)
        yield self


class PipelineSequence(_Control):
    """Nav2 PipelineSequence: re-tick every earlier child while a later one is RUNNING.

    Child 0 is ticked until it succeeds, then children 0 and 1 until 1 succeeds, and so on; any
    FAILURE halts all children and fails. Used for replanning: the planner is re-run while the
    controller follows the path.
    """

    RESET = ("last_running", "index")

    def __init__(self, name: str, children: list[Behaviour]) -> None:
        super().__init__(name=name, children=children)
        self.last_running = 0
        self.index = 0

    def reset_state(self) -> None:
        self.last_running = 0

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.reset_state()
            self.initialise()
        result = Status.SUCCESS
        self.index = 0
        while self.index < len(self.children):
            child = self.children[self.index]
            status = yield from self._tick_child(child)
            if status == Status.FAILURE:
                result = Status.FAILURE
                break
            if status == Status.RUNNING and self.index >= self.last_running:
                self.last_running = self.index
                result = Status.RUNNING
                break
            self.index += 1
        self._finish(result)
        yield self


class RoundRobin(_Control):
    """Nav2 RoundRobin: tick one child per activation, the next one each time.

    A success advances to the next child (wrapping) and succeeds; a failure advances and tries
    the next child in the same tick; when every child failed in a row the node fails. The
    position survives completion and is reset only by a halt while RUNNING.
    """

    KEPT = ("index", "failed")  # the position survives completion

    def __init__(self, name: str, children: list[Behaviour]) -> None:
        super().__init__(name=name, children=children)
        self.index = 0
        self.failed = 0

    def reset_state(self) -> None:
        self.index = 0
        self.failed = 0

    def _finish(self, status: Status) -> None:
        if status == Status.SUCCESS:  # keep the position: that is the round robin
            for child in self.children:
                _stop_if_running(child)
            py_trees.composites.Composite.stop(self, status)
            self.status = status
            return
        super()._finish(status)

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.initialise()
        n = len(self.children)
        result = Status.FAILURE
        while self.failed < n:
            child = self.children[self.index]
            status = yield from self._tick_child(child)
            if status == Status.RUNNING:
                result = Status.RUNNING
                break
            self.index = (self.index + 1) % n
            if status == Status.SUCCESS:
                self.failed = 0
                result = Status.SUCCESS
                break
            self.failed += 1
        self._finish(result)
        yield self


class ThresholdParallel(_Control):
    """BT.CPP Parallel with `success_count` / `failure_count` thresholds (-1 = all children).

    Children that finished are not ticked again until the node completes; the node fails as soon
    as the success threshold can no longer be reached.
    """

    def __init__(self, name: str, children: list[Behaviour], success_count: int,
                 failure_count: int) -> None:
        super().__init__(name=name, children=children)
        n = len(children)
        self.need_success = n if success_count < 0 else success_count
        self.max_failure = n if failure_count < 0 else failure_count
        self.done: dict[int, Status] = {}
        self.index = 0

    def reset_state(self) -> None:
        self.done = {}

    def state(self) -> NodeState:
        status, child, _, kept = super().state()
        done = tuple(sorted(self.done.items()))
        return (status, child, (done, self.index), kept)

    def restore(self, state: NodeState) -> None:
        status, child, (done, index), kept = state
        super().restore((status, child, (), kept))
        self.done = dict(done)
        self.index = index

    def tick(self) -> Iterator[Behaviour]:
        if self.status != Status.RUNNING:
            self.reset_state()
            self.initialise()
        self.index = 0
        while self.index < len(self.children):
            i, child = self.index, self.children[self.index]
            self.index += 1
            if i in self.done:
                continue
            yield from self._tick_child(child)
            if child.status in (Status.SUCCESS, Status.FAILURE):
                self.done[i] = child.status
        successes = sum(1 for s in self.done.values() if s == Status.SUCCESS)
        failures = sum(1 for s in self.done.values() if s == Status.FAILURE)
        n = len(self.children)
        if successes >= self.need_success:
            result = Status.SUCCESS
        elif failures >= self.max_failure or n - failures < self.need_success:
            result = Status.FAILURE
        else:
            result = Status.RUNNING
        self._finish(result)
        yield self
