"""Shared back half of both backends: a label image -> SceneObjects + relations -> SceneGraph,
and a grounded object -> Located.

Why shared: the sim annotator and the geometric segmenter differ only in how they produce the
label image and names; measuring, relating and locating must behave the same for both so the
benchmark compares segmentation, not bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Observation

from .features import ShapeMemo, measure
from .geometry import Plane, backproject, fit_table_plane, frame_pointmap
from .lexicon import Vocabulary
from .scene_graph import build_relations, occlusion_counts
from .types import Located, Measured, SceneGraph, SceneObject

MAX_REL_POINTS = 300

Namer = Callable[[int, Measured], tuple[str, str, dict[str, Any]]]


def table_plane(P: np.ndarray, exclude: np.ndarray | None = None) -> Plane:
    """Table plane from a pointmap (pixels in `exclude` skipped); z = 0 plane if the fit fails."""
    # Every 3rd pixel in each direction: ~30k points at 512², plenty for a plane, 9x cheaper.
    pts = P[::3, ::3].reshape(-1, 3)
    if exclude is not None:
        pts = pts[~exclude[::3, ::3].reshape(-1)]
    plane = fit_table_plane(pts)
    return plane if plane is not None else Plane(np.array([0.0, 0.0, 1.0]), 0.0)


def assemble(obs: Observation, labels: np.ndarray, P: np.ndarray, heights: np.ndarray, namer: Namer,
             min_pixels: int = 1, brightness: float = 1.0, amodal: bool = False,
             vocab: Vocabulary | None = None, memo: ShapeMemo | None = None) -> SceneGraph:
    """Measure every label, name it with `namer(id, measured) -> (name, description, attrs)`,
    relate the objects and return the graph. Stores the table plane in each object's attributes,
    and `occluded` (the object is partially_occluded_by another) for grounding. `brightness` is
    the scene's light for colour naming (colour.scene_brightness); `amodal`: also fit what partly
    hidden segments could be with their rest out of sight (features.measure), for a backend that
    names by measured fits. `vocab`: the words objects are named in, kept with the graph so
    grounding reads texts in the same words (None: the shipped default). `memo`: geometry
    already measured on this frame (features.ShapeMemo).
    """
    from scipy import ndimage  # here, not at import: scipy loads slowly, only surveys use it

    objects: list[SceneObject] = []
    pts: dict[int, np.ndarray] = {}
    hts: dict[int, np.ndarray] = {}
    rng = np.random.default_rng(0)
    counts = occlusion_counts(labels, obs.depth)
    occluded = {a for (a, _b), n in counts.items() if n >= 3}
    windows = ndimage.find_objects(labels)
    for k, win in enumerate(windows):
        if win is None:
            continue
        oid = k + 1
        mask = np.zeros(labels.shape, dtype=bool)
        mask[win] = labels[win] == oid
        if mask[win].sum() < min_pixels:
            continue
        meas = measure(mask, P, heights, obs.rgb, win, occluded=oid in occluded, brightness=brightness,
                       amodal=amodal, vocab=vocab, memo=memo)
        name, desc, attrs = namer(oid, meas)
        attrs = {**meas.attributes(), **attrs}
        point2d = attrs.pop("point2d")
        objects.append(SceneObject(id=oid, name=name, description=desc, point2d=point2d, mask_id=oid,
                                   attributes=attrs, mask=mask))
        ok = mask[win] & np.isfinite(heights[win])
        p, h = P[win][ok], heights[win][ok]
        if len(p) > MAX_REL_POINTS:
            sel = rng.choice(len(p), MAX_REL_POINTS, replace=False)
            p, h = p[sel], h[sel]
        pts[oid], hts[oid] = p, h
    # The pairs of kept labels count the same pixels with the dropped labels blanked or not.
    kept = {o.id for o in objects}
    rel = build_relations(objects, labels, obs.depth, pts, hts,
                          counts={ab: n for ab, n in counts.items() if ab[0] in kept and ab[1] in kept})
    hidden = {a for a, r, _ in rel if r == "partially_occluded_by"}
    for o in objects:  # grounding judges a partly hidden segment's catalogue fits less strictly
        o.attributes["occluded"] = o.id in hidden
    return SceneGraph(objects=objects, relations=rel, clock=obs.clock, vocabulary=vocab)


def heights_and_points(obs: Observation, exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, Plane]:
    """(pointmap (read-only, shared per frame), heights above the fitted table, plane) for an observation."""
    P = frame_pointmap(obs)
    plane = table_plane(P, exclude)
    return P, plane.height(P), plane


def to_located(obs: Observation, scene: SceneGraph, obj: SceneObject, score: float,
               min_pixels: int) -> Located | None:
    """Located for a grounded object; None when too few pixels are visible (hidden)."""
    mask = obj.mask
    if mask is None or mask.shape != obs.depth.shape or mask.sum() < min_pixels:
        return None
    v, u = np.nonzero(mask)
    bbox = (int(u.min()), int(v.min()), int(u.max()), int(v.max()))
    points = backproject(obs.depth, obs.K, obs.T_cam_base, mask)
    if len(points) == 0:
        return None
    return Located(object_id=obj.id, name=obj.name, mask=mask, bbox=bbox, points_base=points,
                   score=float(score), occluded_by=scene.related(obj.id, "partially_occluded_by"))


def alternative_names(chosen: SceneObject, others: list[SceneObject]) -> list[str]:
    """Names to offer in "ambiguous: A or B"; a name shared with another gets its image side."""
    names = [o.name for o in [chosen, *others]]
    out = []
    for o in others:
        if names.count(o.name) > 1:
            side = "left" if o.point2d[0] < chosen.point2d[0] else "right"
            out.append(f"the {o.name} on the {side}")
        else:
            out.append(o.name)
    return out


def describe(name: str, attrs: dict[str, Any]) -> str:
    """One-line human description with measured size and height (for logs and LLM prompts)."""
    ext = attrs.get("extent", [0, 0, 0])
    c = attrs.get("centroid_base", [float("nan")] * 3)
    return (f"{name}: {attrs.get('category', '?')}, {attrs.get('colour', '?')}, about "
            f"{ext[0] * 100:.0f}x{ext[1] * 100:.0f} cm, {ext[2] * 100:.0f} cm tall, at "
            f"({c[0]:.2f}, {c[1]:.2f}, {c[2]:.2f}) m in the base frame")


class GroundingLocator:
    """`locate` shared by every perceiver: ground the text in a scene of this very frame.

    Subclasses provide `survey(obs)` and `min_pixels`.
    """

    min_pixels: int

    def survey(self, obs: Observation) -> SceneGraph:  # pragma: no cover - provided by subclasses
        raise NotImplementedError

    def locate(self, obs: Observation, text: str, scene: SceneGraph | None = None) -> Located | None:
        """Ground `text` (re-surveying when the scene is missing or from another frame)."""
        from .grounding import resolve

        if scene is None or scene.clock != obs.clock or any(o.mask is None for o in scene.objects):
            scene = self.survey(obs)
        hit = resolve(text, scene)
        if hit is None:
            return None
        loc = to_located(obs, scene, hit.obj, hit.score, self.min_pixels)
        if loc is not None:
            loc.alternatives = alternative_names(hit.obj, hit.alternatives)
            loc.alternative_scores = [round(float(x), 3) for x in hit.alternative_scores]
            loc.alternative_ids = [o.id for o in hit.alternatives]
            loc.hidden_reading = hit.hidden_reading
            loc.words_tie = hit.words_tie
        return loc
