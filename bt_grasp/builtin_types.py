"""The built-in node types as data (ports, arity, outcome alphabets).

Behaviour classes live in bt_grasp/nodes (leaves) and bt_grasp/composites.py (composites and
decorators); they are attached lazily by compile.py so that validation needs no simulator.
"""

from __future__ import annotations

from bt_grasp.outcomes import LABELS
from bt_grasp.registry import KeyUse, NodeType, Port, Registry

PERCEPTION_OUT = ("found", "not_found")
LOCATE_OUT = ("found", "occluded", "not_found")
DELIVERY_OUT = ("delivered", "not_delivered", "unknown")
HELD_OUT = ("ok", "mismatch", "unknown")


def _locate_outcomes(params: dict) -> tuple[str, ...]:
    """`ambiguous` exists only where the tree asked for it (`ambiguity: report`)."""
    return LOCATE_OUT + ("ambiguous",) if params.get("ambiguity") == "report" else LOCATE_OUT
MOTION_OUT = ("done", "infeasible", "fault")
CARRY_OUT = ("done", "dropped", "infeasible", "fault")
GRASP_OUT = ("done", "infeasible", "fault")
PUSH_OUT = ("done", "infeasible", "clutter_too_dense", "fault")
CHECK_HOLD_DOC = ("judge the motion's telemetry while the gripper is shut: fingers at the closed stop "
                  "with no effort -> outcome `dropped` (FAILURE) instead of `done`")


def _carry_outcomes(params: dict) -> tuple[str, ...]:
    """`dropped` exists only when the hold is checked (a literal false leaves it out)."""
    check = params.get("check_hold", False)
    return CARRY_OUT if check not in (False, None, "false", "False") else MOTION_OUT


def _key(name: str, default: str, doc: str) -> Port:
    return Port(name, "key", default=default, doc=doc)


COMPOSITES = [
    NodeType("sequence", "composite", {
        "memory": Port("memory", "bool", default=True,
                       doc="resume a RUNNING child next tick (true) or restart from the first (false)"),
    }, arity="many", doc="Tick children in order; fail on the first failure."),
    NodeType("selector", "composite", {
        "memory": Port("memory", "bool", default=True,
                       doc="resume a RUNNING child next tick (true) or restart from the first (false)"),
    }, arity="many", doc="Tick children in order until one succeeds."),
    NodeType("reactive_sequence", "composite", {}, arity="many",
             doc="Every tick, tick children from the first; a failing (or running) child halts the "
                 "RUNNING children after it (BT.CPP ReactiveSequence)."),
    NodeType("reactive_selector", "composite", {}, arity="many",
             doc="Every tick, tick children from the first until one succeeds or runs; it halts a "
                 "RUNNING lower-priority child (BT.CPP ReactiveFallback)."),
    NodeType("parallel", "composite", {
        "policy": Port("policy", "str", default="success_on_all",
                       choices=("success_on_all", "success_on_one"),
                       doc="when the parallel succeeds"),
    }, arity="many", doc="Tick every child each tick."),
    NodeType("switch", "composite", {
        "on": Port("on", "str", required=True, doc='blackboard label to route on, e.g. "{grasp.label}"'),
    }, arity="cases", doc="Route to the case named by a blackboard label; `default` otherwise."),
    NodeType("retry", "decorator", {
        "attempts": Port("attempts", "int", required=True, minimum=1,
                         doc="child starts allowed per episode (or per scope); never refilled"),
        "scope": Port("scope", "str", doc="share the attempt budget with other retries of this name"),
    }, arity="one", doc="Restart a failing child, at most `attempts` starts per episode."),
    NodeType("repeat", "decorator", {
        "times": Port("times", "int", minimum=1, doc="successful runs to repeat; absent = forever"),
    }, arity="one", doc="Run a succeeding child again; fails as soon as the child fails."),
    NodeType("timeout", "decorator", {
        "seconds": Port("seconds", "float", required=True, minimum=0.0,
                        doc="logical-clock seconds the child may run"),
    }, arity="one", doc="Fail (label TIMEOUT) when the child runs too long on the logical clock."),
    NodeType("inverter", "decorator", {}, arity="one", doc="Swap SUCCESS and FAILURE."),
    NodeType("force_success", "decorator", {}, arity="one", doc="FAILURE becomes SUCCESS."),
    NodeType("force_failure", "decorator", {}, arity="one", doc="SUCCESS becomes FAILURE."),
    NodeType("budget", "decorator", {
        "actions": Port("actions", "int", required=True, minimum=0,
                        doc="manipulation actions (grasp + push) allowed inside, per episode"),
        "scope": Port("scope", "str", doc="name shared by budget nodes that draw on one pool"),
    }, arity="one", doc="A sub-budget of manipulation actions for a part of the tree."),
]

