"""The compiled tree as flat tables, for the symbolic search to tick (bt_grasp/verifier/symbolic/ticker.py).

The tables are read off the tree `compile_tree` builds (the one the Runner ticks), so both see the
same node ids, parameters and alphabets. A node is modelled by its class: every bt_grasp control,
decorator and leaf base class, and the BT.CPP controls of bt_grasp.interop. A leaf subclass that
only implements `execute` / `simulate` (the documented way to write one) is modelled too: its
`simulate` is called on the compiled leaf with the modelled blackboard. A class that changes the
leaf lifecycle itself (`update`, `initialise`, ...) has no model: `NotModelled` says which, and
the verifier then explores the compiled tree itself (bt_grasp/verifier/compiled/machine.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from py_trees.behaviour import Behaviour

from bt_grasp.blackboard import ref_key
from bt_grasp.composites import (
    ActionBudget,
    BudgetedRetry,
    LogicalTimeout,
    ReactiveSelector,
    ReactiveSequence,
    Repeat,
    Switch,
)
from bt_grasp.interop.controls import (
    BtcppRetry,
    OpaqueDecorator,
    PipelineSequence,
    RecoveryNode,
    RoundRobin,
    ThresholdParallel,
)
from bt_grasp.interop.nodes import OUTCOME_STATUS, OpaqueLeaf
from bt_grasp.nodes.base import Leaf
from bt_grasp.nodes.conditions import LabelIs
from bt_grasp.nodes.terminal import _Terminal
from bt_grasp.outcomes import Decision
from bt_grasp.py_trees_controls import ForceFailure, ForceSuccess, Inverter, Parallel, Selector, Sequence

__all__ = ["K", "Model", "NotModelled", "build_model"]


class K:
    """Node kinds of the model (small ints: the ticker dispatches on them)."""

    SEQ, SEL, PAR, RETRY, REPEAT, TIMEOUT, BUDGET, SWITCH = range(8)
    INV, FSUC, FFAIL, LEAF, COND, TERM, OPAQUE = range(8, 15)
    BRETRY, ODEC, RECOV, PIPE, RROBIN, TPAR = range(15, 21)


# Node statuses as small ints, in the order of py_trees' Status members that matter here.
INVALID, RUNNING, SUCCESS, FAILURE = 0, 1, 2, 3

# The Leaf methods whose behaviour the model reproduces; a leaf class overriding any other part
# of the lifecycle is not modelled.
_LIFECYCLE = ("tick", "update", "initialise", "terminate", "stop", "_oracle_tick", "_commit", "result",
              "_pass_guards", "_halt", "_poll", "_oracle_decides")

_CONTROLS: dict[type, int] = {Sequence: K.SEQ, Selector: K.SEL, ReactiveSequence: K.SEQ, ReactiveSelector: K.SEL,
             Parallel: K.PAR, BudgetedRetry: K.RETRY, Repeat: K.REPEAT, LogicalTimeout: K.TIMEOUT,
             ActionBudget: K.BUDGET, Switch: K.SWITCH, Inverter: K.INV, ForceSuccess: K.FSUC,
             ForceFailure: K.FFAIL, BtcppRetry: K.BRETRY, OpaqueDecorator: K.ODEC,
             RecoveryNode: K.RECOV, PipelineSequence: K.PIPE, RoundRobin: K.RROBIN,
             ThresholdParallel: K.TPAR}


class NotModelled(Exception):
    """The tree has a node whose class the model does not reproduce (the message says which)."""


@dataclass
class Model:
    """One compiled tree as tables indexed by node number (0 = root, pre-order)."""

    nodes: list[Behaviour]
    kind: list[int]
    kids: list[tuple[int, ...]]
    parent: list[int]
    name: list[str]
    # controls
    memory: list[bool] = field(default_factory=list)       # SEQ/SEL: memory (False: reactive)
    preempts: list[bool] = field(default_factory=list)     # SEQ/SEL: halts say "preempted"
    param: list[Any] = field(default_factory=list)         # per kind: attempts, times, limit, ...
    scope: list[int] = field(default_factory=list)         # RETRY / BUDGET: scope number
    # leaves
    alphabet: list[tuple[str, ...]] = field(default_factory=list)
    success: list[frozenset[str]] = field(default_factory=list)
    max_ticks: list[int] = field(default_factory=list)
    action: list[bool] = field(default_factory=list)
    perception: list[bool] = field(default_factory=list)
    primitive: list[int] = field(default_factory=list)     # index into prim_names, or -1
    out_key: list[str | None] = field(default_factory=list)
    simulates: list[bool] = field(default_factory=list)    # its class has its own simulate
    # names
    prim_names: list[str] = field(default_factory=list)
    retry_scopes: list[str] = field(default_factory=list)
    budget_scopes: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.kind)


def _overrides(cls: type, base: type, names: tuple[str, ...]) -> list[str]:
    return [m for m in names if getattr(cls, m, None) is not getattr(base, m, None)]


def _port_value(node: Leaf, name: str) -> Any:
    """A port as Leaf.port() reads it before resolving: the parameter, else the port's default."""
    value = node.params.get(name)
    if value is None and name in node.node_type.ports:
        value = node.node_type.ports[name].default
    return value


