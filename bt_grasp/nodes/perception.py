"""Perception leaves: survey the scene, ground a referring text. They count toward the
perception-streak guard and talk to the world only through ctx.driver and ctx.perceiver."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from bt_grasp.drivers.capabilities import Receptacles
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.declare import (
    LOCATE_OUT,
    LOCATED,
    finding_type,
    key_port,
    leaf_type,
    locate_outcomes,
    sub_entries,
)
from bt_grasp.nodes.referent import update_choice
from bt_grasp.perception.types import SceneGraph
from bt_grasp.registry import KeyUse, Port

PERCEPTION_SECONDS = 0.2  # logical time charged for one frame + inference


def in_region(point: Any, region: tuple[np.ndarray, np.ndarray] | None) -> bool:
    """Is a base-frame point inside the (lower, upper) box?"""
    if region is None or point is None:
        return False
    p = np.asarray(point, dtype=float)[:3]
    return bool(np.all(p >= region[0]) and np.all(p <= region[1]))


def without_region(scene: SceneGraph, region: tuple[np.ndarray, np.ndarray] | None) -> SceneGraph:
    """The scene without the objects lying inside `region` (e.g. what was put in the basket)."""
    if region is None:
        return scene
    keep = [o for o in scene.objects if not in_region(o.attributes.get("centroid_base"), region)]
    if len(keep) == len(scene.objects):
        return scene
    ids = {o.id for o in keep}
    return replace(scene, objects=keep, relations=[r for r in scene.relations if r[0] in ids and r[2] in ids])


def observe_and_survey(leaf: Leaf):
    """A fresh frame and its scene graph, remembered for the primitives that follow.

    A perceiver's survey is a function of the frame, so when the driver hands back the very
    frame surveyed last (nothing moved since), its scene graph is reused."""
    ctx = leaf.ctx
    obs = ctx.observe()
    last = ctx.memory.last_observation
    scene = ctx.memory.last_scene if last is obs else None
    if scene is None:
        scene = ctx.survey(obs)
    ctx.memory.last_observation = obs
    ctx.memory.last_scene = scene
    return obs, scene


class SurveyScene(Leaf):
    NODE_TYPE = finding_type("survey_scene", {}, ("scene", "where the scene graph is written"),
                             doc="Perceive the scene: objects with names and a scene graph of relations.",
                             keys=sub_entries("result", "count"))
    SUCCESS_OUTCOMES = frozenset({"found"})

    def execute(self) -> LeafResult:
        _, scene = observe_and_survey(self)
        key = self.out_key("result")
        outcome = "found" if scene.objects else "not_found"
        return self.result(outcome, {key: scene, f"{key}.count": len(scene.objects)},
                           PERCEPTION_SECONDS)


TRACK_RADIUS_M = 0.04  # how far the target may have shifted (a neighbour taken away) and still be followed


def tracked(leaf: Leaf, obs: Any, scene: SceneGraph, text: str, last: dict[str, Any]) -> Any:
    """The object of the target's colour lying where the target was last located, or None.

    Why: taking a neighbour away changes how much of the target shows, and with it the
    perceived name ("large blue duck" becomes a "small blue bar"), while the object has not
    moved. Its grounding score is today's (score_objects), so a weak fit is still weak for the
    delivery check."""
    at = np.asarray(last.get("at"), dtype=float)
    near = [(float(np.linalg.norm(np.asarray(o.attributes["centroid_base"], float)[:2] - at[:2])), o)
            for o in scene.objects
            if o.attributes.get("centroid_base") is not None and not o.attributes.get("fixture")
            and o.attributes.get("colour") == last.get("colour")]
    near = [(d, o) for d, o in near if d <= TRACK_RADIUS_M]
    if not near:
        return None
    obj = min(near, key=lambda t: t[0])[1]
    return _located(leaf, obs, scene, obj, _text_scores(text, scene).get(obj.id, 0.0))


def named(leaf: Leaf, obs: Any, scene: SceneGraph, name: str) -> Any:
    """The object the perceiver itself calls `name`, or None.

    Why: an occluder named by the scene graph is re-located by that name, and a name is only
    the segment's best catalogue fit: it may fit too weakly to pass grounding (a long bar at
    0.55) while still naming exactly one segment. Several bearers: the best-grounded one."""
    bearers = [o for o in scene.objects if o.name.lower() == name.lower().strip()
               and not o.attributes.get("fixture")]
    if not bearers:
        return None
    scores = _text_scores(name, scene)
    obj = max(bearers, key=lambda o: (scores.get(o.id, 0.0), o.attributes.get("pixels", 0)))
    return _located(leaf, obs, scene, obj, scores.get(obj.id, 0.0))


def _text_scores(text: str, scene: SceneGraph) -> dict[int, float]:
    """Every object's grounding score for `text` in this scene (a found-otherwise object keeps
    today's score, so a weak fit stays weak for the delivery check)."""
    from bt_grasp.perception.grounding import score_objects
    from bt_grasp.perception.query import parse

    return score_objects(parse(text, scene.vocabulary), scene)


