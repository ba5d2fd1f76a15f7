"""BehaviorTree.CPP / Nav2 node semantics as py_trees behaviours, and their node types.

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

from collections.abc import Iterator
from typing import Any

import py_trees
from py_trees.behaviour import Behaviour
from py_trees.common import Status

from bt_grasp.context import RunContext
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.registry import NodeType, Port, Registry
from bt_grasp.resumable import NodeState, Resumable
from bt_grasp.standard import QuietStop

DEFAULT_OUTCOMES: tuple[str, ...] = ("success", "failure")
# Outcome names an opaque leaf may declare, and the py_trees status each one stands for.
OUTCOME_STATUS = {"success": Status.SUCCESS, "failure": Status.FAILURE, "running": Status.RUNNING}


def _stop_if_running(node: Behaviour) -> None:
    """BT.CPP's haltChild(): halt a RUNNING child; a finished child only forgets its status."""
    if node.status == Status.RUNNING:
        node.stop(Status.INVALID)


# -- decorators --------------------------------------------------------------------------------

class BtcppRetry(Resumable, QuietStop, py_trees.decorators.Decorator):
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


class OpaqueDecorator(Resumable, QuietStop, py_trees.decorators.Decorator):
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
            self.current_child = child
            yield from child.tick()
            status = child.status
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
            self.current_child = child
            yield from child.tick()
            status = child.status
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
            self.current_child = child
            yield from child.tick()
            status = child.status
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
            self.current_child = child
            yield from child.tick()
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


# -- leaves ------------------------------------------------------------------------------------

class OpaqueLeaf(Leaf):
    """A BT.CPP action or condition whose implementation bt_grasp does not have.

    Under the verifier the oracle picks one of the declared `outcomes` (success / failure /
    running). At run time a handler may be supplied as ctx.services["btcpp"][btcpp_id], a callable
    (params) -> outcome name; without one the leaf fails, saying so, rather than pretend.
    Each start is counted in ctx.ledger.primitive_calls under "btcpp.<ID>" so verify reports how
    often each C++ node can run.
    """

    TYPE = "opaque_action"

    def initialise(self) -> None:
        btcpp_id = str(self.params.get("btcpp_id"))
        calls = self.ctx.ledger.primitive_calls
        calls[f"btcpp.{btcpp_id}"] = calls.get(f"btcpp.{btcpp_id}", 0) + 1

    def execute(self) -> LeafResult:
        handlers = self.ctx.services.get("btcpp", {})
        handler = handlers.get(self.params.get("btcpp_id"))
        if handler is None:
            return LeafResult("failure", Status.FAILURE,
                              {f"{self.node_id}.error":
                               f"no implementation for BT.CPP node {self.params.get('btcpp_id')}"})
        return self.simulate(str(handler(dict(self.params.get("ports") or {}))))

    def simulate(self, outcome: str) -> LeafResult:
        return LeafResult(outcome, OUTCOME_STATUS.get(outcome, Status.FAILURE))

    def update(self) -> Status:
        if self.ctx.decision is not None:
            return Status.FAILURE
        if self.ctx.oracle is not None and self.alphabet:
            res = self.simulate(self.ctx.oracle.choose(self.node_id, self.alphabet))
        else:
            try:
                res = self.execute()
            except Exception as exc:  # a handler bug must not escape the tree
                res = LeafResult("failure", Status.FAILURE,
                                 {f"{self.node_id}.error": f"{type(exc).__name__}: {exc}"})
        for key, value in res.writes.items():
            self.ctx.blackboard.set(key, value)
        self.last_outcome = res.outcome
        self.feedback_message = res.outcome or ""
        return res.status


class OpaqueCondition(OpaqueLeaf):
    TYPE = "opaque_condition"


# -- factories and node types ------------------------------------------------------------------