def _leaf_kind(node: Leaf) -> int:
    cls = type(node)
    base: type[Leaf]
    if isinstance(node, LabelIs):
        base, kind = LabelIs, K.COND
    elif isinstance(node, _Terminal):
        base, kind = _Terminal, K.TERM
    elif isinstance(node, OpaqueLeaf):
        base, kind = OpaqueLeaf, K.OPAQUE
    else:
        base, kind = Leaf, K.LEAF
    changed = _overrides(cls, base, _LIFECYCLE)
    if changed:
        raise NotModelled(f"leaf '{node.name}' ({cls.__name__}) overrides {', '.join(changed)}")
    if kind == K.LEAF and not node.alphabet:
        raise NotModelled(f"leaf '{node.name}' ({cls.__name__}) has no outcomes for the oracle")
    return kind


def build_model(root: Behaviour) -> Model:
    """Tables for the compiled tree under `root` (raises NotModelled; see the module docstring)."""
    order: list[Behaviour] = []

    def visit(node: Behaviour) -> None:
        order.append(node)
        for child in node.children:
            visit(child)

    visit(root)
    pos = {id(n): i for i, n in enumerate(order)}
    m = Model(nodes=order, kind=[], kids=[], parent=[], name=[])
    prims: dict[str, int] = {}
    retry_scopes: dict[str, int] = {}
    budget_scopes: dict[str, int] = {}
    node: Any  # each kind of node has its own parameters (attributes py_trees does not declare)
    param: Any
    for node in order:
        m.name.append(node.name)
        m.kids.append(tuple(pos[id(c)] for c in node.children))
        m.parent.append(pos[id(node.parent)] if node.parent is not None and id(node.parent) in pos else -1)
        memory, preempts, param, scope = True, False, None, -1
        alphabet: tuple[str, ...] = ()
        success: frozenset[str] = frozenset()
        max_ticks, action, perception, primitive, out_key, simulates = 1, False, False, -1, None, False
        if isinstance(node, Leaf):
            kind = _leaf_kind(node)
            nt = node.node_type
            alphabet = tuple(node.alphabet)
            max_ticks = node.max_ticks
            action, perception = nt.counts_as_action, nt.perception
            if kind == K.OPAQUE:
                success = frozenset(o for o in alphabet if OUTCOME_STATUS.get(o) is not None
                                    and OUTCOME_STATUS[o].value == "SUCCESS")
                name = f"btcpp.{node.params.get('btcpp_id')}"
                primitive = prims.setdefault(name, len(prims))
            else:
                success = frozenset(node.SUCCESS_OUTCOMES)
                if nt.kind == "primitive":
                    primitive = prims.setdefault(nt.name, len(prims))
                if nt.outcome_port:
                    out_key = node.out_key(nt.outcome_port)
                simulates = type(node).simulate is not Leaf.simulate
            if kind == K.COND:
                raw = _port_value(node, "key")
                param = (ref_key(raw), raw, node.params.get("label"))
            elif kind == K.TERM:
                param = (node.DECISION, _port_value(node, "reason"))  # type: ignore[attr-defined]  # TERM: a _Terminal
        else:
            kind = _CONTROLS.get(type(node), -1)
            if kind < 0:
                raise NotModelled(f"node '{node.name}' ({type(node).__name__}) has no model")
            if kind in (K.SEQ, K.SEL):
                memory = bool(node.memory)
                preempts = isinstance(node, (ReactiveSequence, ReactiveSelector))
            elif kind == K.PAR:
                param = type(node.policy).__name__ == "SuccessOnAll"  # True: success on all
                if param and not node.policy.synchronise:
                    raise NotModelled(f"parallel '{node.name}' without synchronise has no model")
            elif kind == K.RETRY:
                param = node.attempts
                scope = retry_scopes.setdefault(node.scope, len(retry_scopes))
            elif kind == K.REPEAT:
                param = node.times
            elif kind == K.TIMEOUT:
                param = (node.seconds, node.tick_allowance)
            elif kind == K.BUDGET:
                param = node.limit
                scope = budget_scopes.setdefault(node.scope, len(budget_scopes))
            elif kind == K.SWITCH:
                index = {id(c): i for i, c in enumerate(node.children)}
                cases = {str(label): index[id(c)] for label, c in node.cases.items()}
                default = index[id(node.default)] if node.default is not None else -1
                param = (node.key, cases, default)
            elif kind == K.BRETRY:
                param = node.num_attempts
            elif kind == K.RECOV:
                param = node.number_of_retries
            elif kind == K.TPAR:
                param = (node.need_success, node.max_failure)
        m.kind.append(kind)
        m.memory.append(memory)
        m.preempts.append(preempts)
        m.param.append(param)
        m.scope.append(scope)
        m.alphabet.append(alphabet)
        m.success.append(success)
        m.max_ticks.append(max_ticks)
        m.action.append(action)
        m.perception.append(perception)
        m.primitive.append(primitive)
        m.out_key.append(out_key)
        m.simulates.append(simulates)
    m.prim_names = list(prims)
    m.retry_scopes = list(retry_scopes)
    m.budget_scopes = list(budget_scopes)
    m.index = {name: i for i, name in enumerate(m.name)}
    return m


__all__ += ["FAILURE", "INVALID", "RUNNING", "SUCCESS", "Decision"]