LEAVES = [
    NodeType("survey_scene", "perception", {
        "result": _key("result", "scene", "where the scene graph is written"),
        "outcome": _key("outcome", "scene.outcome", "found | not_found"),
    }, outcomes=PERCEPTION_OUT, perception=True, outcome_port="outcome",
        doc="Perceive the scene: objects with names and a scene graph of relations."),
    NodeType("locate_object", "perception", {
        "target": Port("target", "str", required=True, doc='referring text, e.g. "{goal.object}"'),
        "result": _key("result", "target", "where the located object is written"),
        "outcome": _key("outcome", "target.outcome", "found | occluded | not_found | ambiguous"),
        "ambiguity": Port("ambiguity", "str", default="choose", choices=("choose", "report"),
                          doc="when other candidates fit as well: take the best (choose) or fail with "
                              "outcome `ambiguous` and `{result}.ambiguity` = \"ambiguous: A or B\" (report)"),
        "skip": Port("skip", "str", doc="receptacle (e.g. basket) whose contents are no candidates "
                     "(its region comes from driver.place_region)"),
        "track": Port("track", "bool", default=False, doc="when the text no longer grounds, follow the "
                      "object of the target's colour lying where it was last located"),
        "match": Port("match", "str", default="text", choices=("text", "name"),
                      doc="text: ground the referring text; name: the text is a name the perceiver gave "
                          "(e.g. {target.occluder}), so the object bearing it is taken even when its "
                          "fit is too weak for grounding"),
    }, outcomes=LOCATE_OUT, outcomes_for=_locate_outcomes, perception=True, outcome_port="outcome",
        doc="Ground a referring text in the latest scene: mask, bbox, 3D points."),
    NodeType("grasp", "primitive", {
        "target": Port("target", "str", default="{target}", doc="located object to grasp"),
        "force": Port("force", "float", default=60.0, minimum=0.0, doc="grip force in newtons"),
        "execution": _key("execution", "grasp.execution", "where the Execution is written"),
        "outcome": _key("outcome", "grasp.outcome", "done | infeasible | fault"),
    }, outcomes=GRASP_OUT, counts_as_action=True, outcome_port="outcome",
        doc="Plan a grasp on the located object and execute it (approach, close, settle, micro-lift)."),
    NodeType("push", "primitive", {
        "target": Port("target", "str", default="{target}", doc="located object to push"),
        "direction": Port("direction", "str", default="auto",
                          choices=("auto", "left", "right", "up", "down"),
                          doc="image direction; auto = away from the nearest neighbour"),
        "distance": Port("distance", "float", default=0.10, minimum=0.03, maximum=0.20,
                         doc="metres"),
        "outcome": _key("outcome", "push.outcome", "done | infeasible | clutter_too_dense | fault"),
    }, outcomes=PUSH_OUT, counts_as_action=True, outcome_port="outcome",
        doc="Push the object along an image direction, starting from a free gap behind it."),
    NodeType("lift", "primitive", {
        "height": Port("height", "float", default=0.15, minimum=0.0, doc="metres to rise"),
        "check_hold": Port("check_hold", "bool", default=False, doc=CHECK_HOLD_DOC),
        "outcome": _key("outcome", "lift.outcome", "done | dropped | infeasible | fault"),
    }, outcomes=CARRY_OUT, outcomes_for=_carry_outcomes, outcome_port="outcome",
        doc="Raise the end effector."),
    NodeType("place", "primitive", {
        "target": Port("target", "str", default="basket", doc="where to put the held object"),
        "check_hold": Port("check_hold", "bool", default=False, doc=CHECK_HOLD_DOC),
        "outcome": _key("outcome", "place.outcome", "done | dropped | infeasible | fault"),
    }, outcomes=CARRY_OUT, outcomes_for=_carry_outcomes, outcome_port="outcome",
        doc="Carry the held object to a receptacle and release it."),
    NodeType("open_gripper", "primitive", {
        "outcome": _key("outcome", "open_gripper.outcome", "done | infeasible | fault"),
    }, outcomes=MOTION_OUT, outcome_port="outcome", doc="Open the gripper fully."),
    NodeType("evaluate_grasp", "watchdog", {
        "execution": Port("execution", "str", default="{grasp.execution}",
                          doc="the grasp Execution to judge"),
        "label": _key("label", "grasp.label", "where the Watchdog label is written"),
        "semantic": Port("semantic", "bool", default=False,
                         doc="after SUCCESS, re-perceive to check the held object is the target"),
    }, outcomes=LABELS, outcome_port="label",
        doc="Watchdog: turn the grasp telemetry into SUCCESS/EMPTY/SLIP/WEAK/STALL/TIMEOUT."),
    NodeType("label_is", "condition", {
        "key": Port("key", "str", required=True, doc='blackboard label, e.g. "{grasp.label}"'),
        "label": Port("label", "str", required=True, doc="the value to compare with"),
    }, doc="SUCCESS when the blackboard label equals `label`."),
    NodeType("finalize", "terminal", {
        "reason": Port("reason", "str", default="done"),
    }, doc="End the episode with FINALIZE."),
    NodeType("wait_clarify", "terminal", {
        "reason": Port("reason", "str", default="needs clarification"),
    }, doc="End the episode with WAIT_CLARIFY."),
    # Benchmark baseline leaves (bt_grasp/nodes/bench_nodes.py), used by trees/remove_all.yaml.
    NodeType("locate_any", "perception", {
        "result": _key("result", "target", "where the picked object is written (like locate_object)"),
        "outcome": _key("outcome", "target.outcome", "found | not_found"),
        "exclude": Port("exclude", "str", doc='"xmin xmax ymin ymax" (metres, base frame): objects '
                        "whose centre lies in this box are never picked (e.g. the basket)"),
        "max_objects": Port("max_objects", "int", default=4, minimum=1,
                            doc="objects (highest first) whose grasps are planned and scored"),
    }, outcomes=PERCEPTION_OUT, perception=True, outcome_port="outcome",
        doc="Naive baseline: locate the visible object whose best planned grasp scores highest."),
    # Search and evidence leaves (bt_grasp/nodes/search.py, bt_grasp/nodes/evidence.py).
    NodeType("pick_hider", "perception", {
        "target": Port("target", "str", required=True, doc='the text of the object searched for, e.g. "{goal.object}"'),
        "place": Port("place", "str", default="basket", doc="receptacle whose region (driver.place_region) is skipped"),
        "max_objects": Port("max_objects", "int", default=3, minimum=1,
                            doc="best-ranked objects whose grasps are planned; the first graspable one is chosen"),
        "result": _key("result", "hider", "where the chosen object is written (like locate_object)"),
        "outcome": _key("outcome", "hider.outcome", "found | not_found"),
    }, outcomes=PERCEPTION_OUT, perception=True, outcome_port="outcome",
        doc="Search: the graspable object most likely to hide the target (large, piled, of its colour)."),
    NodeType("check_held", "perception", {
        "before": Port("before", "str", default="target", doc="blackboard key of the target located before the grasp"),
        "outcome": _key("outcome", "held.outcome", "ok | mismatch | unknown"),
    }, outcomes=HELD_OUT, perception=True, outcome_port="outcome",
        doc="Re-observe: ok when the located target left its place (it is held), mismatch when it is still there."),
    NodeType("verify_delivery", "perception", {
        "before": Port("before", "str", default="target",
                       doc="blackboard key of the target located before the pick (its mask and frame)"),
        "place": Port("place", "str", default="basket", doc="receptacle (its region comes from driver.place_region)"),
        "outcome": _key("outcome", "delivery.outcome", "delivered | not_delivered | unknown"),
    }, outcomes=DELIVERY_OUT, perception=True, outcome_port="outcome",
        doc="Confirm a place by observation: the target's place emptied and matter of its size and colour arrived in the receptacle."),
    NodeType("goal_taken", "perception", {
        "before": Port("before", "str", default="goal_seen",
                       doc="blackboard key of an earlier locate_object result of the goal"),
        "outcome": _key("outcome", "goal_taken.outcome", "taken | still_there"),
    }, outcomes=("taken", "still_there"), perception=True, outcome_port="outcome",
        doc="Re-locate the goal: taken when it was raised or is gone from where it was located."),
]

