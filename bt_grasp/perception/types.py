"""Data passed from perception to the tree: scene graphs and located objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from bt_grasp.drivers.base import Observation

if TYPE_CHECKING:
    from .lexicon import Vocabulary

RELATIONS = ("left_of", "right_of", "in_front_of", "behind", "on_top_of", "partially_occluded_by",
             "next_to")


@dataclass
class SceneObject:
    """One perceived object. point2d is (u, v) normalised to [0, 1] by image width/height."""

    id: int
    name: str
    description: str
    point2d: tuple[float, float]
    mask_id: int
    attributes: dict[str, Any] = field(default_factory=dict)  # colour, size, category, ...
    mask: np.ndarray | None = None  # HxW bool


@dataclass
class SceneGraph:
    """Objects and binary relations (subject id, relation, object id)."""

    objects: list[SceneObject]
    relations: list[tuple[int, str, int]]
    clock: float = 0.0
    # The words the objects are named in (lexicon.py); grounding reads texts in them. None: the
    # shipped default.
    vocabulary: Vocabulary | None = field(default=None, repr=False, compare=False)

    def by_id(self, oid: int) -> SceneObject | None:
        return next((o for o in self.objects if o.id == oid), None)

    def related(self, oid: int, relation: str) -> list[int]:
        return [o for s, r, o in self.relations if s == oid and r == relation]

    def summary(self) -> dict[str, Any]:
        return {"objects": [{"id": o.id, "name": o.name, "point2d": list(o.point2d)}
                            for o in self.objects],
                "relations": [list(r) for r in self.relations]}


@dataclass
class Located:
    """A grounded referring expression: the object's mask, bbox and 3D points in the base frame."""

    object_id: int
    name: str
    mask: np.ndarray
    bbox: tuple[int, int, int, int]  # u_min, v_min, u_max, v_max (pixels, inclusive)
    points_base: np.ndarray  # Nx3
    score: float = 1.0
    occluded_by: list[int] = field(default_factory=list)
    # Names of other candidates that fit the text as well as this one (within the grounding
    # margin). Non-empty means the choice is a guess: ask "ambiguous: A or B" instead of grasping.
    alternatives: list[str] = field(default_factory=list)
    # Their grounding scores, in the same order (`score` is the chosen one's): how close the call was.
    alternative_scores: list[float] = field(default_factory=list)
    # Their object ids in the same scene, in the same order (what covers them is in the scene graph).
    alternative_ids: list[int] = field(default_factory=list)
    # Grounded only as what a partly hidden segment could be with the rest out of sight: a
    # hypothesis the delivery check confirms in full view (nodes/evidence.py).
    hidden_reading: bool = False
    # With alternatives: every candidate is clearly the kind the text names, and the text names
    # nothing else (at most a colour) to tell them apart, so a look at the rest of a partly
    # covered one will not either: a question, not a guess (nodes/perception.py, in_full_view).
    words_tie: bool = False


@runtime_checkable
class Perceiver(Protocol):
    """What the perception leaves call (ctx.perceiver): the built-in `geometric` (RGB-D only) and
    `sim` (the simulator's annotator) backends, or one of your own (docs/python-api.md), passed
    to bt_grasp.api.run or installed as a `bt_grasp.perceivers` plug-in.

    An optional `min_pixels: int` attribute is the smallest visible mask worth grasping."""

    name: str  # recorded in the trace header

    def survey(self, obs: Observation) -> SceneGraph:
        """Every object in the frame, with names ("red mug"), masks (HxW bool, image pixels),
        attributes and relations; `point2d` is normalised image (u, v) in [0, 1]; `clock` is the
        frame's."""
        ...

    def locate(self, obs: Observation, text: str, scene: SceneGraph | None) -> Located | None:
        """The object `text` refers to (grounded in `scene` when it is this frame's), or None:
        its mask and bbox in image pixels and its points (Nx3, metres) in the robot base frame."""
        ...


@dataclass(frozen=True)
class Measured:
    """One segment's measurements and names (what features.measure returns). Lengths in metres, base frame.

    pixels: mask size; point2d: (u, v) of an interior pixel, normalised to [0, 1]; colour: the
    vocabulary's colour word (seen_colour: the camera's palette name); category, size: the
    best-fitting entry (category "irregular" when too few points); shape: perceived class
    (features.classify_shape); extent: footprint long, short side and top height; top_height /
    bottom_height: 95th / 5th percentile height above the table; support_height: what it rests
    on (low estimate); yaw: footprint long-side angle; roundness: hull / rectangle area;
    flat_top: share of points near the top; name_scores: {noun: {size: fit}}; amodal_scores:
    the same with a hidden rest (occluded segments, when asked); sphere_fit: (radius, rms);
    planar_share: points on three planes; lying_cylinder: belief it is a cylinder on its side.
    The fields after name_scores are None when the segment had too few 3D points.
    """

    pixels: int
    point2d: tuple[float, float]
    colour: str
    colour_confidence: float
    category: str
    shape: str
    size: str
    centroid_base: list[float]
    top_height: float
    bottom_height: float
    extent: list[float]
    yaw: float
    roundness: float
    flat_top: float
    graspable: bool
    name_scores: dict[str, dict[str, float]] = field(default_factory=dict)
    seen_colour: str | None = None
    footprint_centre: list[float] | None = None
    support_height: float | None = None
    sphere_fit: list[float] | None = None
    planar_share: float | None = None
    lying_cylinder: float | None = None
    amodal_scores: dict[str, dict[str, float]] | None = None

    def attributes(self) -> dict[str, Any]:
        """The JSON-friendly attributes a SceneObject carries (fields that are None left out)."""
        order = _SHORT if self.seen_colour is None else _FULL
        out = {k: getattr(self, k) for k in order}
        if self.amodal_scores is not None:
            out = {**{k: out[k] for k in order[:4]}, "amodal_scores": self.amodal_scores,
                   **{k: out[k] for k in order[4:]}}
        return out


# Attribute order, as traces and logs show them.
_SHORT = ("pixels", "point2d", "colour", "colour_confidence", "category", "shape", "size", "centroid_base",
          "top_height", "bottom_height", "extent", "yaw", "roundness", "flat_top", "graspable", "name_scores")
_FULL = ("pixels", "point2d", "colour", "colour_confidence", "seen_colour", "category", "shape", "size",
         "centroid_base", "footprint_centre", "top_height", "bottom_height", "support_height", "extent", "yaw",
         "roundness", "flat_top", "name_scores", "sphere_fit", "planar_share", "lying_cylinder", "graspable")