def _located(leaf: Leaf, obs: Any, scene: SceneGraph, obj: Any, score: float) -> Any:
    """`obj` as a Located of this frame, or None when too little of it shows."""
    from bt_grasp.perception.assemble import to_located

    return to_located(obs, scene, obj, score, int(getattr(leaf.ctx.perceiver, "min_pixels", 20)))


def covering(scene: SceneGraph, tied: list[int]) -> str | None:
    """The name of an object partly covering one of the `tied` candidates (best first) that is
    neither a candidate itself nor a fixture, or None. Why: a tie between look-alikes is often
    one seen only in part; taken away, the coverer leaves both candidates in fuller view to be
    told apart, while taking a candidate away first would move what may be the goal."""
    for oid in tied:
        for cover in scene.related(oid, "partially_occluded_by"):
            obj = scene.by_id(cover)
            if obj is not None and cover not in tied and not obj.attributes.get("fixture"):
                return obj.name
    return None


def in_full_view(scene: SceneGraph, tied: list[int]) -> bool:
    """No tied candidate is partly covered (by anything, another candidate or a fixture too).

    Why: a tie between candidates seen whole is one the words leave open, and looking again
    will not settle it: a question is the answer. A partly covered candidate may be a
    look-alike seen in part, which taking things away can still tell apart."""
    return not any(scene.related(oid, "partially_occluded_by") for oid in tied)