# -- mobile manipulation tools (issue 6; leaf classes in bt_grasp/nodes/mobile*.py) ---------------
NAV_OUT = ("arrived", "unreachable", "fault")
SHOW_OUT = ("one", "many", "none")
SELECT_OUT = ("one", "ambiguous", "none")
CHECK_OUT = ("ok", "mismatch", "unknown")
MARKER_OUT = ("done", "stale_marker", "infeasible", "fault")
PICK_OUT = tuple(LABELS) + ("infeasible", "stale_marker", "fault")

LEAVES += [
    NodeType("nav_to", "primitive", {
        "receptacle": Port("receptacle", "str", required=True, doc='receptacle to stand beside, e.g. "large table"'),
        "outcome": _key("outcome", "nav.outcome", "arrived | unreachable | fault"),
    }, outcomes=NAV_OUT, outcome_port="outcome",
        doc="Drive to a collision-free standoff with line of sight to the receptacle surface (A* on the sim floor map)."),
    NodeType("walk_around", "perception", {
        "views": Port("views", "int", default=3, minimum=1, maximum=5, doc="head pan viewpoints"),
        "result": _key("result", "inventory", "where the inventory text is written"),
        "outcome": _key("outcome", "inventory.outcome", "found | not_found"),
    }, outcomes=PERCEPTION_OUT, perception=True, outcome_port="outcome",
        doc='Inventory of the current receptacle from several viewpoints ("0: a mug, 1: a remote").'),
    NodeType("show_object_by_category", "perception", {
        "category": Port("category", "str", required=True, doc='what to look for, e.g. "{goal.object}"'),
        "condition": Port("condition", "bool", default=True,
                          doc="false = ablation: ignore the category, mark every object, best = first"),
        "result": _key("result", "objects", "where marks, best marker and inventory are written"),
        "outcome": _key("outcome", "objects.outcome", "one | many | none"),
    }, outcomes=SHOW_OUT, perception=True, outcome_port="outcome",
        doc="Numbered Set-of-Mark overlay of the objects matching a category (PNG in the trace folder)."),
    NodeType("select_target", "perception", {
        "text": Port("text", "str", required=True, doc='the request, qualifiers included, e.g. "{goal.object}"'),
        "condition": Port("condition", "bool", default=True,
                          doc="false = ablation: take marker 0 without grounding the request"),
        "result": _key("result", "objects", "where best (marker), reason and alternatives are written"),
        "outcome": _key("outcome", "select.outcome", "one | ambiguous | none"),
    }, outcomes=SELECT_OUT, outcome_port="outcome",
        doc='Which marked object the whole request picks out; two equally good -> ambiguous ("ambiguous: A or B").'),
    NodeType("check_target", "perception", {
        "marker": Port("marker", "any", required=True, doc='an object marker, e.g. "{objects.best}"'),
        "text": Port("text", "str", required=True, doc='the request, e.g. "{goal.object}"'),
        "result": _key("result", "check", "where the reason is written (<result>.reason)"),
        "outcome": _key("outcome", "check.outcome", "ok | mismatch | unknown"),
    }, outcomes=CHECK_OUT, outcome_port="outcome",
        doc="Semantic check of a marked object against every qualifier of the request; unknown is never ok."),
    NodeType("show_receptacles", "perception", {
        "target": Port("target", "str", default="", doc="receptacle wanted (its marker becomes receptacles.best)"),
        "result": _key("result", "receptacles", "where receptacle marks are written"),
        "outcome": _key("outcome", "receptacles.outcome", "found | not_found"),
    }, outcomes=PERCEPTION_OUT, perception=True, outcome_port="outcome",
        doc="Numbered Set-of-Mark overlay of the receptacles in view."),
    NodeType("gaze_at", "primitive", {
        "marker": Port("marker", "any", required=True, doc='an object marker, e.g. "{objects.best}"'),
        "outcome": _key("outcome", "gaze.outcome", "done | stale_marker | infeasible | fault"),
    }, outcomes=MARKER_OUT, outcome_port="outcome", doc="Point the head camera at a marked object."),
    NodeType("pick", "primitive", {
        "marker": Port("marker", "any", required=True, doc='an object marker, e.g. "{objects.best}"'),
        "watchdog": Port("watchdog", "bool", default=True,
                         doc="false = ablation: trust a completed motion (outcome SUCCESS)"),
        "execution": _key("execution", "pick.execution", "where the Execution is written"),
        "outcome": _key("outcome", "pick.outcome", "Watchdog label | infeasible | stale_marker | fault"),
    }, outcomes=PICK_OUT, counts_as_action=True, outcome_port="outcome",
        doc="Grasp a marked object and judge it with the Watchdog."),
    NodeType("place_on", "primitive", {
        "marker": Port("marker", "any", required=True, doc='a receptacle marker, e.g. "{receptacles.best}"'),
        "outcome": _key("outcome", "place_on.outcome", "done | stale_marker | infeasible | fault"),
    }, outcomes=MARKER_OUT, outcome_port="outcome", doc="Put the held object on a marked receptacle."),
    NodeType("open", "primitive", {
        "marker": Port("marker", "any", required=True, doc="an articulated marker (receptacle marker or handle name)"),
        "outcome": _key("outcome", "open.outcome", "done | stale_marker | infeasible | fault"),
    }, outcomes=MARKER_OUT, outcome_port="outcome", doc="Open a drawer or door."),
    NodeType("close", "primitive", {
        "marker": Port("marker", "any", required=True, doc="an articulated marker (receptacle marker or handle name)"),
        "outcome": _key("outcome", "close.outcome", "done | stale_marker | infeasible | fault"),
    }, outcomes=MARKER_OUT, outcome_port="outcome", doc="Close a drawer or door."),
    NodeType("ask", "action", {
        "question": Port("question", "str", default="Which one do you mean?", doc="asked with the inventory"),
        "answer": _key("answer", "ask.answer", "where the user's answer is written"),
        "outcome": _key("outcome", "ask.outcome", "resolved | unresolved"),
    }, outcomes=("resolved", "unresolved"), outcome_port="outcome",
        doc="Ask the user about the shown objects; a resolving answer sets objects.best."),
    NodeType("listen", "action", {
        "outcome": _key("outcome", "listen.outcome", "same | revised"),
    }, outcomes=("same", "revised"), outcome_port="outcome",
        doc="Reactive guard on the user channel: a revised instruction rewrites goal.* and fails."),
    NodeType("finish", "terminal", {
        "reason": Port("reason", "str", default="done"),
    }, doc="End the episode with FINALIZE (the mobile agent's finish tool)."),
]


