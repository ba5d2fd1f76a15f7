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


def _xy(p: Any) -> np.ndarray:
    return np.asarray(p, dtype=float)[:2]


def places(scene: SceneGraph, but: int | None = None) -> list[list[float]]:
    """Base-frame centroids of the scene's objects (no fixtures), all but object `but`."""
    return [[round(float(x), 4) for x in o.attributes["centroid_base"][:3]] for o in scene.objects
            if o.id != but and not o.attributes.get("fixture") and o.attributes.get("centroid_base") is not None]


def nearest_place(at: Any, chosen: Any, others: list[Any]) -> str | None:
    """"chosen" or "other": which remembered place `at` lies nearest (within PLACE_RADIUS_M); None
    when none is that near (an object that moved since, or one not seen then)."""
    best: tuple[float, str] | None = None
    for p, kind in [(chosen, "chosen"), *((o, "other") for o in others)]:
        d = float(np.linalg.norm(_xy(at) - _xy(p)))
        if d <= PLACE_RADIUS_M and (best is None or d < best[0]):
            best = (d, kind)
    return None if best is None else best[1]


def still_there(choice: dict[str, Any], scene: SceneGraph, but: int | None) -> bool:
    """Does an object of the chosen one's colour (other than `but`) still lie at its place?"""
    return any(o.id != but and not o.attributes.get("fixture") and o.attributes.get("colour") == choice["colour"]
               and o.attributes.get("centroid_base") is not None
               and float(np.linalg.norm(_xy(o.attributes["centroid_base"]) - _xy(choice["at"]))) <= PLACE_RADIUS_M
               for o in scene.objects)


def update_choice(choice: dict[str, Any] | None, at: list[float], colour: Any, obj_id: int,
                  scene: SceneGraph) -> dict[str, Any]:
    """The choice after the words grounded object `obj_id` (at `at`, of `colour`) in `scene`.

    - first grounding, or the chosen object again (nearest its remembered place): it is the
      choice, with its neighbours' places as now;
    - an object that stood elsewhere when the choice was made (nearest another remembered
      place): the words now fit one they did not choose, because the scene changed around them;
      the choice stays, marked `other` (the delivery check does not confirm it);
    - an object at a place nothing stood at then: when the chosen one still lies at its place,
      one seen only now (a cover taken away) fits better, and it becomes the choice; when the
      chosen one left its place, it is the chosen one moved (rolled, pushed): still the choice."""
    fresh = {"at": at, "colour": colour, "others": places(scene, obj_id), "verdict": "chosen"}
    if choice is None:
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
