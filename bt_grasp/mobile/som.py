"""Set-of-Mark overlays, marker bookkeeping and the category matcher of the mobile tools.

Why a lexical matcher: the vocabulary is the catalogue's, no model may be downloaded, and the
match must be explainable. `LexicalMatcher` maps words to canonical categories through the
grounding synonyms ("tin" finds a can, "cup" a mug) and the perceived shape classes, falls back
to character similarity for unknown nouns, and lowers the score of a disagreeing colour or size.
It only decides what is marked (loosely); select_target / check_target (bt_grasp/mobile/target.py)
choose among the marks. It is pluggable: anything with `score(query, obj) -> float` can be put in
ctx.services.category_matcher.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from bt_grasp.perception.colour import SIMILAR
from bt_grasp.perception.grounding import shape_classes
from bt_grasp.perception.query import category_words, parse
from bt_grasp.perception.types import SceneObject

MATCH_MIN = 0.5
PALETTE = np.array([[230, 25, 75], [60, 180, 75], [0, 130, 200], [245, 130, 48], [145, 30, 180],
                    [70, 240, 240], [240, 50, 230], [210, 245, 60], [250, 190, 190], [0, 128, 128]], dtype=np.uint8)


class CategoryMatcher(Protocol):
    def score(self, query: str, obj: SceneObject) -> float: ...


class LexicalMatcher:
    """A loose first pass (which objects to mark), not the final choice: category by synonyms, by
    the perceived shape class the word normally has (the geometric backend names shapes:
    "cylinder" for a can), or by fuzzy text; a colour that lighting can confuse with the asked one
    (colour.SIMILAR: red/orange, red/pink, ...) and a different size halve the score. Spatial
    words and relations are ignored here; select_target and check_target use them."""

    def score(self, query: str, obj: SceneObject) -> float:
        q = parse(query)
        attrs = obj.attributes
        cat = str(attrs.get("category") or "")
        if q.category is not None:
            typical, other = shape_classes(q.category)
            s = 1.0 if q.category == cat or cat in typical else (0.6 if cat in other or cat == "irregular" else 0.0)
        elif q.unknown_noun:
            words = [cat, *category_words().get(cat, ())]
            s = max(difflib.SequenceMatcher(None, q.unknown_noun, w).ratio() for w in words)
        else:
            s = 0.7  # "the red one": no category constraint
        colour = attrs.get("colour")
        if q.colour is not None and colour is not None and q.colour != colour:
            s *= 0.5 if frozenset((q.colour, colour)) in SIMILAR else 0.2
        if q.size is not None and attrs.get("size") is not None and q.size != attrs.get("size"):
            s *= 0.5
        return s


@dataclass
class Mark:
    """One numbered mark: what it points at and in which view (a marker is stale after the robot
    moves or the marks are redrawn)."""

    marker: int
    kind: str  # "object" | "receptacle"
    name: str
    view: int
    point_base: np.ndarray | None = None
    located: Any = None
    observation: Any = None
    point2d: tuple[float, float] = (0.0, 0.0)
    attributes: dict[str, Any] = field(default_factory=dict)


def overlay(rgb: np.ndarray, masks: list[np.ndarray], path: Path) -> Path:
    """Coloured masks with their integer id drawn at the mask centroid; saved as PNG."""
    from PIL import Image, ImageDraw

    img = rgb.astype(np.float32).copy()
    for k, m in enumerate(masks):
        img[m] = 0.45 * img[m] + 0.55 * PALETTE[k % len(PALETTE)]
    im = Image.fromarray(img.clip(0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(im)
    for k, m in enumerate(masks):
        vs, us = np.nonzero(m)
        if len(us):
            u, v = float(us.mean()), float(vs.mean())
            draw.rectangle([u - 6, v - 7, u + 6, v + 7], fill=(0, 0, 0))
            draw.text((u - 3, v - 6), str(k), fill=(255, 255, 255))
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path)
    return path


def marks_dir(ctx: Any) -> Path:
    """Where overlays go: ctx.services.trace_dir, else $BT_GRASP_TRACE_DIR, else ./runs/marks."""
    d = ctx.services.trace_dir or os.environ.get("BT_GRASP_TRACE_DIR") or "runs/marks"
    return Path(d) / ctx.run_id
