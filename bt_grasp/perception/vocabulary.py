"""Naming in the vocabulary's own words: measured shape -> (noun, size word) with scores.

Why a vocabulary: it is the robot's known objects (like a YCB list; lexicon.py, by default the
benchmark catalogue's), so a segment is named by the entry whose dimensions and shape it fits
best, in that entry's words ("ball", "puck", "jenga block") and with that category's own size
scale (a 5.6 cm ball is a "medium" ball; a can 5.6 cm across and 8 cm tall is a "medium" can).

Each (noun, size) entry gives the rest poses it can take on a table, seen from above:
(own height, long and short footprint side, footprint round?, top flat?). A segment is scored
against every pose: the own height must agree (it is not shortened by occlusion, but an object
lying on others has an uncertain support, hence an interval), the footprint may be smaller than
the pose's (occlusion) but hardly larger, and the round/flat cues must agree where the pose
predicts them. Scores are likelihood-like (1 = perfect fit); grounding compares them across
objects, so their absolute level matters less than their order.

Simplified: one view, visible points only; meshes are matched to their bounding boxes with
looser tolerances and without shape cues except where the mesh is clearly not flat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from itertools import permutations
from typing import Any

import numpy as np

from .calibration import value
from .lexicon import Category, Vocabulary, default_vocabulary

TILTED_WEIGHT = 0.8  # a leaning pose explains a segment a little less readily than a rest pose


@dataclass(frozen=True)
class Pose:
    """One rest pose seen from above: own height, footprint sides (long ≥ short) and cues."""

    height: float
    long: float
    short: float
    round_: bool | None  # footprint outline round (True), rectangular (False) or either (None)
    flat: bool | None  # top face flat (True), curved (False) or either (None)
    sphere: bool = False  # a ball: the visible surface is a sphere cap of diameter `height`
    planar: bool | None = None  # flat faces (blocks) or curved all over (balls, ducks, bears)
    lying_cylinder: bool = False  # curved across, straight along (a can or puck on its side)


def looks(noun: str, colour: str, vocab: Vocabulary | None = None) -> str:
    """The palette name the camera sees for the vocabulary's (noun, colour) (a texture may tint it)."""
    return (vocab or default_vocabulary()).looks(noun, colour)


@dataclass(frozen=True)
class Prototype:
    noun: str
    size: str
    poses: tuple[Pose, ...]
    loose: bool  # meshes: bounding box only, looser dimension tolerance
    colours: frozenset[str]  # colours the vocabulary holds this entry in
    seen_colours: frozenset[str]  # palette names it is seen in (its colours, through its texture)

    @property
    def dims(self) -> tuple[float, float, float]:
        """Extents sorted longest first (the same in every pose)."""
        p = self.poses[0]
        return tuple(sorted((p.height, p.long, p.short), reverse=True))  # type: ignore[return-value]


def _box_poses(x: float, y: float, z: float, round_: bool | None = False, flat: bool | None = True) -> list[Pose]:
    out = []
    for h, a, b in ((z, x, y), (y, x, z), (x, y, z)):
        out.append(Pose(h, max(a, b), min(a, b), round_, flat, planar=True))
    return out


def _poses(body: str, ext: tuple[float, float, float]) -> list[Pose]:
    """Rest poses of a body (lexicon.BODIES) of extents (x, y, z) as it stands."""
    if body == "box":
        return _box_poses(*ext)
    if body == "cylinder":
        d, h = ext[0], ext[2]
        return [Pose(h, d, d, True, True), Pose(d, max(h, d), min(h, d), False, None, lying_cylinder=True)]
    if body == "sphere":
        return [Pose(ext[0], ext[0], ext[0], True, False, sphere=True, planar=False)]
    # Meshes: any face down; box-like meshes keep the box cues, organic ones only "not flat".
    if body == "block-mesh":
        return _box_poses(*ext)
    if body == "studded-mesh":  # studs up: a bumpy top; on a side: flat
        poses = _box_poses(*ext)
        return [Pose(p.height, p.long, p.short, False, p.height != ext[2], planar=p.height != ext[2]) for p in poses]
    organic = body == "organic-mesh"  # curved all over; a mug is curved outside, hollow inside
    return [Pose(h, max(a, b), min(a, b), None, False if organic else None, planar=False)
            for h, a, b in {(p[2], p[0], p[1]) for p in permutations(ext)}]


