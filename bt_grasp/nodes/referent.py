"""The referent the words chose, remembered by place: words that name a place or a rank ("the
farthest bar", "the box behind the yellow ball") describe the scene as it was when they were
grounded, and the scene changes as the robot works (a ball rolled by an empty grasp, a cover
taken away), so a later look may ground them to another object. A FINALIZE must rest on the
object the words chose, not on one of the same kind and colour that fits them now.

State as data: one dict on the blackboard (`{result}.choice`, written by locate_object with
`track: true`, read by verify_delivery), updated by `update_choice` at each locate that grounds
the words. Positions are the perceiver's (base-frame centroids), never the simulator's truth.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.perception.types import SceneGraph

# How far (in the table plane) a segment's centroid may lie from a remembered place and still be
# taken as what stood there: about half a catalogue object, as the locate's track radius.
PLACE_RADIUS_M = 0.04


def _near(a: Any, b: Any) -> bool:
    """Do two base-frame points lie within PLACE_RADIUS_M of each other in the table plane?"""
    return float(np.linalg.norm(np.asarray(a, dtype=float)[:2] - np.asarray(b, dtype=float)[:2])) <= PLACE_RADIUS_M


def alike(text: str, scene: SceneGraph, but: int) -> list[list[float]]:
    """Base-frame centroids of the objects the words describe as well, place and rank aside (the
    same kind, colour and size fit: grounding's ACCEPT), all but object `but`, its pieces
    (split_merge.same_object) and what lies at its own place: what the words could have chosen
    instead.

    Why only those: a cover of another kind that lay on the chosen object stood where the chosen
    one shows once the cover is gone; it was never a rival."""
    from dataclasses import replace

    from bt_grasp.perception.grounding import ACCEPT, score_objects
    from bt_grasp.perception.query import parse
    from bt_grasp.perception.split_merge import same_object

    chosen = scene.by_id(but)
    home = None if chosen is None else chosen.attributes.get("centroid_base")
    described = score_objects(replace(parse(text, scene.vocabulary), superlative=None, relation=None, anchor=None),
                              scene)
    others = []
    for o in scene.objects:
        at = o.attributes.get("centroid_base")
        if o.id == but or described.get(o.id, 0.0) < ACCEPT or o.attributes.get("fixture") or at is None \
                or (chosen is not None and same_object(chosen, o)) \
                or (home is not None and _near(at, home)):
            continue
        others.append([round(float(x), 4) for x in at[:3]])
    return others


def nearest_place(at: Any, chosen: Any, others: list[Any]) -> str | None:
    """"chosen" when `at` lies within PLACE_RADIUS_M of the chosen object's place, else "other"
    when it lies that near another remembered place; None when none is that near (an object
    that moved since, or one not seen then)."""
    if _near(at, chosen):
        return "chosen"
    return "other" if any(_near(at, o) for o in others) else None


def still_there(choice: dict[str, Any], scene: SceneGraph, but: int | None) -> bool:
    """Does an object of the chosen one's colour (other than `but`) still lie at its place?"""
    return any(o.id != but and not o.attributes.get("fixture") and o.attributes.get("colour") == choice["colour"]
               and o.attributes.get("centroid_base") is not None and _near(o.attributes["centroid_base"], choice["at"])
               for o in scene.objects)


def update_choice(choice: dict[str, Any] | None, text: str, obj_id: int, scene: SceneGraph) -> dict[str, Any]:
    """The choice after `text` grounded object `obj_id` in `scene` (its place: its centroid).

    - first grounding, or the chosen object again (nearest its remembered place): it is the
      choice, with the places of the objects the words describe as well (`alike`) as now;
    - an object at the place of one of those when the choice was made: the words now fit one
      they did not choose, because the scene changed around them;
      the choice stays, marked `other` (the delivery check does not confirm it);
    - an object at a place nothing stood at then: when the chosen one still lies at its place,
      one seen only now (a cover taken away) fits better, and it becomes the choice; when the
      chosen one left its place, it is the chosen one moved (rolled, pushed): still the choice."""
    obj = scene.by_id(obj_id)
    if obj is None or obj.attributes.get("centroid_base") is None:
        return choice or {}
    at = [round(float(x), 4) for x in obj.attributes["centroid_base"][:3]]
    fresh = {"at": at, "colour": obj.attributes.get("colour"), "others": alike(text, scene, obj_id),
             "verdict": "chosen"}
    if not choice:
        return fresh
    where = nearest_place(at, choice["at"], choice["others"])
    if where == "other":
        return {**choice, "verdict": "other"}
    if where is None and not still_there(choice, scene, obj_id):
        return {**choice, "at": at, "verdict": "chosen"}
    return fresh


def names_place_or_rank(text: str, vocabulary: Any) -> bool:
    """Do the words choose by a place or a rank (a relation or a superlative), which a changed
    scene may answer otherwise?"""
    from bt_grasp.perception.query import parse

    q = parse(text, vocabulary) if text else None
    return q is not None and bool(q.superlative or q.relation)


def not_the_choice(text: str, vocabulary: Any, choice: dict[str, Any] | None) -> bool:
    """The words choose by place or rank, and the object located last is not the one they chose
    (update_choice marked it `other`). No choice remembered: nothing to say against it."""
    return choice is not None and choice.get("verdict") == "other" and names_place_or_rank(text, vocabulary)
