"""Evidence leaves: a FINALIZE rests on what the robot itself sees.

`check_held` re-asks the semantic question (is the held object the target?) on a fresh frame,
typically after the lift, when a held target is far above the table. `verify_delivery` confirms a
place by observation, comparing a fresh RGB-D frame with the frame the target was located in:
the target's place has emptied, and inside the receptacle's region (robot knowledge:
`driver.place_region`, a calibrated fixture, never the simulator's ground truth) new matter of
the target's size and colour has appeared, and the goal itself is accounted for: it was grounded
confidently, and nothing left on the table fits it about as well (a delivered look-alike of a
goal still on the table is not the goal delivered). Both answer with three outcomes; "unknown" (no
evidence) never counts as success. Simplified: one fixed camera (both frames from the same
viewpoint); a robot whose camera moves between pick and place would re-register the frames.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.aim_memory import note_wrong_hold
from bt_grasp.drivers.capabilities import Receptacles
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.declare import DELIVERY_OUT, HELD_OUT, REASON, before_entries, key_port, leaf_type
from bt_grasp.nodes.perception import PERCEPTION_SECONDS, in_region, observe_and_survey
from bt_grasp.nodes.referent import not_the_choice
from bt_grasp.perception.calibration import value
from bt_grasp.registry import Port


class CheckHeld(Leaf):
    """ok: the held object is the target (it left its place); mismatch: the target still lies
    where it was located; unknown: no evidence either way."""

    NODE_TYPE = leaf_type("check_held", "perception", {
        "before": Port("before", "str", default="target", doc="blackboard key of the target located before the grasp"),
        "outcome": key_port("outcome", "held.outcome", "ok | mismatch | unknown"),
    }, outcomes=HELD_OUT, perception=True, outcome_port="outcome",
        doc="Re-observe: ok when the located target left its place (it is held), mismatch when it is still there.",
        keys=(*before_entries("query", "frame"), REASON))
    SUCCESS_OUTCOMES = frozenset({"ok"})

    def execute(self) -> LeafResult:
        from bt_grasp.watchdog.semantic import TargetStillThere

        before = self.out_key("before")
        verdict, reason = TargetStillThere(before, f"{before}.query", f"{before}.frame").check(self.ctx)
        if verdict == "mismatch":  # seen, not told: the target still lies there
            note_wrong_hold(self.ctx.memory)
        return self.result(verdict, {f"{self.node_id}.reason": reason}, PERCEPTION_SECONDS)


class VerifyDelivery(Leaf):
    """delivered: the place where the target was located has emptied, inside the place region
    new matter of at least ARRIVED_SHARE of the target's area and of its colour has appeared
    (with at most RIM_SHARE as much of its colour within RIM_BAND_M outside: else it lies across the rim),
    the target was grounded confidently (score >= CONFIDENT_SCORE) and nothing left on the table
    fits the goal about as well (table_rivals), a target located only as what it could be with
    its rest hidden looks like the goal in the receptacle (goal_seen_in), and one perceived as
    another kind or size than the goal names shows the goal's there (seen_as_goal_in), and the
    object delivered, when not seen in the goal's colour (read from its kind), fits no other kind
    built alike that looks like what was seen about as well, one that also explained it where it
    was located (kind_in_doubt, explains), and, for words that name a place or a rank, the object
    delivered is the one they chose when first grounded (nodes/referent.py); not_delivered: the
    target's surface has not moved (it still lies where it was), the goal still grounds to an
    object on the table, the object delivered fitted the goal only weakly (a look-alike of a goal
    perhaps still hidden: look on), or, delivered in full view, does not look like the goal or
    its kind or size, or is as likely another kind in the colour seen;
    unknown: anything else (no region, no earlier frame, nothing new seen in the receptacle, an
    object delivered for place or rank words that is not the one they chose)."""

    NODE_TYPE = leaf_type("verify_delivery", "perception", {
        "before": Port("before", "str", default="target",
                       doc="blackboard key of the target located before the pick (its mask and frame)"),
        "place": Port("place", "str", default="basket", doc="receptacle (its region comes from driver.place_region)"),
        "outcome": key_port("outcome", "delivery.outcome", "delivered | not_delivered | unknown"),
    }, outcomes=DELIVERY_OUT, perception=True, outcome_port="outcome",
        doc="Confirm a place by observation: the target's place emptied and matter of its size and colour arrived in the receptacle.",
        keys=(*before_entries("frame"), REASON))
    SUCCESS_OUTCOMES = frozenset({"delivered"})

    def execute(self) -> LeafResult:
        from bt_grasp.watchdog.semantic import STILL_M, surface_change

        ctx = self.ctx
        place = str(self.port("place"))
        before_key = self.out_key("before")
        before = ctx.blackboard.get(before_key)
        frame = ctx.blackboard.get(f"{before_key}.frame")
        region = ctx.driver.place_region(place) if isinstance(ctx.driver, Receptacles) else None
        if region is None:
            return self._answer("unknown", f"the driver knows no region for {place!r}")
        if before is None or frame is None or getattr(before, "mask", None) is None:
            return self._answer("unknown", "no earlier frame of the target to compare with")
        obs, scene = observe_and_survey(self)
        dz = surface_change(frame, obs, before.mask)
        if dz is not None and abs(dz) < STILL_M:
            return self._answer("not_delivered", "the target's surface has not moved: it still lies where it was")
        if dz is None or dz > -STILL_M:
            return self._answer("unknown", "cannot see the target's place empty")
        box = (np.asarray(region[0], float), np.asarray(region[1], float))
        P1, new_px, match_px = arrived_pixels(frame, obs, before.mask, widened(box, RIM_BAND_M))
        inside = in_box(P1, box)
        arrived, matching = metric_area(obs, new_px & inside), metric_area(obs, match_px & inside)
        need = ARRIVED_SHARE * metric_area(frame, before.mask)
        if arrived < need:
            return self._answer("unknown", f"only {arrived * 1e4:.1f} cm² new in the {place} "
                                           f"(need {need * 1e4:.1f} cm²)")
        if matching < need:
            return self._answer("unknown", f"{arrived * 1e4:.1f} cm² arrived in the {place}, but only "
                                           f"{matching * 1e4:.1f} cm² of it has the target's colour "
                                           f"(need {need * 1e4:.1f} cm²)")
        rim = metric_area(obs, match_px & ~inside)
        if rim > RIM_SHARE * matching:
            return self._answer("unknown", f"{matching * 1e4:.1f} cm² of its colour arrived in the {place} "
                                           f"and {rim * 1e4:.1f} cm² just outside it: it may lie on the rim")
        score = float(getattr(before, "score", 1.0))
        if score < CONFIDENT_SCORE:
            return self._answer("not_delivered", f"the {before.name} was delivered, but it fits the goal only "
                                                 f"weakly (grounding score {score:.2f} < {CONFIDENT_SCORE}): "
                                                 "the goal may still be hidden")
        query = str(ctx.blackboard.get(f"{before_key}.query") or "")
        choice = ctx.blackboard.get(f"{before_key}.choice")
        rivals = table_rivals(query, scene, region, score)
        if rivals:
            return self._answer("not_delivered", f"the goal still grounds to the {rivals[0][0]} on the table "
                                                 f"(score {rivals[0][1]:.2f} vs {score:.2f} "
                                                 "for the object delivered)")
        if getattr(before, "hidden_reading", False) and not goal_seen_in(query, scene, region):
            return self._answer("not_delivered", f"the {before.name} was taken for the goal as what it could be "
                                                 f"with its rest hidden, and in the {place}, in full view, "
                                                 "nothing fits the goal")
        other = taken_as_other(query, str(before.name), scene.vocabulary)
        if other and not seen_as_goal_in(query, scene, region, other):
            what = " and ".join("kind" if a == "category" else a for a in other)
            return self._answer("not_delivered", f"the {before.name} was taken for the goal though it looked like "
                                                 f"another {what}, and in the {place} nothing looks like the goal's "
                                                 f"{what}: the goal may still be hidden")
        if not_the_choice(query, scene.vocabulary, choice):
            return self._answer("unknown", f"the words name a place or a rank, and the {before.name} delivered "
                                           "stood elsewhere when they were first grounded: the scene has "
                                           "changed since, so it may not be the object they meant")
        doubt = kind_in_doubt(query, covering(scene, new_px & inside), scene.vocabulary)
        if doubt and explains(doubt, covering(ctx.survey(frame), np.asarray(before.mask, bool))):
            return self._answer("not_delivered", f"the {before.name} was not seen in the goal's colour (that "
                                                 f"was read from its kind) and is shaped about as much like a "
                                                 f"{doubt}: the goal may still be elsewhere")
        return self._answer("delivered", f"its place is empty and {matching * 1e4:.1f} cm² of its colour "
                                         f"arrived in the {place}")

    def _answer(self, outcome: str, reason: str) -> LeafResult:
        writes: dict[str, Any] = {f"{self.node_id}.reason": reason}
        key = f"{self.out_key('before')}.choice"
        choice = self.ctx.blackboard.get(key)
        if outcome == "not_delivered" and choice and choice.get("verdict") == "chosen":
            writes[key] = None  # the object the words chose was not the goal: the next look chooses anew
        return self.result(outcome, writes, PERCEPTION_SECONDS)


# Below this grounding score (at the pick) the delivered object was only the least bad fit for
# the goal, too often a same-coloured neighbour taken for a hidden goal.
CONFIDENT_SCORE = value("CONFIDENT_SCORE")
# Another kind whose fit reaches this share of the goal kind's explains the object as well:
# the grounding margin (AMBIGUOUS), applied to the delivered object's kind.
KIND_SHARE = value("AMBIGUOUS")
RIVAL_SHARE = value("RIVAL_SHARE")  # a table object grounding this close to the delivered one's is as likely the goal


def table_rivals(text: str, scene: Any, region: tuple[np.ndarray, np.ndarray] | None,
                 delivered_score: float) -> list[tuple[str, float]]:
    """Objects left on the table (outside the receptacle's region, no fixtures) that the goal
    text grounds to at least RIVAL_SHARE of the delivered object's grounding score, best first.

    Why: the place and arrival checks confirm that the *located* object was delivered, not that
    it was the goal; when the goal was hidden and a same-coloured neighbour was taken for it,
    the goal often shows once that neighbour is gone."""
    from bt_grasp.perception.grounding import ACCEPT, score_objects
    from bt_grasp.perception.query import parse

    if not text:
        return []
    scores = score_objects(parse(text, scene.vocabulary), scene)
    floor = max(ACCEPT, RIVAL_SHARE * delivered_score)
    out = [(o.name, scores[o.id]) for o in scene.objects
           if scores.get(o.id, 0.0) >= floor and not o.attributes.get("fixture")
           and not in_region(o.attributes.get("centroid_base"), region)]
    return sorted(out, key=lambda t: -t[1])


def goal_seen_in(text: str, scene: Any, region: tuple[np.ndarray, np.ndarray] | None) -> bool:
    """Does an object inside the region fit the goal text as seen (no hidden part assumed)?

    Why: a target located only as what a partly hidden segment could be (Located.hidden_reading)
    is a hypothesis; once delivered it lies in full view, and then it must look like the goal."""
    from bt_grasp.perception.grounding import ACCEPT, seen_scores
    from bt_grasp.perception.query import parse

    if not text:
        return False
    scores = seen_scores(parse(text, scene.vocabulary), scene)
    return any(scores.get(o.id, 0.0) >= ACCEPT and not o.attributes.get("fixture")
               and in_region(o.attributes.get("centroid_base"), region) for o in scene.objects)


def covering(scene: Any, pixels: np.ndarray) -> Any:
    """The object of `scene` (no fixtures) whose mask covers most of `pixels`, or None: in the
    basket view, the object just delivered (where new matter arrived), told apart from earlier
    drops; in the pick frame, the object located."""
    best, most = None, 0
    for o in scene.objects:
        if o.mask is None or o.attributes.get("fixture") or np.shape(o.mask) != np.shape(pixels):
            continue
        n = int((np.asarray(o.mask, bool) & pixels).sum())
        if n > most:
            best, most = o, n
    return best


def kind_in_doubt(text: str, delivered: Any, vocabulary: Any) -> str | None:
    """When the object delivered was not seen in the goal's colour (its colour word was read from
    its kind: a brown-looking duck is the purple duck), another kind built alike (the same
    body) that explains its shape about as well (catalogue fit at least KIND_SHARE of the goal
    kind's, and enough to explain it at all: grounding's NOUN_FLOOR) and comes in a colour that
    looks like the one seen; else None.

    Why: kinds built alike (a duck and a teddy bear are both organic meshes) fit one segment
    almost equally. Seen in the goal's colour, the colour is evidence of its own; read from the
    kind, the goal's colour rests on the same near tie, and the object is as likely the other
    kind in the colour seen (a brown teddy bear) while the goal is still elsewhere."""
    from bt_grasp.perception.fits import NOUN_FLOOR
    from bt_grasp.perception.lexicon import default_vocabulary
    from bt_grasp.perception.query import parse

    fits = delivered.attributes.get("name_scores") if delivered is not None else None
    seen = delivered.attributes.get("seen_colour") if delivered is not None else None
    v = vocabulary or default_vocabulary()
    q = parse(text, v) if text else None
    if not fits or seen is None or q is None or q.category is None or q.colour in (None, seen):
        return None
    # The kinds the goal's noun may be ("block": any block-like or cuboid one, as grounding reads it).
    goal_kinds = {c.name for c in v.categories if c.block or c.cuboid} if q.category == "block" else {q.category}
    bodies = {v.by_name[k].body for k in goal_kinds if k in v.by_name}
    goal_fit = max((max(fits[n].values()) for n in goal_kinds if fits.get(n)), default=0.0)
    others = sorted(((max(by.values()), n) for n, by in fits.items()
                     if n not in goal_kinds and by and n in v.by_name and v.by_name[n].body in bodies
                     and any(v.looks(n, c) == seen for c in v.by_name[n].colours)), reverse=True)
    if others and others[0][0] >= max(KIND_SHARE * goal_fit, NOUN_FLOOR):
        return others[0][1]
    return None


def explains(kind: str, located: Any) -> bool:
    """Does `kind` explain the object as seen where it was located at all (a catalogue fit of at
    least grounding's NOUN_FLOOR)? True without that view's fits (no evidence against it).

    Why: a dropped object lands in any pose, and one pose can mimic a smaller kind built alike
    (a jenga block on its side, a domino); a kind that fitted nothing in the object's rest pose
    at the pick is no rival."""
    from bt_grasp.perception.fits import NOUN_FLOOR

    fits = located.attributes.get("name_scores") if located is not None else None
    return not fits or max((fits.get(kind) or {0: 0.0}).values()) >= NOUN_FLOOR


def taken_as_other(text: str, name: str, vocabulary: Any) -> tuple[str, ...]:
    """Which of the goal's kind ("category") and size the object located for `text` was perceived
    otherwise (its name's noun or size word is not the goal's). Grounding may accept a kind an
    object only resembles, or a size it could be with its rest hidden, and then it is as likely a
    look-alike of a goal still hidden as the goal misnamed."""
    from bt_grasp.perception.query import parse

    goal, seen = parse(text, vocabulary), parse(name, vocabulary)
    return tuple(a for a in ("category", "size")
                 if getattr(goal, a) and getattr(seen, a) and getattr(goal, a) != getattr(seen, a))


def seen_as_goal_in(text: str, scene: Any, region: tuple[np.ndarray, np.ndarray] | None,
                    attributes: tuple[str, ...]) -> bool:
    """Does an object inside the region look like the goal in its colour and in `attributes`
    (the goal's kind, size), and, asked about its kind, is that kind clear for it (its catalogue
    fits, when measured, name no other kind about as well: ties.clearly_named, or only its cover
    or pose holds it back: ties.seen_otherwise)?

    Why: delivered, an object lies in another pose and in full view; a misnamed goal then often
    shows what it is, a look-alike does not. A look-alike's best fit may still be the goal's
    kind by a hair (a small box lying so that it also fits "can"): that shows nothing."""
    from bt_grasp.perception.lexicon import default_vocabulary
    from bt_grasp.perception.query import parse
    from bt_grasp.perception.ties import clearly_named, seen_otherwise

    v = scene.vocabulary or default_vocabulary()
    q = parse(text, v)

    def kind_clear(o: Any) -> bool:
        return ("category" not in attributes or not o.attributes.get("name_scores")
                or clearly_named(q, o, v) or seen_otherwise(q, o, v))

    return any(all(o.attributes.get(a) == getattr(q, a) for a in attributes) and kind_clear(o)
               and q.colour in (None, o.attributes.get("colour"))
               and not o.attributes.get("fixture") and in_region(o.attributes.get("centroid_base"), region)
               for o in scene.objects)


# An object that landed across the receptacle's rim shows part of itself inside the region and
# part just outside it: it is not in the receptacle. Matter of the target's colour arriving next to
# the receptacle has no other cause than the target itself (or a neighbour of its colour knocked
# there, equally no delivery).
RIM_BAND_M = 0.05  # about half a catalogue object: how far past the rim a straddling object shows
RIM_SHARE = 0.5  # outside over inside: over a third of the object's visible top past the rim
ARRIVED_SHARE = 0.3  # new area in the receptacle, as a share of the target's area seen at the pick
ARRIVED_RISE_M = 0.008  # a pixel whose surface rose this much holds something new
COLOUR_GAP = 0.15  # L1 chromaticity distance from the target's colour of a pixel that counts as it
# Chromaticity cannot tell black from grey or white: all three are neutral. A target whose colour
# lies this close to neutral is told by brightness as well, or a black one that missed the basket
# is confirmed by the grey floor, or by a white object its fall knocked aside in there.
ACHROMATIC_GAP = 0.06  # L1 chromaticity distance from neutral grey
BRIGHTNESS_RATIO = 2.5  # such a target's pixel is at most this much brighter or darker than at the pick


def metric_area(obs: Any, mask: np.ndarray) -> float:
    """Area facing the camera covered by the mask's pixels (each (z/f)² m²)."""
    d = np.asarray(obs.depth, float)[np.asarray(mask, bool)]
    d = d[np.isfinite(d) & (d > 0)]
    return float(((d / float(obs.K[0, 0])) ** 2).sum())


def _chroma(rgb: np.ndarray) -> np.ndarray:
    """Per-pixel chromaticity (Nx3): colour with brightness divided out, so shading matters less."""
    x = np.asarray(rgb, float).reshape(-1, 3)
    return x / (x.sum(1, keepdims=True) + 1.0)


def widened(box: tuple[np.ndarray, np.ndarray], margin_m: float) -> tuple[np.ndarray, np.ndarray]:
    """The box grown by margin_m on each horizontal side (not in height)."""
    grow = np.array([margin_m, margin_m, 0.0])
    return box[0] - grow, box[1] + grow


def in_box(P: np.ndarray, box: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """HxW bool: pointmap pixels inside the (lower, upper) box."""
    return np.all((P >= box[0]) & (P <= box[1]), axis=-1)


def arrived_pixels(before_obs: Any, after_obs: Any, target_mask: np.ndarray,
                   box: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the after frame's pointmap, HxW new matter inside the box, HxW the part of it that has the
    target's colour at the pick).

    A pixel has the target's colour when its chromaticity is near the target's, and, for a black,
    grey or white target (ACHROMATIC_GAP), its brightness too (BRIGHTNESS_RATIO).

    New matter: a surface that rose by ARRIVED_RISE_M or more, or one whose height changed by
    that much and that took the target's colour where another colour was. The second kind is a
    target that landed where a taller object stood in the receptacle (an earlier drop, knocked
    aside by this one): its surface is lower than before, so a rise alone misses it. Judged
    pixel by pixel, not as one mean colour: objects dropped earlier that shift, or a shadow,
    must not hide the target's own pixels among what arrived."""
    from bt_grasp.perception.geometry import frame_pointmap

    P0, P1 = frame_pointmap(before_obs), frame_pointmap(after_obs)
    dz = P1[..., 2] - P0[..., 2]
    changed = in_box(P1, box) & np.isfinite(P0[..., 2]) & (np.abs(dz) >= ARRIVED_RISE_M)
    arrived, matching = np.zeros_like(changed), np.zeros_like(changed)
    if not changed.any():
        return P1, arrived, matching
    seen = before_obs.rgb[np.asarray(target_mask, bool)]
    target = _chroma(seen).mean(0)
    achromatic = float(np.abs(target - 1.0 / 3.0).sum()) <= ACHROMATIC_GAP
    value = float(np.median(seen.max(1))) + 1.0  # the target's brightness at the pick (+1: never 0)

    def of_target_colour(rgb: np.ndarray) -> np.ndarray:
        px = rgb[changed]
        near = np.abs(_chroma(px) - target).sum(1) <= COLOUR_GAP
        if achromatic:
            ratio = (px.max(1).astype(float) + 1.0) / value
            near &= (ratio <= BRIGHTNESS_RATIO) & (ratio >= 1.0 / BRIGHTNESS_RATIO)
        return near

    now, was = of_target_colour(after_obs.rgb), of_target_colour(before_obs.rgb)
    rose = dz[changed] >= ARRIVED_RISE_M
    new = rose | (now & ~was)
    arrived[changed] = new
    matching[changed] = new & now
    return P1, arrived, matching

