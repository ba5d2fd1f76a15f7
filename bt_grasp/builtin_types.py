"""The built-in composite and decorator types as data (ports, arity), each with the function that
builds its behaviour. Leaves declare their own types on their classes (bt_grasp/nodes/catalog.py);
`register_all` puts both in a registry.
"""

from __future__ import annotations

from bt_grasp.composites import (
    build_budget,
    build_force_failure,
    build_force_success,
    build_inverter,
    build_parallel,
    build_reactive_selector,
    build_reactive_sequence,
    build_repeat,
    build_retry,
    build_selector,
    build_sequence,
    build_timeout,
)
from bt_grasp.nodes.catalog import leaf_types
from bt_grasp.registry import NodeType, Port, Registry

COMPOSITES = [
    NodeType("sequence", "composite", {
        "memory": Port("memory", "bool", default=True,
                       doc="resume a RUNNING child next tick (true) or restart from the first (false)"),
    }, factory=build_sequence, arity="many", doc="Tick children in order; fail on the first failure."),
    NodeType("selector", "composite", {
        "memory": Port("memory", "bool", default=True,
                       doc="resume a RUNNING child next tick (true) or restart from the first (false)"),
    }, factory=build_selector, arity="many", doc="Tick children in order until one succeeds."),
    NodeType("reactive_sequence", "composite", {}, factory=build_reactive_sequence, arity="many",
             doc="Every tick, tick children from the first; a failing (or running) child halts the "
                 "RUNNING children after it (BT.CPP ReactiveSequence)."),
    NodeType("reactive_selector", "composite", {}, factory=build_reactive_selector, arity="many",
             doc="Every tick, tick children from the first until one succeeds or runs; it halts a "
                 "RUNNING lower-priority child (BT.CPP ReactiveFallback)."),
    NodeType("parallel", "composite", {
        "policy": Port("policy", "str", default="success_on_all",
                       choices=("success_on_all", "success_on_one"),
                       doc="when the parallel succeeds"),
    }, factory=build_parallel, arity="many", doc="Tick every child each tick."),
    NodeType("switch", "composite", {
        "on": Port("on", "str", required=True, doc='blackboard label to route on, e.g. "{grasp.label}"'),
    }, arity="cases", doc="Route to the case named by a blackboard label; `default` otherwise."),
    NodeType("retry", "decorator", {
        "attempts": Port("attempts", "int", required=True, minimum=1,
                         doc="child starts allowed per episode (or per scope); never refilled"),
        "scope": Port("scope", "str", doc="share the attempt budget with other retries of this name"),
    }, factory=build_retry, arity="one", doc="Restart a failing child, at most `attempts` starts per episode."),
    NodeType("repeat", "decorator", {
        "times": Port("times", "int", minimum=1, doc="successful runs to repeat; absent = forever"),
    }, factory=build_repeat, arity="one", doc="Run a succeeding child again; fails as soon as the child fails."),
    NodeType("timeout", "decorator", {
        "seconds": Port("seconds", "float", required=True, minimum=0.0,
                        doc="logical-clock seconds the child may run"),
    }, factory=build_timeout, arity="one", doc="Fail (label TIMEOUT) when the child runs too long on the logical clock."),
    NodeType("inverter", "decorator", {}, factory=build_inverter, arity="one", doc="Swap SUCCESS and FAILURE."),
    NodeType("force_success", "decorator", {}, factory=build_force_success, arity="one", doc="FAILURE becomes SUCCESS."),
    NodeType("force_failure", "decorator", {}, factory=build_force_failure, arity="one", doc="SUCCESS becomes FAILURE."),
    NodeType("budget", "decorator", {
        "actions": Port("actions", "int", required=True, minimum=0,
                        doc="manipulation actions (grasp + push) allowed inside, per episode"),
        "scope": Port("scope", "str", doc="name shared by budget nodes that draw on one pool"),
    }, factory=build_budget, arity="one", doc="A sub-budget of manipulation actions for a part of the tree."),
]


def register_all(reg: Registry) -> None:
    """Add the built-in composites, decorators and leaves (bt_grasp.default_registry adds the rest)."""
    for nt in COMPOSITES + leaf_types():
        reg.add(nt)