def _build_btcpp_retry(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return BtcppRetry(node_id, children[0], int(params["num_attempts"]))


def _build_opaque_decorator(node_id: str, params: dict[str, Any], children: list[Behaviour],
                            ctx: RunContext):
    return OpaqueDecorator(node_id, children[0])


def _build_recovery(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    if len(children) != 2:
        raise ValueError(f"recovery_node '{node_id}' needs exactly 2 children, has {len(children)}")
    retries = params.get("number_of_retries")
    return RecoveryNode(node_id, children, 1 if retries is None else int(retries))


def _build_pipeline(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return PipelineSequence(node_id, children)


def _build_round_robin(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    return RoundRobin(node_id, children)


def _build_parallel(node_id: str, params: dict[str, Any], children: list[Behaviour], ctx: RunContext):
    sc, fc = params.get("success_count"), params.get("failure_count")
    return ThresholdParallel(node_id, children, -1 if sc is None else int(sc), 1 if fc is None else int(fc))


def _outcomes(params: dict[str, Any]) -> tuple[str, ...]:
    declared = params.get("outcomes")
    return tuple(str(o) for o in declared) if declared else DEFAULT_OUTCOMES


_OPAQUE_PORTS = {
    "btcpp_id": Port("btcpp_id", "str", required=True, doc="the BT.CPP registration ID, e.g. Spin"),
    "ports": Port("ports", "any", doc="the node's BT.CPP ports as written in the XML (strings)"),
}


def interop_types() -> list[NodeType]:
    """The node types an imported BT.CPP / Nav2 tree may use (fresh objects each call)."""
    leaf_ports = dict(_OPAQUE_PORTS)
    leaf_ports["outcomes"] = Port("outcomes", "list", default=list(DEFAULT_OUTCOMES),
                                  doc="what the node can return: success, failure, running")
    return [
        NodeType("btcpp_retry", "decorator", {
            "num_attempts": Port("num_attempts", "int", required=True, minimum=-1,
                                 doc="attempts per activation (-1 = forever); refilled on halt"),
        }, arity="one", factory=_build_btcpp_retry,
            doc="BT.CPP RetryUntilSuccessful: the count is refilled whenever the node is halted."),
        NodeType("recovery_node", "composite", {
            "number_of_retries": Port("number_of_retries", "int", default=1, minimum=0,
                                      doc="recoveries per activation; refilled on halt"),
        }, arity="many", factory=_build_recovery,
            doc="Nav2 RecoveryNode: child 0 = action, child 1 = recovery; refilled on halt."),
        NodeType("pipeline_sequence", "composite", {}, arity="many", factory=_build_pipeline,
                 doc="Nav2 PipelineSequence: re-tick earlier children while a later one runs."),
        NodeType("round_robin", "composite", {}, arity="many", factory=_build_round_robin,
                 doc="Nav2 RoundRobin: one child per activation, resuming after the last one."),
        NodeType("btcpp_parallel", "composite", {
            "success_count": Port("success_count", "int", default=-1, minimum=-1,
                                  doc="children that must succeed (-1 = all)"),
            "failure_count": Port("failure_count", "int", default=1, minimum=-1,
                                  doc="failures that fail the node (-1 = all)"),
        }, arity="many", factory=_build_parallel, doc="BT.CPP Parallel with thresholds."),
        NodeType("opaque_decorator", "decorator", dict(_OPAQUE_PORTS), arity="one",
                 factory=_build_opaque_decorator,
                 doc="A BT.CPP decorator without a model; transparent (child ticked every time)."),
        NodeType("opaque_action", "action", dict(leaf_ports), factory=OpaqueLeaf,
                 outcomes=DEFAULT_OUTCOMES, outcomes_for=_outcomes,
                 doc="A BT.CPP action without an implementation; the verifier picks its outcome."),
        NodeType("opaque_condition", "condition", dict(leaf_ports), factory=OpaqueCondition,
                 outcomes=DEFAULT_OUTCOMES, outcomes_for=_outcomes,
                 doc="A BT.CPP condition without an implementation; the verifier picks its outcome."),
    ]


INTEROP_TYPE_NAMES = tuple(nt.name for nt in interop_types())


def register_interop_types(reg: Registry) -> None:
    """Add the BT.CPP / Nav2 node types to `reg` (idempotent, so callers need not coordinate)."""
    for nt in interop_types():
        if nt.name not in reg:
            reg.add(nt)


# -- static bounds (for verify.static_bounds) ----------------------------------------------------

def may_run(node: Any, registry: Registry) -> bool:
    """Can this subtree return RUNNING? (Then a reactive or pipeline parent re-ticks its elders.)

    bt_grasp leaves never do; BT.CPP-style nodes can: an opaque leaf declaring `running`,
    `btcpp_retry` between attempts, and anything above such a node.
    """
    nt = registry.get(node.type)
    if node.type in ("opaque_action", "opaque_condition"):
        return "running" in (node.params.get("outcomes") or DEFAULT_OUTCOMES)
    if node.type in ("btcpp_retry", "retry", "repeat"):
        return True
    kids = list(node.children) + list(getattr(node, "cases", {}).values())
    if getattr(node, "default", None) is not None:
        kids.append(node.default)
    return nt is not None and any(may_run(k, registry) for k in kids)


def static_counts(node: Any, child_counts: list[dict[str, int | None]], registry: Registry
                  ) -> dict[str, int | None] | None:
    """Worst-case calls of one activation of an interop composite/decorator, from its children's.

    Returns None for node types that are not interop types (the caller handles those). Counts
    use verify's convention: None = no static bound. These are per activation: a parent that
    re-enters the node multiplies them, which is exactly how a refilled budget shows up.
    """

    def add(a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else a + b

    def scale(d: dict[str, int | None], n: int | None) -> dict[str, int | None]:
        return {k: (None if v is None or n is None else v * n) for k, v in d.items()}

    def total(parts: list[dict[str, int | None]]) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for part in parts:
            for k, v in part.items():
                out[k] = add(out[k], v) if k in out else v
        return out

    t = node.type
    if t == "btcpp_retry":
        n = int(node.params["num_attempts"])
        return scale(child_counts[0], None if n < 0 else n)
    if t == "recovery_node":
        n = node.params.get("number_of_retries")
        n = 1 if n is None else int(n)
        return total([scale(child_counts[0], n + 1), scale(child_counts[1], n)])
    if t == "pipeline_sequence":
        # An elder is re-ticked on every tick a younger child stays RUNNING: unbounded then.
        parts = []
        for i, counts in enumerate(child_counts):
            later_runs = any(may_run(k, registry) for k in node.children[i + 1:])
            parts.append(scale(counts, None) if later_runs and counts else counts)
        return total(parts)
    if t in ("round_robin", "btcpp_parallel", "opaque_decorator"):
        return total(child_counts)  # each child at most once per activation
    return None
