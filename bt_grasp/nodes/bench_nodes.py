"""Leaves used by the benchmark's naive baseline (trees/remove_all.yaml).

`locate_any` picks the most graspable visible object without any semantics — the object whose
best planned grasp scores highest — and writes it exactly where `locate_object` writes a located
target, so the ordinary `grasp` leaf executes it. `goal_taken` is the baseline's only stopping
check: a perception re-locate of the goal after a lift (is the goal still lying where it was?).
Both talk to the world only through ctx.driver / ctx.perceiver / ctx.services, like every leaf.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.declare import (
    LOCATED,
    PERCEPTION_OUT,
    REASON,
    before_entries,
    key_port,
    leaf_type,
    sub_entries,
)
from bt_grasp.nodes.perception import PERCEPTION_SECONDS, observe_and_survey
from bt_grasp.registry import KeyUse, Port


def parse_box(text: Any) -> list[float] | None:
    """"xmin xmax ymin ymax" (spaces, commas or semicolons) -> 4 floats; None when absent.

    A plain string rather than a YAML list so the port survives the BT.CPP round trip, where
    every port is text."""
    if text is None or text == "":
        return None
    parts = [p for p in str(text).replace(",", " ").replace(";", " ").split() if p]
    if len(parts) != 4:
        raise ValueError(f"exclude must be 'xmin xmax ymin ymax', got {text!r}")
    return [float(p) for p in parts]


def _in_box(xy: np.ndarray, box: list[float] | None) -> bool:
    """box = [xmin, xmax, ymin, ymax] in the base frame (metres)."""
    if box is None:
        return False
    return bool(box[0] <= xy[0] <= box[1] and box[2] <= xy[1] <= box[3])


class LocateAny(Leaf):
    """found: the visible object with the highest-scoring grasp; not_found: nothing graspable.

    Planning grasps costs ~0.1-0.3 s per object, so only the `max_objects` objects highest above
    the table are scored (a pile is cleared from the top, which is also what a naive operator
    does); objects whose centroid lies in `exclude` (e.g. the basket) are never picked.
    """

    NODE_TYPE = leaf_type("locate_any", "perception", {
        "result": key_port("result", "target", "where the picked object is written (like locate_object)"),
        "outcome": key_port("outcome", "target.outcome", "found | not_found"),
        "exclude": Port("exclude", "str", doc='"xmin xmax ymin ymax" (metres, base frame): objects '
                        "whose centre lies in this box are never picked (e.g. the basket)"),
        "max_objects": Port("max_objects", "int", default=4, minimum=1,
                            doc="objects (highest first) whose grasps are planned and scored"),
    }, outcomes=PERCEPTION_OUT, perception=True, outcome_port="outcome",
        doc="Naive baseline: locate the visible object whose best planned grasp scores highest.",
        keys=(KeyUse("scene", "scene", "output", "the scene graph perceived"),
                   *sub_entries("result", *LOCATED, "grasp_score")))
    SUCCESS_OUTCOMES = frozenset({"found"})

    def execute(self) -> LeafResult:
        from bt_grasp.perception.assemble import to_located

        ctx = self.ctx
        key = self.out_key("result")
        exclude = parse_box(self.port("exclude"))
        max_objects = int(self.port("max_objects"))
        obs, scene = observe_and_survey(self)
        min_pixels = int(getattr(ctx.perceiver, "min_pixels", 20))
        located_all: list[tuple[float, Any]] = []
        for obj in scene.objects:
            loc = to_located(obs, scene, obj, 1.0, min_pixels)
            if loc is None or not len(loc.points_base):
                continue
            centre = np.median(np.asarray(loc.points_base), axis=0)
            if _in_box(centre[:2], exclude):
                continue
            top = float(np.percentile(np.asarray(loc.points_base)[:, 2], 95))
            located_all.append((top, loc))
        located_all.sort(key=lambda t: -t[0])
        best, best_score = None, -np.inf
        for _, loc in located_all[:max_objects]:
            grasps = ctx.services.plan_grasps(obs, loc)
            if grasps and float(grasps[0].score) > best_score:
                best, best_score = loc, float(grasps[0].score)
        writes: dict[str, Any] = {"scene": scene, f"{key}.query": None, f"{key}.occluder": None}
        if best is None:
            writes.update({key: None, f"{key}.name": None})
            return self.result("not_found", writes, PERCEPTION_SECONDS)
        best.score = best_score
        writes.update({key: best, f"{key}.name": best.name, f"{key}.bbox": list(best.bbox),
                       f"{key}.grasp_score": round(best_score, 4)})
        return self.result("found", writes, PERCEPTION_SECONDS)


class GoalTaken(Leaf):
    """taken: the goal located earlier (at `before`) has been raised or is gone from its place;
    still_there: it lies where it was, or it was never located (nothing to claim)."""

    NODE_TYPE = leaf_type("goal_taken", "perception", {
        "before": Port("before", "str", default="goal_seen",
                       doc="blackboard key of an earlier locate_object result of the goal"),
        "outcome": key_port("outcome", "goal_taken.outcome", "taken | still_there"),
    }, outcomes=("taken", "still_there", "fault"), perception=True, outcome_port="outcome",
        doc="Re-locate the goal: taken when it was raised or is gone from where it was located.",
        keys=(*before_entries("query", "frame"), REASON))
    SUCCESS_OUTCOMES = frozenset({"taken"})

    def execute(self) -> LeafResult:
        from bt_grasp.watchdog.semantic import TargetStillThere

        before_key = self.out_key("before")
        if self.ctx.blackboard.get(before_key) is None:
            return self.result("still_there", {f"{self.node_id}.reason": "goal never located"},
                               PERCEPTION_SECONDS)
        # Naive on purpose (it is the baseline): "not visible any more" counts as taken.
        verdict, reason = TargetStillThere(before_key, f"{before_key}.query", f"{before_key}.frame").check(self.ctx)
        return self.result("still_there" if verdict == "mismatch" else "taken", {f"{self.node_id}.reason": reason},
                           PERCEPTION_SECONDS)
