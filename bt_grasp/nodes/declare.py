"""What leaves declare their node types with: outcome alphabets, port helpers and the blackboard
entries every leaf touches. A leaf class carries its own declaration (`NODE_TYPE = leaf_type(...)`,
like BehaviorTree.CPP's `providedPorts`); this module only holds what several of them share.

It imports nothing but the registry's data classes, so declaring a type costs no simulator.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.outcomes import LABELS
from bt_grasp.registry import KeyUse, NodeType, Port

PERCEPTION_OUT = ("found", "not_found", "fault")
LOCATE_OUT = ("found", "occluded", "not_found", "fault")
DELIVERY_OUT = ("delivered", "not_delivered", "unknown", "fault")
HELD_OUT = ("ok", "mismatch", "unknown", "fault")
MOTION_OUT = ("done", "infeasible", "fault")
CARRY_OUT = ("done", "dropped", "infeasible", "fault")
GRASP_OUT = ("done", "infeasible", "fault")
PUSH_OUT = ("done", "infeasible", "clutter_too_dense", "fault")
NAV_OUT = ("arrived", "unreachable", "fault")
SHOW_OUT = ("one", "many", "none", "fault")
SELECT_OUT = ("one", "ambiguous", "none")
CHECK_OUT = ("ok", "mismatch", "unknown")
MARKER_OUT = ("done", "stale_marker", "infeasible", "fault")
PICK_OUT = tuple(LABELS) + ("infeasible", "stale_marker", "fault")
CHECK_HOLD_DOC = ("judge the motion's telemetry while the gripper is shut: fingers at the closed stop "
                  "with no effort -> outcome `dropped` (FAILURE) instead of `done`")


def locate_outcomes(params: dict[str, Any]) -> tuple[str, ...]:
    """`ambiguous` exists only where the tree asked for it (`ambiguity: report` or `report_in_view`)."""
    return LOCATE_OUT + ("ambiguous",) if params.get("ambiguity") in ("report", "report_in_view") else LOCATE_OUT


def carry_outcomes(params: dict[str, Any]) -> tuple[str, ...]:
    """`dropped` exists only when the hold is checked (a literal false leaves it out)."""
    check = params.get("check_hold", False)
    return CARRY_OUT if check not in (False, None, "false", "False") else MOTION_OUT


def key_port(name: str, default: str, doc: str) -> Port:
    """A port naming the blackboard key the leaf writes."""
    return Port(name, "key", default=default, doc=doc)


def ablation_port(name: str, when_false: str) -> Port:
    """A switch an ablation study turns off: true (the default) runs the leaf as designed,
    false does `when_false` instead."""
    return Port(name, "bool", default=True, doc=f"false = ablation: {when_false}")


# -- blackboard entries the leaves touch besides their port values -------------------------------
# Each becomes a port of its own in the BT.CPP export (see registry.KeyUse), so a C++ node written
# against the declared ports reads and writes exactly the entries the bt_grasp leaf does.

def sub_entries(port: str, *suffixes: str) -> tuple[KeyUse, ...]:
    """Sub-entries `{port}.<suffix>` written next to a key port (declared as `<port>_<suffix>`)."""
    return tuple(KeyUse(f"{port}_{s}", f"{{{port}}}.{s}", "output", f"{{{port}}}.{s}") for s in suffixes)


def before_entries(*suffixes: str) -> tuple[KeyUse, ...]:
    """What an evidence check reads of the earlier locate result named by its `before` port."""
    return (KeyUse("before_entry", "{before}", "input", "the located object named by `before`"),
            *(KeyUse(f"before_{s}", f"{{before}}.{s}", "input", f"{{before}}.{s}") for s in suffixes))


REASON = KeyUse("reason", "{id}.reason", "output", "why the leaf chose its outcome")
# A grasp's streaming Watchdog while it runs (None until a label is final): for reactive conditions.
LABEL_SO_FAR = (KeyUse("label_so_far", "{id}.label_so_far", "output", "the Watchdog's label so far"),
                KeyUse("label_so_far_confidence", "{id}.label_so_far.confidence", "output", "its confidence"))
LOCATED = ("name", "occluder", "query", "bbox")
# Every leaf may write `{id}.error` (a fault or a spent scoped budget); primitives log a trial id.
ERROR = KeyUse("error", "{id}.error", "output", "what went wrong when the leaf faulted")
TRIAL = KeyUse("trial_id", "{id}.trial_id", "output", "the trace id of the executed motion")


def leaf_type(name: str, kind: Any, ports: dict[str, Port] | None = None, *,
              keys: tuple[KeyUse, ...] = (), max_ticks: int = 1, **fields: Any) -> NodeType:
    """A built-in leaf's NodeType. `keys`: the entries it touches besides its ports (`{id}.error`
    and, for primitives, `{id}.trial_id` are added). `max_ticks`: the most ticks one call may
    span — a motion is polled once per tick (one control period, 0.05 s by default) and cancelled
    as timed out at the last of them, so the verifier's tick bound holds at run time too."""
    if kind != "terminal":
        keys = (*keys, ERROR, *((TRIAL,) if kind == "primitive" else ()))
    return NodeType(name, kind, ports or {}, keys=keys, max_ticks=max_ticks, **fields)


def finding_type(name: str, ports: dict[str, Port], result: tuple[str, str], doc: str,
                 keys: tuple[KeyUse, ...], outcomes: tuple[str, ...] = PERCEPTION_OUT) -> NodeType:
    """A perception leaf that looks for something: `ports`, then the `result` key port (default
    key, doc) and its outcome `<key>.outcome`, found | not_found (or `outcomes`)."""
    key, result_doc = result
    return leaf_type(name, "perception", {
        **ports,
        "result": key_port("result", key, result_doc),
        "outcome": key_port("outcome", f"{key}.outcome", " | ".join(o for o in outcomes if o != "fault")),
    }, outcomes=outcomes, perception=True, outcome_port="outcome", doc=doc, keys=keys)
