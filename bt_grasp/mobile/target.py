"""Choosing and verifying the target among the marked objects, from the request's qualifiers.

Why two steps: `select` grounds the whole request ("the small red box", "the can at the back")
through the perceiver's grounding and says when two candidates fit it equally well, so the tree
asks or stops ("ambiguous: A or B") instead of guessing; `check` is a strict, independent reading
of the chosen object against every qualifier the request names (colour, category, size, spatial
word, relation). Grounding scores are soft (a similar colour earns partial credit); the check is
not: each qualifier is ok, a mismatch, or unknown (not measured / not decidable), and unknown is
never ok. Both work on perceived attributes only (whatever the backend), never on simulator truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bt_grasp.perception.grounding import ground_all, score_objects, shape_classes
from bt_grasp.perception.query import Query, parse
from bt_grasp.perception.types import SceneGraph, SceneObject

TIE_MARGIN = 0.1  # candidates whose grounding score is within this of the best are equally good
SPATIAL_AXIS = {"left": (0, True), "right": (0, False), "front": (1, False), "back": (1, True)}


@dataclass
class Selection:
    """The chosen scene object (or None), the equally good others, and why."""

    best: SceneObject | None
    alternatives: list[SceneObject]
    reason: str


def select(text: str, scene: SceneGraph, candidates: list[SceneObject], located: Any = None) -> Selection:
    """The candidate the request picks out. `located` is the perceiver's own answer, when it gave
    one; its `alternatives` (names, side-qualified when shared) are honoured when it reports them."""
    ids = {o.id for o in candidates}
    scores = {i: s for i, s in score_objects(parse(text, scene.vocabulary), scene).items() if i in ids}
    if located is not None and located.object_id in ids:
        best_id = located.object_id
    elif scores:
        best_id = max(scores, key=lambda i: (scores[i], _pixels(scene.by_id(i))))
    else:
        return Selection(None, [], f"no object matches {text!r}")
    best = scene.by_id(best_id)
    assert best is not None
    top = scores.get(best_id, 0.0)
    if top < 0.45 and located is None:
        return Selection(None, [], f"no object matches {text!r} well enough")
    ties = [o for o in candidates if o.id != best_id and scores.get(o.id, 0.0) >= top - TIE_MARGIN]
    named = set(getattr(located, "alternatives", None) or [])
    ties += [o for o in candidates if o.id != best_id and _labels(o, best) & named and o not in ties]
    if ties:
        group = [best, *ties]
        names = [o.name if sum(p.name == o.name for p in group) == 1 else f"{o.name} {_where(o, group)}"
                 for o in group]
        return Selection(best, ties, "ambiguous: " + " or ".join(names))
    return Selection(best, [], f"{best.name} fits {text!r} best")


def _labels(o: SceneObject, chosen: SceneObject) -> set[str]:
    """How the perceiver may name `o` among its alternatives to `chosen`: by name, or, when the
    name is shared, with its image side (bt_grasp.perception.assemble.alternative_names)."""
    side = "left" if o.point2d[0] < chosen.point2d[0] else "right"
    return {o.name, f"the {o.name} on the {side}"}


def _where(o: SceneObject, group: list[SceneObject]) -> str:
    """Where `o` is in the overlay relative to the others of its group (to tell identical names apart)."""
    du = sum(p.point2d[0] - o.point2d[0] for p in group if p is not o)
    dv = sum(p.point2d[1] - o.point2d[1] for p in group if p is not o)
    if abs(dv) >= abs(du):
        return "at the back" if dv > 0 else "in front"
    return "on the left" if du > 0 else "on the right"


def _pixels(o: SceneObject | None) -> float:
    return float(o.attributes.get("pixels", 0)) if o is not None else 0.0


def _colour(q: Query, o: SceneObject) -> str:
    c = o.attributes.get("colour")
    return "unknown" if c is None else ("ok" if c == q.colour else "mismatch")


def _category(q: Query, o: SceneObject) -> str:
    if q.unknown_noun is not None:
        return "ok" if q.unknown_noun in o.name.split() else "unknown"
    c = o.attributes.get("category")
    if c is None or c == "irregular":
        return "unknown"
    if c == q.category or (q.category == "box" and c == "cube") or (q.category == "block" and c in ("box", "cube")):
        return "ok"
    typical, other = shape_classes(str(q.category))
    if c in typical:  # a perceived shape class (geometric backend) that the word normally has
        return "ok"
    return "unknown" if c in other else "mismatch"


def _peers(q: Query, target: SceneObject, scene: SceneGraph) -> list[SceneObject]:
    """Objects that fit the colour and category words as well as the target does (itself included)."""
    out = []
    for o in scene.objects:
        if q.colour is not None and _colour(q, o) != "ok":
            continue
        if (q.category is not None or q.unknown_noun is not None) and _category(q, o) != "ok":
            continue
        out.append(o)
    return out if target in out else [*out, target]


def _volume(o: SceneObject) -> float:
    e = o.attributes.get("extent") or [0.0, 0.0, 0.0]
    return float(e[0] * e[1] * e[2])


def check(text: str, target: SceneObject, scene: SceneGraph) -> tuple[str, str]:
    """(verdict, reason): verdict is ok, mismatch or unknown; unknown is never ok."""
    q = parse(text)
    verdicts: dict[str, str] = {}
    if q.colour is not None:
        verdicts["colour"] = _colour(q, target)
    if q.category is not None or q.unknown_noun is not None:
        verdicts["category"] = _category(q, target)
    peers = _peers(q, target, scene) if verdicts and all(v == "ok" for v in verdicts.values()) else [target]
    if q.size in ("small", "large"):
        if len(peers) > 1:
            vols = [_volume(o) for o in peers]
            extreme = min(vols) if q.size == "small" else max(vols)
            verdicts["size"] = "ok" if _volume(target) == extreme else "mismatch"
        else:
            verdicts["size"] = "ok" if target.attributes.get("size") == q.size else "unknown"
    elif q.size is not None:
        verdicts["size"] = "ok" if target.attributes.get("size") == q.size else "unknown"
    if q.superlative is not None:
        axis, low = SPATIAL_AXIS[q.superlative]
        vals = [o.point2d[axis] for o in peers]
        extreme = min(vals) if low else max(vals)
        verdicts["spatial"] = "ok" if target.point2d[axis] == extreme else "mismatch"
    if q.relation is not None and q.anchor is not None:
        anchors = ground_all(q.anchor, scene)
        holds = any((target.id, q.relation, a) in scene.relations for a in anchors if a != target.id)
        verdicts["relation"] = "ok" if holds else "unknown"
    if not verdicts:
        return "unknown", f"{text!r} names nothing that can be checked"
    bad = {k: v for k, v in verdicts.items() if v != "ok"}
    if not bad:
        return "ok", f"{target.name}: " + ", ".join(f"{k} ok" for k in verdicts)
    verdict = "mismatch" if "mismatch" in bad.values() else "unknown"
    detail = ", ".join(f"{k} {v}" for k, v in bad.items())
    return verdict, f"{verdict}: {target.name} for {text!r} ({detail})"
