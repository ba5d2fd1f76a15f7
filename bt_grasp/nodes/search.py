"""Search instead of giving up: choose the object under or inside which a hidden target most
likely lies, so the tree can take it away (or push it) and look again.

A target that perception cannot find in clutter is usually hidden, not absent: under a larger
object, inside a pile, or merged into a same-coloured neighbour by the segmenter. `pick_hider`
ranks the visible objects (outside the receptacle, whose region the driver knows) by how much
they could hide:
- footprint: a larger object can cover more (and larger) things;
- height above the table: piles and objects lying on others hide what is below;
- relations: objects that occlude others or carry others on top are piles;
- colour: an object of the target's colour may be the target merged with a neighbour, or the
  target under another name.
It then plans grasps on the best few and writes the first graspable one where `locate_object`
writes a located object, so the ordinary grasp and push leaves act on it. Never a guess about
identity: the object is only moved, and the target is looked for again afterwards.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.drivers.capabilities import Receptacles
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.declare import LOCATED, REASON, finding_type, sub_entries
from bt_grasp.nodes.perception import PERCEPTION_SECONDS, in_region, observe_and_survey
from bt_grasp.perception.types import SceneGraph, SceneObject
from bt_grasp.registry import Port

SAME_COLOUR_WEIGHT = 2.0  # the target may be inside a same-coloured segment
PILE_HEIGHT_M = 0.05  # a segment this tall above the table counts double


def hide_score(obj: SceneObject, scene: SceneGraph, colour: str | None) -> float:
    """How much of the table `obj` could be hiding the target under or inside (larger = more)."""
    ext = obj.attributes.get("extent") or [0.0, 0.0, 0.0]
    footprint = max(float(ext[0]) * float(ext[1]), 0.0)
    top = float(obj.attributes.get("top_height", ext[2] if len(ext) > 2 else 0.0))
    covers = sum(1 for s, r, o in scene.relations if o == obj.id and r in ("partially_occluded_by", "on_top_of"))
    lies_on = sum(1 for s, r, _ in scene.relations if s == obj.id and r == "on_top_of")
    score = footprint * (1.0 + top / PILE_HEIGHT_M) * (1.0 + covers + lies_on)
    if colour is not None and obj.attributes.get("colour") == colour:
        score *= SAME_COLOUR_WEIGHT
    return score


class PickHider(Leaf):
    """found: an object to take away (written like a located target); not_found: nothing visible
    outside the receptacle could be moved; spent: the episode's action budget is spent, so
    nothing could be moved any more (the tree can end the search with "not found" instead of
    having its next move refused)."""

    NODE_TYPE = finding_type("pick_hider", {
        "target": Port("target", "str", required=True, doc='the text of the object searched for, e.g. "{goal.object}"'),
        "place": Port("place", "str", default="basket", doc="receptacle whose region (driver.place_region) is skipped"),
        "max_objects": Port("max_objects", "int", default=3, minimum=1,
                            doc="best-ranked objects whose grasps are planned; the first graspable one is chosen"),
    }, ("hider", "where the chosen object is written (like locate_object)"),
        doc="Search: the graspable object most likely to hide the target (large, piled, of its colour).",
        keys=(*sub_entries("result", *LOCATED), REASON), outcomes=("found", "not_found", "spent", "fault"))
    SUCCESS_OUTCOMES = frozenset({"found"})

    def execute(self) -> LeafResult:
        from bt_grasp.perception.assemble import to_located
        from bt_grasp.perception.query import parse

        ctx = self.ctx
        key = self.out_key("result")
        if ctx.ledger.actions >= ctx.limits.actions:  # a move now would be refused and end the episode
            return self._no_hider("spent", key, "the action budget is spent: nothing more can be moved", 0.0)
        text = str(self.port("target") or "")
        colour = parse(text).colour if text else None
        region = ctx.driver.place_region(str(self.port("place"))) if isinstance(ctx.driver, Receptacles) else None
        obs, scene = observe_and_survey(self)
        min_pixels = int(getattr(ctx.perceiver, "min_pixels", 20))
        ranked = sorted((o for o in scene.objects
                         if not in_region(o.attributes.get("centroid_base"), region)),
                        key=lambda o: -hide_score(o, scene, colour))
        writes: dict[str, Any] = {f"{key}.occluder": None, f"{key}.query": None}
        for obj in ranked[: int(self.port("max_objects"))]:
            loc = to_located(obs, scene, obj, 1.0, min_pixels)
            if loc is None or not len(loc.points_base) or not ctx.services.plan_grasps(obs, loc):
                continue
            score = hide_score(obj, scene, colour)
            writes.update({key: loc, f"{key}.name": loc.name, f"{key}.bbox": list(loc.bbox),
                           f"{self.node_id}.reason": f"{loc.name!r} could hide the target (score {score:.4f})"})
            return self.result("found", writes, PERCEPTION_SECONDS)
        return self._no_hider("not_found", key, "no movable object left outside the receptacle", PERCEPTION_SECONDS)

    def _no_hider(self, outcome: str, key: str, reason: str, seconds: float) -> LeafResult:
        """No hider chosen: the result's entries cleared, so no earlier round's hider is acted on."""
        return self.result(outcome, {key: None, f"{key}.name": None, f"{key}.occluder": None, f"{key}.query": None,
                                     f"{self.node_id}.reason": reason}, seconds)

