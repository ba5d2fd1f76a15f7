"""Referring-expression grounding: "the small red box left of the mug" -> one SceneObject or None.

Why rules, not a model: the vocabulary is small (the scene's, SceneGraph.vocabulary, lexicon.py:
colours, sizes, ~15 categories), the scenes are small, and the result must be explainable and deterministic. Scoring multiplies
attribute agreements (colour, category, size) and a spatial term; an object is accepted only if
its score reaches ACCEPT, so "the green duck" in a scene without one returns None rather than a
yellow duck. With the geometric backend the category and size terms are the segment's fit to
the catalogue entry named (vocabulary.py), not its label; comparatives ("the larger red can")
rank the same-colour, same-noun candidates by measured volume. Candidates within AMBIGUOUS of
the best are returned as alternatives, so the caller can ask instead of guessing (ties.py: when
a fit settles a tie, when the words leave it open). The text is parsed by query.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .calibration import value
from .colour import SIMILAR
from .fits import FIT_REF, catalogue_nouns, fit_levels, name_fit
from .lexicon import Vocabulary, default_vocabulary
from .query import Query, parse
from .split_merge import joined, same_object
from .ties import AMBIGUOUS, decisive, words_leave_open
from .types import SceneGraph, SceneObject

ACCEPT = value("ACCEPT")  # a weaker lone candidate is more often a hidden target's look-alike
# A partly hidden segment may be the named entry with the rest out of sight, where nearer objects
# leave room for it (features.measure's amodal_scores). Asked only when nothing fits as seen
# (score_objects), that fit counts beside the visible part's own fits (which stay the reference)
# up to this noun score: enough to accept a lone candidate, never a perfect match.
AMODAL_CAP = 0.75
# A superlative's runner-up this far behind the leader (image units, some 3-4 cm of the table
# in the overhead view, near the benchmark's superlative margin) scores its lowest share (_lead_scores).
SUPERLATIVE_GAP = 0.06

# The generic word "block" (no category of its own, see fits.catalogue_nouns): its shape classes.
GENERIC_SHAPES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {"block": (("box", "bar"), ())}


def shape_classes(category: str | None, vocab: Vocabulary | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(typical, other-pose) perceived shape classes of a category word; ((), ()) when unknown."""
    cat = (vocab or default_vocabulary()).by_name.get(category or "")
    return (cat.shapes, cat.other_shapes) if cat else GENERIC_SHAPES.get(category or "", ((), ()))


def vocabulary_of(scene: SceneGraph) -> Vocabulary:
    """The words the scene's objects are named in (the shipped default when it does not say)."""
    return scene.vocabulary or default_vocabulary()


def _colour_score(q: Query, o: SceneObject, v: Vocabulary) -> float:
    """Agreement of the seen colour with how the named entry looks (textures tint meshes)."""
    if q.colour is None:
        return 1.0
    c = o.attributes.get("seen_colour", o.attributes.get("colour"))
    if c is None:
        return 0.5
    want = v.looks(q.category or str(o.attributes.get("category", "")), q.colour)
    if c == want or o.attributes.get("colour") == q.colour:
        return 1.0
    return 0.5 if frozenset((c, want)) in SIMILAR else 0.05