# -- blackboard entries the leaves touch besides their port values -------------------------------
# Each becomes a port of its own in the BT.CPP export (see registry.KeyUse), so a C++ node written
# against the declared ports reads and writes exactly the entries the bt_grasp leaf does.

def _sub(port: str, *suffixes: str) -> tuple[KeyUse, ...]:
    """Sub-entries `{port}.<suffix>` written next to a key port (declared as `<port>_<suffix>`)."""
    return tuple(KeyUse(f"{port}_{s}", f"{{{port}}}.{s}", "output", f"{{{port}}}.{s}") for s in suffixes)


def _before(*suffixes: str) -> tuple[KeyUse, ...]:
    """What an evidence check reads of the earlier locate result named by its `before` port."""
    return (KeyUse("before_entry", "{before}", "input", "the located object named by `before`"),
            *(KeyUse(f"before_{s}", f"{{before}}.{s}", "input", f"{{before}}.{s}") for s in suffixes))


REASON = KeyUse("reason", "{id}.reason", "output", "why the leaf chose its outcome")
# A grasp's streaming Watchdog while it runs (None until a label is final): for reactive conditions.
LABEL_SO_FAR = (KeyUse("label_so_far", "{id}.label_so_far", "output", "the Watchdog's label so far"),
                KeyUse("label_so_far_confidence", "{id}.label_so_far.confidence", "output", "its confidence"))
