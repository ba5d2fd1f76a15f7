"""The mobile leaves that start a driver motion: nav_to, gaze_at, pick, place_on, open, close.
A started motion is returned as Pending: it runs across ticks and a reactive parent can halt it."""

from __future__ import annotations

from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.capabilities import Articulated, MobileBase
from bt_grasp.drivers.motion import start_motion
from bt_grasp.mobile.som import Mark
from bt_grasp.nodes.base import Leaf, LeafResult, Pending
from bt_grasp.nodes.declare import (
    LABEL_SO_FAR,
    MARKER_OUT,
    NAV_OUT,
    PICK_OUT,
    REASON,
    ablation_port,
    key_port,
    leaf_type,
    sub_entries,
)
from bt_grasp.nodes.mobile_marks import _lookup, _view
from bt_grasp.nodes.primitives import _exec_meta, check_grasp
from bt_grasp.nodes.watchdog import WatchedGrasp
from bt_grasp.registry import KeyUse, NodeType, Port


def _motion_outcome(ex: Execution) -> str:
    if ex.fault is None:
        return "done"
    return "infeasible" if ex.fault.startswith(("infeasible", "blocked")) else "fault"



OBJECT_MARKER = 'an object marker, e.g. "{objects.best}"'
RECEPTACLE_MARKER = 'a receptacle marker, e.g. "{receptacles.best}"'
ARTICULATED_MARKER = "an articulated marker (receptacle marker or handle name)"


def marker_motion_type(name: str, outcome_key: str, marker_doc: str, doc: str, max_ticks: int) -> NodeType:
    """A motion aimed at a marker: done, or why not (stale marker, infeasible, fault)."""
    return leaf_type(name, "primitive", {
        "marker": Port("marker", "any", required=True, doc=marker_doc),
        "outcome": key_port("outcome", f"{outcome_key}.outcome", "done | stale_marker | infeasible | fault"),
    }, outcomes=MARKER_OUT, outcome_port="outcome", doc=doc, keys=(REASON,), max_ticks=max_ticks)


class NavTo(Leaf):
    """Drive to the receptacle's standoff; every mark drawn before becomes stale."""

    NODE_TYPE = leaf_type("nav_to", "primitive", {
        "receptacle": Port("receptacle", "str", required=True, doc='receptacle to stand beside, e.g. "large table"'),
        "outcome": key_port("outcome", "nav.outcome", "arrived | unreachable | fault"),
    }, outcomes=NAV_OUT, outcome_port="outcome",
        doc="Drive to a collision-free standoff with line of sight to the receptacle surface (A* on the sim floor map).",
        keys=(KeyUse("at", "nav.at", "output", "the receptacle the robot stands at"),), max_ticks=2400)
    SUCCESS_OUTCOMES = frozenset({"arrived"})

    def execute(self) -> LeafResult | Pending:
        ctx = self.ctx
        name = str(self.port("receptacle"))
        if not isinstance(ctx.driver, MobileBase):
            return self.result("unreachable", event_meta={"reason": "driver has no MobileBase"})
        motion = start_motion(ctx.driver, "nav_to", place=name, timeout=ctx.remaining_time())
        ctx.memory.view = _view(ctx) + 1  # the base moves from now on: marks drawn before are stale

        def finish(ex: Execution) -> LeafResult:
            outcome = "arrived" if ex.fault is None else ("unreachable" if ex.fault.startswith("infeasible") else "fault")
            writes = {"nav.at": name if outcome == "arrived" else None}
            return self.result(outcome, writes, ex.duration, {**ex.info, "fault": ex.fault, "receptacle": name})

        return Pending(motion, finish, halt_writes=lambda ex: {"nav.at": None})  # halted on the way


class GazeAt(Leaf):
    NODE_TYPE = marker_motion_type("gaze_at", "gaze", OBJECT_MARKER, "Point the head camera at a marked object.", 300)
    SUCCESS_OUTCOMES = frozenset({"done"})

    def execute(self) -> LeafResult | Pending:
        mark, why = _lookup(self.ctx, "object", self.port("marker"))
        if mark is None or mark.point_base is None:
            return self.result("stale_marker", {f"{self.node_id}.reason": why}, event_meta={"reason": why})
        motion = start_motion(self.ctx.driver, "gaze_at", point=mark.point_base, timeout=self.ctx.remaining_time())
        return Pending(motion, lambda ex: self.result(_motion_outcome(ex), duration=ex.duration,
                                                      event_meta={**ex.info, "target": mark.name}))