def _with_hidden(o: SceneObject, ns: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The segment's fits, each raised to its fit with the rest hidden where nearer objects leave
    room for it (only partly hidden segments have those)."""
    hidden = o.attributes.get("amodal_scores")
    if not hidden:
        return ns
    return {n: {z: max(v, hidden.get(n, {}).get(z, 0.0)) for z, v in by.items()} for n, by in ns.items()}


def _noun_score(q: Query, ns: dict[str, dict[str, float]], v: Vocabulary, ref: float = FIT_REF,
                seen: dict[str, dict[str, float]] | None = None) -> float:
    """How well the catalogue noun fits, relative to the object's best-fitting noun.

    Relative, because occlusion lowers every fit alike, but never relative to less than `ref`
    (FIT_REF, or FIT_REF_OCCLUDED for an occluded segment, whose weak fits are expected): a
    fragment that fits nothing well must not look like a perfect match (segments no entry
    explains at all are not scored this way, see fits.name_fit). `seen`: the visible part's own fits,
    the reference when `ns` also holds fits with a hidden rest (_with_hidden).
    """
    best = max((max(v.values()) for v in (seen or ns).values()), default=0.0)
    s = max((max(ns[n].values()) for n in catalogue_nouns(q, v) if n in ns), default=-1.0)
    if s < 0:
        return -1.0
    return min(1.0, s / max(best, ref))


def _is_block(category: str, v: Vocabulary) -> bool:
    c = v.by_name.get(category)
    return c is not None and c.block


def _category_score(q: Query, o: SceneObject, v: Vocabulary, hidden: bool = False) -> float:
    if q.unknown_noun is not None:
        return 1.0 if q.unknown_noun in o.name.split() else 0.02
    if q.category is None:
        return 1.0
    ns = name_fit(o)
    if ns is not None:
        ref = fit_levels(o)[1]
        s = _noun_score(q, ns, v, ref)
        if hidden and o.attributes.get("amodal_scores"):
            s = max(s, min(AMODAL_CAP, _noun_score(q, _with_hidden(o, ns), v, ref, ns)))
        if s >= 0:
            return max(s, 0.02)
    c = o.attributes.get("category")
    if c is None:
        return 0.5
    if o.attributes.get("source") == "sim_annotator":  # the catalogue's own category: no shape guess
        return 1.0 if c == q.category or (q.category == "block" and _is_block(c, v)) else 0.05
    if o.attributes.get("name_scores"):  # measured, but no catalogue entry explains it: weak evidence
        return 0.75 * _shape_class_score(q, str(o.attributes.get("shape", c)), v)
    if c == q.category or (q.category == "block" and _is_block(c, v)):
        return 1.0
    if q.category == "box" and c == "cube":
        return 0.9
    return _shape_class_score(q, c, v)


def _shape_class_score(q: Query, shape: str, v: Vocabulary) -> float:
    """Agreement of a perceived shape class (box, cylinder, ball, bar, disc, irregular) with the noun."""
    typical, other = shape_classes(q.category, v)
    if shape in typical:  # a perceived shape class compatible with the word
        return 0.8
    if shape in other:  # ... in another rest pose
        return 0.6
    if shape == "irregular":  # the geometric backend's "shape unclear" (occluded, odd pose): weak evidence
        return 0.55
    return 0.05


def _volume(o: SceneObject) -> float:
    e = o.attributes.get("extent") or [0.0, 0.0, 0.0]
    return float(e[0] * e[1] * e[2])


def _abs_size_score(q: Query, o: SceneObject, v: Vocabulary, hidden: bool = False) -> float:
    if q.size is None:
        return 1.0
    ns = name_fit(o)
    if ns is not None and q.category in ns and len(ns[q.category]) > 1:
        by_size = (_with_hidden(o, ns) if hidden else ns)[q.category]
        if q.size not in by_size:  # "medium" bar: the catalogue has none, the nearest sizes count
            return 0.8
        return by_size[q.size] / max(max(by_size.values()), 1e-6)
    order = {s: i for i, s in enumerate(v.sizes)}
    if o.attributes.get("size") not in order or q.size not in order:
        return 1.0
    # Soft: size labels are category-relative in the vocabulary and noisy when measured.
    return (1.0, 0.8, 0.5)[min(abs(order[q.size] - order[o.attributes["size"]]), 2)]


def _rank_scores(values: list[float], prefer_low: bool) -> list[float]:
    """1.0 for the extreme value, falling linearly to 0.4 for the other extreme."""
    n = len(values)
    if n < 2:
        return [1.0] * n
    order = sorted(range(n), key=lambda i: values[i], reverse=not prefer_low)
    out = [0.0] * n
    for r, i in enumerate(order):
        out[i] = 1.0 - 0.6 * r / (n - 1)
    return out


def _lead_scores(values: list[float], prefer_low: bool, strong: list[bool]) -> list[float]:
    """1.0 at or ahead of the leading strong candidate's position (one the words fit about as
    well as the best), falling with the distance behind it to 0.4 at SUPERLATIVE_GAP.

    By distance, not rank: with four candidates a rank puts the runner-up at 0.8 of the leader
    however far behind it lies, so "the farthest bar" would always be a question; a runner-up
    within a third of the gap (about a centimetre) still is one. The lead is a strong
    candidate's, so a weak one far ahead (a box for "the leftmost mug") does not push the mugs
    back; it keeps its own weak score."""
    sign = -1.0 if prefer_low else 1.0
    lead = max(sign * x for x, ok in zip(values, strong, strict=True) if ok)
    return [1.0 - 0.6 * min(1.0, max(0.0, lead - sign * x) / SUPERLATIVE_GAP) for x in values]


@cache
def _category_dims(category: str, size: str | None,
                   v: Vocabulary) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(lo, hi) of the sorted extents of vocabulary entries of this category (and size)."""
    cat = v.by_name.get(category)
    ex = [sorted(e) for s, e in (cat.sizes if cat else ()) if size is None or s == size]
    if not ex and size is not None:
        return _category_dims(category, None, v)
    if not ex:
        return None
    arr = np.asarray(ex)
    return tuple(arr.min(axis=0)), tuple(arr.max(axis=0))