def _prototype(c: Category, size: str, ext: tuple[float, float, float]) -> Prototype:
    return Prototype(c.name, size, tuple(_poses(c.body, ext)), c.body.endswith("mesh"), frozenset(c.colours),
                     frozenset(dict(c.looks).get(k, k) for k in c.colours))


@cache
def prototypes(vocab: Vocabulary | None = None) -> tuple[Prototype, ...]:
    """One prototype per vocabulary (noun, size), in the vocabulary's order."""
    v = vocab or default_vocabulary()
    return tuple(_prototype(c, size, ext) for c in v.categories for size, ext in c.sizes)


@cache
def sizes_of(noun: str, vocab: Vocabulary | None = None) -> tuple[str, ...]:
    """Size words the vocabulary uses for this noun (one entry: the noun needs no size word)."""
    v = vocab or default_vocabulary()
    return tuple(s for s in v.sizes if any(p.noun == noun and p.size == s for p in prototypes(v)))


def nouns(vocab: Vocabulary | None = None) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.noun for p in prototypes(vocab or default_vocabulary())))


def belief(x: float, centre: float, width: float) -> float:
    """Logistic belief (0..1) that a cue is past `centre`, rising over about `width` (a negative
    width for a belief that falls as the cue grows). Every soft cue here is one of these."""
    return float(1.0 / (1.0 + np.exp(-(x - centre) / width)))


def _log_penalty(measured: float, expected: float, sigma_over: float, sigma_under: float) -> float:
    """Gaussian in log ratio, with separate widths for too large and too small."""
    if expected <= 0 or measured <= 0:
        return 0.3
    r = math.log(measured / expected)
    s = sigma_over if r > 0 else sigma_under
    return math.exp(-0.5 * (r / s) ** 2)


def _height_fit(h: float, m: dict[str, Any], over: float) -> float:
    """Own height: 1 inside [firm, high]; mildly lower down to the weak bound; strongly outside."""
    lo, firm, hi = m["height_lo"], m["height_firm"], m["height_hi"]
    slack = 0.004
    if h > hi + slack:
        return _log_penalty(hi, h, over, over)
    if h >= firm - slack:
        return 1.0
    f = _log_penalty(h, firm, 1.0, 0.5)  # could rest on a hidden support: weak evidence
    if h < lo - slack:
        f *= _log_penalty(h, lo, 1.0, over)
    return f


AMODAL_UNDER = 2.0  # log-ratio width for a footprint smaller than a pose's, where the rest has room to hide


def _room_fit(side: float, room: float, over: float) -> float:
    """1 when a footprint side fits the room measured for it, falling as it overhangs."""
    return 1.0 if side <= room else _log_penalty(side, room, over, over)


def pose_score(pose: Pose, m: dict[str, Any], loose: bool) -> float:
    """How well one rest pose explains the measurements (0..1)."""
    over = 0.22 if loose else 0.13
    under = (0.8 if loose else 0.7) if m.get("occluded", 0.0) else (0.45 if loose else 0.3)
    p_sphere = m.get("p_sphere", 0.0)
    if pose.sphere and m.get("sphere_r", 0.0) > 0:
        under = 2.0  # the radius is measured directly: a cut outline is only occlusion
    f = _height_fit(pose.height, m, over)
    if m.get("room_long", 0.0) > 0:  # occluded, with the room it could take measured (amodal.py)
        under = AMODAL_UNDER
        f *= max(_room_fit(pose.long, m["room_long"], over) * _room_fit(pose.short, m["room_short"], over),
                 _room_fit(pose.long, m["room_short"], over) * _room_fit(pose.short, m["room_long"], over))
    f *= _log_penalty(m["long"], pose.long, over, under)
    f *= _log_penalty(m["short"], pose.short, over, under)
    if pose.sphere and m.get("sphere_r", 0.0) > 0:
        # A sphere fit sees the radius even when half the ball is hidden.
        f *= 0.3 + 0.7 * _log_penalty(2 * m["sphere_r"], pose.height, 0.12, 0.12)
    cue = 1.0
    if pose.round_ is not None:
        cue *= m["p_round"] if pose.round_ else 1.0 - m["p_round"]
    if pose.flat is not None:
        cue *= m["p_flat"] if pose.flat else 1.0 - m["p_flat"]
    if "p_sphere" in m:
        cue *= m["p_sphere"] if pose.sphere else 1.0 - 0.9 * m["p_sphere"]
    if pose.planar is not None and "p_planar" in m:
        # A small patch of a sphere lies within the plane tolerance: when the sphere fit holds,
        # planarity says nothing (a ball passes the sphere fit, other nouns hardly ever).
        pl = m["p_planar"] if pose.planar else 1.0 - m["p_planar"]
        cue *= p_sphere + (1.0 - p_sphere) * pl
    if "p_cyl" in m:
        if pose.lying_cylinder:
            cue *= 0.2 + 0.8 * m["p_cyl"]
        elif not pose.sphere:
            cue *= 1.0 - (0.8 if pose.planar else 0.6) * m["p_cyl"]
    return f * (0.25 + 0.75 * cue)