LOCATED = ("name", "occluder", "query", "bbox")
KEY_USES: dict[str, tuple[KeyUse, ...]] = {
    "survey_scene": _sub("result", "count"),
    "locate_object": (KeyUse("scene", "scene", "output", "the scene graph perceived"),
                      *_sub("result", *LOCATED, "frame", "alternatives", "ambiguity")),
    "grasp": (REASON, *LABEL_SO_FAR),
    "push": (REASON,),
    "lift": (REASON,),
    "place": (REASON,),
    "evaluate_grasp": (*_sub("label", "confidence", "evidence", "semantic", "semantic_ok"),
                       KeyUse("located", "target", "input", "semantic check: the located target"),
                       KeyUse("located_query", "target.query", "input", "semantic check: its text"),
                       KeyUse("located_frame", "target.frame", "input", "semantic check: its frame")),
    "locate_any": (KeyUse("scene", "scene", "output", "the scene graph perceived"),
                   *_sub("result", *LOCATED, "grasp_score")),
    "pick_hider": (*_sub("result", *LOCATED), REASON),
    "check_held": (*_before("query", "frame"), REASON),
    "verify_delivery": (*_before("frame"), REASON),
    "goal_taken": (*_before("query", "frame"), REASON),
    "nav_to": (KeyUse("at", "nav.at", "output", "the receptacle the robot stands at"),),
    "walk_around": _sub("result", "count"),
    "show_object_by_category": _sub("result", "marks", "best", "count", "inventory", "image", "query"),
    "select_target": _sub("result", "best", "reason", "alternatives"),
    "check_target": _sub("result", "reason"),
    "show_receptacles": _sub("result", "marks", "best", "image"),
    "gaze_at": (REASON,),
    "pick": (*_sub("outcome", "target"), REASON, *LABEL_SO_FAR),
    "place_on": (REASON,),
    "open": (REASON,),
    "close": (REASON,),
    "ask": (KeyUse("question_asked", "{id}.question", "output", "the question as asked"),
            KeyUse("best", "objects.best", "output", "the marker the answer resolves to")),
    "listen": (KeyUse("goal_text", "goal.text", "output", "the revised instruction"),
               KeyUse("goal_object", "goal.object", "output", "the revised object text"),
               KeyUse("revisions_before", "goal.revisions", "input", "revisions so far"),
               KeyUse("goal_revisions", "goal.revisions", "output", "revisions, this one counted")),
}
# Every leaf may write `{id}.error` (a fault or a spent scoped budget); primitives log a trial id.
ERROR = KeyUse("error", "{id}.error", "output", "what went wrong when the leaf faulted")
TRIAL = KeyUse("trial_id", "{id}.trial_id", "output", "the trace id of the executed motion")

# The most ticks one call of a primitive may span: its motion is polled once per tick (one
# control period, 0.05 s by default) and cancelled as timed out at the last of them.
MAX_TICKS = {"grasp": 600, "push": 400, "lift": 300, "place": 600, "open_gripper": 200,
             "nav_to": 2400, "gaze_at": 300, "pick": 1200, "place_on": 1200, "open": 1200,
             "close": 1200}

for _nt in LEAVES:
    if _nt.kind != "terminal":
        _nt.keys = (*KEY_USES.get(_nt.name, ()), ERROR, *((TRIAL,) if _nt.kind == "primitive" else ()))
    _nt.max_ticks = MAX_TICKS.get(_nt.name, 1)


def register_all(reg: Registry) -> None:
    """Add the built-in composites, decorators and leaves (bt_grasp.default_registry adds the rest)."""
    for nt in COMPOSITES + LEAVES:
        reg.add(nt)