def _dims_score(q: Query, o: SceneObject, v: Vocabulary, scene: SceneGraph | None = None) -> float:
    """Does the measured size fit the named category? Any rest pose has the same sorted extents.

    Too big (beyond 1.3x + 1.5 cm) is strong evidence against; too small only weak (occlusion).
    Objects without a measured extent (or unknown categories) score 1.
    """
    if q.category is None or "extent" not in o.attributes:
        return 1.0
    dims = _category_dims(q.category, q.size, v)
    if dims is None:
        return 1.0
    length, width, h = (float(x) for x in o.attributes["extent"])
    if scene is not None and scene.related(o.id, "on_top_of"):  # resting on others: own height only
        h = max(h - float(o.attributes.get("bottom_height", 0.0)), 0.0)
    m = sorted((length, width, h))
    if max(m) <= 0:
        return 1.0
    lo, hi = dims
    f = 1.0
    for mk, lk, hk in zip(m, lo, hi, strict=True):
        if mk > 1.3 * hk + 0.015:
            f *= 0.5
        elif mk < 0.5 * lk - 0.005:
            f *= 0.85
    return f


def score_objects(q: Query, scene: SceneGraph) -> dict[int, float]:
    """Score every object in the scene against the query (0..1).

    As seen first; only when nothing then reaches ACCEPT, again with what partly hidden segments
    could be with the rest out of sight (AMODAL_CAP): an object the words fit as seen needs no
    hidden part to explain it, and a hidden reading never rivals it."""
    return _scores_and_reading(q, scene)[0]


def seen_scores(q: Query, scene: SceneGraph) -> dict[int, float]:
    """Every object's score for the query as seen (no reading of hidden parts)."""
    return _scores(q, scene, hidden=False)


def _scores_and_reading(q: Query, scene: SceneGraph) -> tuple[dict[int, float], bool]:
    """(scores, whether they read hidden parts): see score_objects."""
    scores = _scores(q, scene, hidden=False)
    if max(scores.values(), default=0.0) < ACCEPT and any(o.attributes.get("amodal_scores") and name_fit(o)
                                                          for o in scene.objects):
        return _scores(q, scene, hidden=True), True
    return scores, False


def _scores(q: Query, scene: SceneGraph, hidden: bool) -> dict[int, float]:
    objs = scene.objects
    v = vocabulary_of(scene)
    base = {o.id: _colour_score(q, o, v) * _category_score(q, o, v, hidden)
            * (1.0 if name_fit(o) else _dims_score(q, o, v, scene)) for o in objs}
    # Relative size compares like with like: candidates whose perceived shape is typical for the word.
    cands = [o for o in objs
             if base[o.id] >= ACCEPT and (q.category is None or _category_score(q, o, v, hidden) >= 0.8)]
    scores = {o.id: base[o.id] * _abs_size_score(q, o, v, hidden) for o in objs}
    if len(v.sizes) > 1 and q.size in (v.sizes[0], v.sizes[-1]) and len(cands) >= 2:  # smallest or largest
        rel = _rank_scores([_volume(o) for o in cands], prefer_low=q.size == v.sizes[0])
        for o, r in zip(cands, rel, strict=True):
            if q.comparative or name_fit(o) is None:
                scores[o.id] = base[o.id] * max(r, 0.0) * (0.5 + 0.5 * _abs_size_score(q, o, v, hidden))
            else:  # a catalogue size word: the fit decides, the rank only breaks near-ties
                scores[o.id] *= 0.85 + 0.15 * (r - 0.4) / 0.6
    live = [o for o in objs if scores[o.id] >= ACCEPT]
    if q.superlative and len(live) >= 2:
        axis, low = {"left": (0, True), "right": (0, False), "front": (1, False), "back": (1, True)}[q.superlative]
        top = max(scores[o.id] for o in live)
        rel = _lead_scores([o.point2d[axis] for o in live], low, [scores[o.id] >= AMBIGUOUS * top for o in live])
        for o, r in zip(live, rel, strict=True):
            scores[o.id] *= r
    if q.relation and q.anchor is not None:
        anchors = ground_all(q.anchor, scene)
        for o in objs:
            scores[o.id] *= _relation_score(q.relation, o, anchors, scene)
    return scores