def tilted_score(proto: Prototype, m: dict[str, Any]) -> float:
    """An object leaning on others: its visible surface's extents against the sorted dimensions
    (the hidden third may be short, never much longer). Extents along the principal axes, or for
    a block showing a big rectangle along that face's sides and normal (features.planar_faces)."""
    obb = m.get("obb")
    if proto.poses[0].planar and m.get("face_frame") and rectangular_face(m) > 0.5:
        obb = m["face_frame"]  # a block's own axes: its rectangular face's sides and normal
    if not obb:
        return 0.0
    over = 0.22 if proto.loose else 0.15
    under = 0.8 if m.get("occluded", 0.0) else 0.4
    d = proto.dims
    f = _log_penalty(obb[0], d[0], over, under) * _log_penalty(obb[1], d[1], over, under)
    if obb[2] > d[0] * 1.15 + 0.005:
        f *= 0.2
    if "p_sphere" in m:
        f *= 0.3 + 0.7 * m["p_sphere"] if proto.poses[0].sphere else 1.0 - 0.9 * m["p_sphere"]
    if proto.poses[0].sphere and m.get("sphere_r", 0.0) > 0:
        # A cap's principal extents shrink with the visible share; its fitted radius does not.
        f *= 0.3 + 0.7 * _log_penalty(2 * m["sphere_r"], d[0], 0.12, 0.12)
    if any(pose.lying_cylinder for pose in proto.poses):
        f *= 1.0 - RECT_FACE_WEIGHT * rectangular_face(m)
        f *= 1.0 - NO_CYLINDER_WEIGHT * (1.0 - cylinder_evidence(m))
    planar = proto.poses[0].planar
    if planar is not None and "p_planar" in m:
        ps = m.get("p_sphere", 0.0)
        f *= 0.25 + 0.75 * (ps + (1.0 - ps) * (m["p_planar"] if planar else 1.0 - m["p_planar"]))
    return f


# A leaning cylinder (can, puck) shows a disc (fill ~pi/4) and a curved side cut into narrow
# strips at the plane tolerance, never one rectangle holding most of its points: that is a
# block's face. Without this, a leaning box fitted "can" as well as "box". See docs/perception.md.
RECT_FACE_SHARE = value("RECT_FACE_SHARE")  # the largest face holds at least this share of the points
RECT_FACE_FILL = value("RECT_FACE_FILL")  # ... and fills its bounding rectangle this well
RECT_FACE_WEIGHT = value("RECT_FACE_WEIGHT")  # how much such a face lowers a leaning cylinder's fit


def rectangular_face(m: dict[str, Any]) -> float:
    """Belief (0..1) that the segment's largest flat face is a rectangle holding most of its points."""
    faces = m.get("faces") or []
    if not faces or faces[0][0] < RECT_FACE_SHARE:
        return 0.0
    return belief(faces[0][3], RECT_FACE_FILL, 0.02)


# A leaning can or puck does show a cylinder: a flat end disc, as the largest face (a larger
# share than any near-flat patch of a leaning duck or mug) or as a square-bounded face of fair
# share, or a curved side (p_cyl). Without this a leaning duck fitted a standing puck or can on
# its extents alone, as well as a duck; few leaning cans and pucks lack all three.
END_FACE_SHARE = value("END_FACE_SHARE")
DISC_SHARE = value("DISC_SHARE")
DISC_ASPECT = value("DISC_ASPECT")  # short / long side of the face's bounding rectangle (a disc: 1)
NO_CYLINDER_WEIGHT = value("NO_CYLINDER_WEIGHT")
# A seen colour the entry never shows divides its fit by this: colour naming is mostly right,
# but not always.
UNSEEN_COLOUR_DIVISOR = value("UNSEEN_COLOUR_DIVISOR")


