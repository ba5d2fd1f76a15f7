"""BehaviorTree.CPP / Nav2 node types for imported trees: opaque leaves and the type table.

The control behaviours live in interop.controls and their static bounds in interop.bounds; this
module registers them as node types (`register_interop_types`) and re-exports the names the
verifier imports from here.
"""

from __future__ import annotations

from typing import Any

from py_trees.behaviour import Behaviour
from py_trees.common import Status

from bt_grasp.context import RunContext
from bt_grasp.interop.bounds import may_run, static_counts
from bt_grasp.interop.controls import (
    BtcppRetry,
    OpaqueDecorator,
    PipelineSequence,
    RecoveryNode,
    RoundRobin,
    ThresholdParallel,
)
from bt_grasp.interop.outcomes import DEFAULT_OUTCOMES, OUTCOME_STATUS
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.registry import NodeType, Port, Registry

__all__ = ["DEFAULT_OUTCOMES", "OUTCOME_STATUS", "BtcppRetry", "OpaqueCondition", "OpaqueDecorator",
           "OpaqueLeaf", "PipelineSequence", "RecoveryNode", "RoundRobin", "ThresholdParallel",
           "interop_types", "may_run", "register_interop_types", "static_counts"]


# -- leaves ------------------------------------------------------------------------------------

class OpaqueLeaf(Leaf):
    """A BT.CPP action or condition whose implementation bt_grasp does not have.

    Under the verifier the oracle picks one of the declared `outcomes` (success / failure /
    running). At run time a handler may be supplied as ctx.services.btcpp[btcpp_id], a callable
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
        handlers = self.ctx.services.btcpp
        handler = handlers.get(str(self.params.get("btcpp_id")))
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