def _relation_score(relation: str, o: SceneObject, anchors: dict[int, float], scene: SceneGraph) -> float:
    if not anchors:
        return 0.0
    best = 0.0
    for aid, ascore in anchors.items():
        if aid == o.id:
            continue
        if relation == "under":
            holds = (aid, "on_top_of", o.id) in scene.relations
        else:
            holds = (o.id, relation, aid) in scene.relations
        best = max(best, ascore if holds else 0.1 * ascore)
    return best


def ground_all(q: Query, scene: SceneGraph) -> dict[int, float]:
    """Objects whose score reaches ACCEPT, with their scores."""
    return {i: s for i, s in score_objects(q, scene).items() if s >= ACCEPT}


@dataclass
class Grounded:
    """The best object for a text, its score, and the others that fit about as well."""

    obj: SceneObject
    score: float
    alternatives: list[SceneObject] = field(default_factory=list)
    alternative_scores: list[float] = field(default_factory=list)
    hidden_reading: bool = False  # it fits only with its rest out of sight (score_objects)
    words_tie: bool = False  # the words leave the tie open: no second look settles it (ties.words_leave_open)


def resolve(text: str, scene: SceneGraph) -> Grounded | None:
    """Best object for the referring text, with equally good alternatives; None when nothing fits.

    An exact (case-insensitive) name match wins outright when names are authoritative (the sim
    backend's catalogue names); measured names are only evidence, so they are scored like any
    other text. Candidates scoring at least AMBIGUOUS × the best are returned as alternatives,
    except between hidden readings (score_objects): those are no question worth asking, so None
    (the tree searches and looks again). A near-perfect fit settles a tie (ties.decisive) unless the
    words leave it open (ties.words_leave_open, then `words_tie`).
    """
    t = text.lower().strip()
    t_bare = re.sub(r"^(the|a|an)\s+", "", t)
    for o in scene.objects:
        if o.name.lower() == t_bare and not o.attributes.get("name_scores"):
            return Grounded(o, 1.0)
    v = vocabulary_of(scene)
    q = parse(text, v)
    if q.colour is None and q.category is None and q.unknown_noun is None and q.size is None \
            and q.superlative is None:
        return None
    scores, hidden = _scores_and_reading(q, scene)
    if not scores:
        return None
    order = sorted(scores, key=lambda i: (scores[i], scene.by_id(i).attributes.get("pixels", 0)),  # type: ignore[union-attr]
                   reverse=True)
    best = order[0]
    if scores[best] < ACCEPT:
        return None
    obj = scene.by_id(best)
    assert obj is not None
    alts = [a for a in (scene.by_id(i) for i in order[1:] if scores[i] >= max(ACCEPT, AMBIGUOUS * scores[best]))
            if a is not None]
    pieces = [a for a in alts if same_object(obj, a)]
    if pieces:
        obj = joined(obj, pieces)
        alts = [a for a in alts if a not in pieces]
    if hidden and alts:  # two objects that might each be it, partly hidden: look on, do not ask
        return None
    tie = words_leave_open(q, [obj, *alts], v) if alts else []
    if tie:
        obj, alts = tie[0], tie[1:]
    settled = decisive(q, [obj, *alts], v) if alts and not tie else None
    if settled is not None:
        return Grounded(settled, scores[settled.id])  # never a hidden reading: those ask no question
    return Grounded(obj, scores[obj.id], alts, [scores[a.id] for a in alts], hidden, bool(tie))


def ground(text: str, scene: SceneGraph) -> tuple[SceneObject, float] | None:
    """Best object for the referring text and its score, or None (see `resolve`)."""
    hit = resolve(text, scene)
    return None if hit is None else (hit.obj, hit.score)