class LocateObject(Leaf):
    """found: visible; occluded: visible but partially covered (the occluder is named);
    not_found: absent or fully hidden; with `ambiguity: report`, ambiguous: other candidates fit
    the text as well (`{result}.ambiguity` reads "ambiguous: A or B"), so nothing is guessed;
    `{result}.occluder` then names an object covering one of them (see `covering`), or None;
    with `ambiguity: report_in_view`, only a tie between candidates all in full view is reported
    (see `in_full_view`), or one the words leave open (`Located.words_tie`: "the bar" with two
    bars clearly seen as bars); a tie with one partly covered takes the best.
    With `skip: basket`, objects inside the receptacle's region (driver.place_region) are no
    candidates: what the robot put there itself is never picked again as the goal. With
    `track: true`, a target the text no longer grounds to is followed by where it was last
    located (see `tracked`). With `match: name`, a text that no longer grounds but is the name
    of a perceived object (an occluder the scene graph named) takes that object (see `named`).
    With `track: true` it also remembers the object the words chose by place (`{result}.choice`,
    nodes/referent.py), so the delivery check can tell it from another that fits them later."""

    NODE_TYPE = leaf_type("locate_object", "perception", {
        "target": Port("target", "str", required=True, doc='referring text, e.g. "{goal.object}"'),
        "result": key_port("result", "target", "where the located object is written"),
        "outcome": key_port("outcome", "target.outcome", "found | occluded | not_found | ambiguous"),
        "ambiguity": Port("ambiguity", "str", default="choose", choices=("choose", "report", "report_in_view"),
                          doc="when other candidates fit as well: take the best (choose) or fail with "
                              "outcome `ambiguous`, `{result}.ambiguity` = \"ambiguous: A or B\" and "
                              "`{result}.occluder` = an object covering one of them, if any (report); "
                              "report_in_view: report only when every candidate is in full view (none "
                              "partly covered) or the words leave the tie open (Located.words_tie), "
                              "else take the best"),
        "skip": Port("skip", "str", doc="receptacle (e.g. basket) whose contents are no candidates "
                     "(its region comes from driver.place_region)"),
        "track": Port("track", "bool", default=False, doc="when the text no longer grounds, follow the "
                      "object of the target's colour lying where it was last located"),
        "match": Port("match", "str", default="text", choices=("text", "name"),
                      doc="text: ground the referring text; name: the text is a name the perceiver gave "
                          "(e.g. {target.occluder}), so the object bearing it is taken even when its "
                          "fit is too weak for grounding"),
    }, outcomes=LOCATE_OUT, outcomes_for=locate_outcomes, perception=True, outcome_port="outcome",
        doc="Ground a referring text in the latest scene: mask, bbox, 3D points.",
        keys=(KeyUse("scene", "scene", "output", "the scene graph perceived"),
                      *sub_entries("result", *LOCATED, "frame", "alternatives", "ambiguity")))
    SUCCESS_OUTCOMES = frozenset({"found", "occluded"})

    def execute(self) -> LeafResult:
        text = str(self.port("target") or "")
        key = self.out_key("result")
        obs, scene = observe_and_survey(self)
        skip = self.port("skip")
        receptacles = self.ctx.driver if isinstance(self.ctx.driver, Receptacles) else None
        candidates = (without_region(scene, receptacles.place_region(str(skip)))
                      if skip and receptacles is not None else scene)
        located = self.ctx.locate(obs, text, candidates) if text else None
        if located is None and text and self.port("match") == "name":
            located = named(self, obs, candidates, text)
        writes: dict[str, Any] = {"scene": scene, f"{key}.query": text}
        last = self.ctx.blackboard.get(f"{key}.track") if self.port("track") else None
        followed = located is None and last is not None
        if followed and last is not None:  # (followed implies a last track)
            located = tracked(self, obs, candidates, text, last)
            writes[f"{self.node_id}.reason"] = None if located is None else \
                f"the text no longer grounds; the {located.name} lies where the target was last located"
        if located is None:
            writes.update({key: None, f"{key}.name": None, f"{key}.occluder": None})
            return self.result("not_found", writes, PERCEPTION_SECONDS)
        alternatives = [str(a) for a in getattr(located, "alternatives", None) or []]
        tied = [located.object_id, *(getattr(located, "alternative_ids", None) or [])]
        mode = self.port("ambiguity")
        words_tie = bool(getattr(located, "words_tie", False))  # a plugin's Located may not say
        if alternatives and (mode == "report" or (mode == "report_in_view"
                                                  and (words_tie or in_full_view(scene, tied)))):
            names = " or ".join([located.name, *alternatives])
            writes.update({key: None, f"{key}.name": None, f"{key}.occluder": covering(candidates, tied),
                           f"{key}.alternatives": alternatives, f"{key}.ambiguity": f"ambiguous: {names}"})
            return self.result("ambiguous", writes, PERCEPTION_SECONDS)
        occluders = [scene.by_id(i) for i in located.occluded_by]
        occluder = next((o.name for o in occluders if o is not None), None)
        writes.update({key: located, f"{key}.name": located.name, f"{key}.occluder": occluder,
                       f"{key}.frame": obs,  # what the evidence checks compare later frames with
                       f"{key}.bbox": list(located.bbox)})
        if self.port("track") and not followed:  # anchored where the text last grounded: no drift
            obj = scene.by_id(located.object_id)
            at = np.median(np.asarray(located.points_base), axis=0)[:3].round(4).tolist()
            colour = obj.attributes.get("colour") if obj is not None else None
            writes[f"{key}.track"] = {"at": at, "colour": colour}
            writes[f"{key}.choice"] = update_choice(self.ctx.blackboard.get(f"{key}.choice"), text,
                                                    located.object_id, candidates)
        return self.result("occluded" if occluder else "found", writes, PERCEPTION_SECONDS)

    def simulate(self, outcome: str) -> LeafResult:
        """Under the verifier an ambiguous answer still names itself in the reason."""
        writes = {f"{self.out_key('result')}.ambiguity": "ambiguous: (candidates chosen by the verifier)"} \
            if outcome == "ambiguous" else {}
        return self.result(outcome, writes, PERCEPTION_SECONDS)