class Pick(WatchedGrasp):
    """Grasp the marked object (first feasible planned grasp) and classify it with the Watchdog."""

    NODE_TYPE = leaf_type("pick", "primitive", {
        "marker": Port("marker", "any", required=True, doc=OBJECT_MARKER),
        "watchdog": ablation_port("watchdog", "trust a completed motion (outcome SUCCESS)"),
        "execution": key_port("execution", "pick.execution", "where the Execution is written"),
        "outcome": key_port("outcome", "pick.outcome", "Watchdog label | infeasible | stale_marker | fault"),
    }, outcomes=PICK_OUT, counts_as_action=True, outcome_port="outcome",
        doc="Grasp a marked object and judge it with the Watchdog.",
        keys=(*sub_entries("outcome", "target"), REASON, *LABEL_SO_FAR), max_ticks=1200)
    SUCCESS_OUTCOMES = frozenset({"SUCCESS"})

    def execute(self) -> LeafResult | Pending:
        ctx = self.ctx
        self.live = None
        exec_key = self.out_key("execution")
        mark, why = _lookup(ctx, "object", self.port("marker"))
        if mark is None or mark.located is None:
            return self.result("stale_marker", {exec_key: None, f"{self.node_id}.reason": why},
                               event_meta={"reason": why})
        candidates = ctx.services.plan_grasps(mark.observation, mark.located)
        for pose in candidates[: self.MAX_CANDIDATES]:
            ok, _ = check_grasp(ctx.need_driver(), pose, pose)
            if not ok:
                continue
            motion = start_motion(ctx.driver, "grasp", pose=pose, width=pose.width, force=20.0,
                                  timeout=ctx.remaining_time())
            if self.port("watchdog"):  # the label so far while it runs ({id}.label_so_far)
                motion = self.watched(motion)
            def finish(ex: Execution, mark: Mark = mark) -> LeafResult:
                return self.finish(ex, mark)

            return Pending(motion, finish, halt_writes=lambda ex: {exec_key: ex})
        return self.result("infeasible", {exec_key: None}, event_meta={"reason": "no feasible grasp",
                                                                       "target": mark.name})

    def finish(self, ex: Execution, mark: Mark) -> LeafResult:
        """The grasp ended: a driver fault, else the Watchdog's label of its telemetry."""
        exec_key = self.out_key("execution")
        meta = {**_exec_meta(ex), "target": mark.name, "marker": mark.marker}
        if ex.fault is not None and ex.fault != "timeout":
            return self.result("infeasible" if ex.fault.startswith("infeasible") else "fault",
                               {exec_key: ex}, ex.duration, meta)
        if self.port("watchdog"):
            verdict = self.ctx.services.classify(ex.telemetry)
            label = verdict.label.value if hasattr(verdict.label, "value") else str(verdict.label)
            meta["watchdog"] = {"label": label, "confidence": round(float(verdict.confidence), 4),
                                "rule": verdict.evidence.get("rule")}
        else:
            label = "SUCCESS"  # ablation: a finished motion is believed
            meta["watchdog"] = {"label": None, "ablated": True}
        return self.result(label, {exec_key: ex, f"{self.out_key('outcome')}.target": mark.name},
                           ex.duration, meta)


class PlaceOn(Leaf):
    NODE_TYPE = marker_motion_type("place_on", "place_on", RECEPTACLE_MARKER,
                                   "Put the held object on a marked receptacle.", 1200)
    SUCCESS_OUTCOMES = frozenset({"done"})

    def execute(self) -> LeafResult | Pending:
        mark, why = _lookup(self.ctx, "receptacle", self.port("marker"))
        if mark is None:
            return self.result("stale_marker", {f"{self.node_id}.reason": why}, event_meta={"reason": why})
        motion = start_motion(self.ctx.driver, "place", target=mark.name, timeout=self.ctx.remaining_time())
        return Pending(motion, lambda ex: self.result(_motion_outcome(ex), duration=ex.duration,
                                                      event_meta={**_exec_meta(ex), "receptacle": mark.name}))


class _Articulate(Leaf):
    SUCCESS_OUTCOMES = frozenset({"done"})

    PRIMITIVE = ""  # the Articulated method, started as a motion

    def execute(self) -> LeafResult | Pending:
        marker = self.port("marker")
        handle: str | None = marker if isinstance(marker, str) and not marker.isdigit() else None
        if handle is None:
            mark, why = _lookup(self.ctx, "receptacle", marker)
            if mark is None:
                return self.result("stale_marker", {f"{self.node_id}.reason": why}, event_meta={"reason": why})
            handle = f"{mark.name} drawer"
        if not isinstance(self.ctx.driver, Articulated):
            return self.result("infeasible", event_meta={"reason": "driver is not Articulated"})
        motion = start_motion(self.ctx.driver, self.PRIMITIVE, handle=handle, timeout=self.ctx.remaining_time())
        return Pending(motion, lambda ex: self.result(_motion_outcome(ex), duration=ex.duration,
                                                      event_meta={**ex.info, "handle": handle}))


class Open(_Articulate):
    NODE_TYPE = marker_motion_type("open", "open", ARTICULATED_MARKER, "Open a drawer or door.", 1200)
    PRIMITIVE = "open"


class Close(_Articulate):
    NODE_TYPE = marker_motion_type("close", "close", ARTICULATED_MARKER, "Close a drawer or door.", 1200)
    PRIMITIVE = "close_articulated"