def cylinder_evidence(m: dict[str, Any]) -> float:
    """Belief (0..1) that a leaning segment shows a cylinder's flat end or its curved side."""
    faces = m.get("faces") or []
    end = belief(faces[0][0], END_FACE_SHARE, 0.02) if faces else 0.0
    disc = max((belief(share, DISC_SHARE, 0.02) * belief(short / max(long, 1e-6), DISC_ASPECT, 0.02)
                for share, long, short, _ in faces), default=0.0)
    return max(end, disc, float(m.get("p_cyl", 0.0)))


def face_score(proto: Prototype, m: dict[str, Any]) -> float:
    """A flat-faced object in any pose: each large visible face's rectangle against the pairs of
    the object's dimensions (a leaning box shows its faces, not its footprint)."""
    faces = [f for f in m.get("faces") or [] if f[0] >= 0.15]
    if not faces or proto.poses[0].planar is not True:
        return 0.0
    over = 0.15
    under = 0.7 if m.get("occluded", 0.0) else 0.35
    d = proto.dims
    pairs = ((d[0], d[1]), (d[0], d[2]), (d[1], d[2]))
    out = 1.0
    for k, (_, length, width, fill) in enumerate(faces[:2]):
        s = max(_log_penalty(length, a, over, under) * _log_penalty(max(width, 1e-4), b, over, under)
                for a, b in pairs)
        s *= belief(fill, 0.87, 0.02)  # a block's faces are rectangles, a can's top is not
        out *= s if k == 0 else 0.5 + 0.5 * s
    return out * m.get("p_planar", 1.0) * (1.0 - m.get("p_sphere", 0.0))


def name_scores(m: dict[str, Any], colour: str | None = None,
                vocab: Vocabulary | None = None) -> dict[str, dict[str, float]]:
    """{noun: {size: score}} for a segment's measurements.

    m: long, short (footprint sides), height_lo ≤ height_firm ≤ height_hi (own height: weak lower
    bound, likely lower bound, upper bound), p_round, p_flat, p_sphere (0..1 beliefs), sphere_r,
    occluded (1 when a nearer object borders it: the footprint may be cut); optionally room_long,
    room_short (the footprint an occluded segment could have with its rest hidden, amodal.py: a
    pose within it is hardly penalised for being larger than the part seen). A seen colour the
    entry never shows (see lexicon.Category.looks) divides its score by UNSEEN_COLOUR_DIVISOR.
    """
    out: dict[str, dict[str, float]] = {}
    for p in prototypes(vocab or default_vocabulary()):
        s = max(pose_score(pose, m, p.loose) for pose in p.poses)
        if m.get("tilted", 0.0):
            s = max(s, TILTED_WEIGHT * max(tilted_score(p, m), face_score(p, m)))
        if colour is not None and colour not in p.seen_colours:
            s /= UNSEEN_COLOUR_DIVISOR
        out.setdefault(p.noun, {})[p.size] = round(s, 4)
    return out


def best_name(scores: dict[str, dict[str, float]]) -> tuple[str, str, float]:
    """(noun, size, score) of the best-fitting catalogue entry."""
    noun, size, s = "", "medium", -1.0
    for n, by_size in scores.items():
        for z, v in by_size.items():
            if v > s:
                noun, size, s = n, z, v
    return noun, size, s


def catalogue_colour(noun: str, seen: str, vocab: Vocabulary | None = None) -> str:
    """The vocabulary's colour word for a `noun` seen as palette colour `seen`.

    The entry's own colour when it looks like itself; else the one colour the vocabulary holds
    the noun in that looks like `seen` (a brown-looking duck is the purple duck); else `seen`.
    """
    v = vocab or default_vocabulary()
    held = {c for p in prototypes(v) if p.noun == noun for c in p.colours}
    if seen in held and v.looks(noun, seen) == seen:
        return seen
    cands = sorted(c for c in held if v.looks(noun, c) == seen)
    return cands[0] if len(cands) == 1 else seen


def catalogue_name(colour: str, noun: str, size: str, vocab: Vocabulary | None = None) -> str:
    """The naming rule: a size word only when the noun comes in several sizes."""
    return f"{size} {colour} {noun}" if len(sizes_of(noun, vocab or default_vocabulary())) > 1 else f"{colour} {noun}"
