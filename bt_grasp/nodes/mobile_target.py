"""Target choice for the mobile tools: select_target (which marked object the whole request picks
out, or "ambiguous: A or B") and check_target (semantic check: ok / mismatch / unknown).

They read only the last object overlay (marks, its frame and scene graph, kept in ctx.services by
show_object_by_category) and the perceiver's `locate`; the logic is in bt_grasp/mobile/target.py.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.mobile.target import check, select
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.declare import CHECK_OUT, SELECT_OUT, ablation_port, key_port, leaf_type, sub_entries
from bt_grasp.nodes.mobile_marks import _lookup, _marks, _view
from bt_grasp.registry import Port


def _shown(ctx: Any) -> tuple[Any, Any] | None:
    """(observation, scene) of the last object overlay, if it is still current."""
    shown = ctx.memory.shown
    marks = _marks(ctx, "object")
    if shown is None or not marks or any(m.view != _view(ctx) for m in marks.values()):
        return None
    return shown


class SelectTarget(Leaf):
    """Which marked object the whole request (qualifiers included) picks out: one, or two equally
    good ("ambiguous: A or B" in `<result>.reason`), or none. condition false = ablation: marker 0."""

    NODE_TYPE = leaf_type("select_target", "perception", {
        "text": Port("text", "str", required=True, doc='the request, qualifiers included, e.g. "{goal.object}"'),
        "condition": ablation_port("condition", "take marker 0 without grounding the request"),
        "result": key_port("result", "objects", "where best (marker), reason and alternatives are written"),
        "outcome": key_port("outcome", "select.outcome", "one | ambiguous | none"),
    }, outcomes=SELECT_OUT, outcome_port="outcome",
        doc='Which marked object the whole request picks out; two equally good -> ambiguous ("ambiguous: A or B").',
        keys=sub_entries("result", "best", "reason", "alternatives"))
    SUCCESS_OUTCOMES = frozenset({"one"})

    def execute(self) -> LeafResult:
        ctx = self.ctx
        key = self.out_key("result")
        text = str(self.port("text") or "")
        marks = _marks(ctx, "object")
        shown = _shown(ctx)
        if shown is None:
            return self.result("none", {f"{key}.reason": "no current overlay of objects"})
        if not self.port("condition"):
            return self.result("one", {f"{key}.best": min(marks), f"{key}.reason": "ablation: first marker"})
        obs, scene = shown
        by_id = {getattr(m.located, "object_id", None): k for k, m in marks.items()}
        candidates = [o for o in scene.objects if o.id in by_id]
        located = ctx.locate(obs, text, scene) if candidates else None
        sel = select(text, scene, candidates, located)
        writes: dict[str, Any] = {f"{key}.reason": sel.reason,
                                  f"{key}.alternatives": [o.name for o in sel.alternatives]}
        if sel.best is None:
            return self.result("none", writes, event_meta={"reason": sel.reason})
        writes[f"{key}.best"] = by_id[sel.best.id]
        outcome = "ambiguous" if sel.alternatives else "one"
        return self.result(outcome, writes, event_meta={"reason": sel.reason})

    def simulate(self, outcome: str) -> LeafResult:
        key = self.out_key("result")
        return self.result(outcome, {f"{key}.best": 0 if outcome != "none" else None,
                                     f"{key}.reason": "ambiguous: A or B" if outcome == "ambiguous" else outcome})


class CheckTarget(Leaf):
    """Semantic check of a marked object against the request: ok, mismatch or unknown (never ok)."""

    NODE_TYPE = leaf_type("check_target", "perception", {
        "marker": Port("marker", "any", required=True, doc='an object marker, e.g. "{objects.best}"'),
        "text": Port("text", "str", required=True, doc='the request, e.g. "{goal.object}"'),
        "result": key_port("result", "check", "where the reason is written (<result>.reason)"),
        "outcome": key_port("outcome", "check.outcome", "ok | mismatch | unknown"),
    }, outcomes=CHECK_OUT, outcome_port="outcome",
        doc="Semantic check of a marked object against every qualifier of the request; unknown is never ok.",
        keys=sub_entries("result", "reason"))
    SUCCESS_OUTCOMES = frozenset({"ok"})

    def execute(self) -> LeafResult:
        ctx = self.ctx
        mark, why = _lookup(ctx, "object", self.port("marker"))
        shown = _shown(ctx)
        reason_key = f"{self.out_key('result')}.reason"
        if mark is None or mark.located is None or shown is None:
            why = why or "no current overlay of objects"
            return self.result("unknown", {reason_key: f"unknown: {why}"}, event_meta={"reason": why})
        scene = shown[1]
        target = scene.by_id(mark.located.object_id)
        if target is None:
            return self.result("unknown", {reason_key: "unknown: marked object not in the scene"})
        verdict, reason = check(str(self.port("text") or ""), target, scene)
        return self.result(verdict, {reason_key: reason}, event_meta={"reason": reason, "target": mark.name})

    def simulate(self, outcome: str) -> LeafResult:
        return self.result(outcome, {f"{self.out_key('result')}.reason": outcome})


TARGET_LEAVES: tuple[type[Leaf], ...] = (SelectTarget, CheckTarget)
