"""The geometric backend's catalogue fits, read for grounding: when a segment's fits count at all,
and which catalogue nouns a text's noun may be.

Why apart from grounding.py: the scores (grounding.py) and the tie rules (ties.py) read fits alike.
"""

from __future__ import annotations

from .calibration import value
from .lexicon import Vocabulary
from .query import Query
from .types import SceneObject

# Segments whose best catalogue fit is below this are unfamiliar (judged by shape class instead).
NOUN_FLOOR = 0.25
# Noun fits are taken relative to the object's best fit, or to this when the best is lower.
FIT_REF = 0.4
# The same two levels for a partly hidden segment (attributes["occluded"]): its hidden part
# lowers every fit, so a weak fit is still the best evidence there is (a cut box's outline says
# "cylinder"); docs/perception.md, "Occluded fragments".
NOUN_FLOOR_OCCLUDED = value("NOUN_FLOOR_OCCLUDED")
FIT_REF_OCCLUDED = value("FIT_REF_OCCLUDED")


def fit_levels(o: SceneObject) -> tuple[float, float]:
    """(noun floor, fit reference) for this segment: the occluded levels for a partly hidden one,
    whose hidden part lowers all of its catalogue fits alike."""
    if o.attributes.get("occluded"):
        return NOUN_FLOOR_OCCLUDED, FIT_REF_OCCLUDED
    return NOUN_FLOOR, FIT_REF


def name_fit(o: SceneObject) -> dict[str, dict[str, float]] | None:
    """The geometric backend's catalogue-fit scores {noun: {size: score}}, when some catalogue
    entry explains the segment at all (its best fit reaches the noun floor, see fit_levels);
    None for the sim backend and for unfamiliar objects (those are judged by their perceived
    shape class and dimensions instead)."""
    ns = o.attributes.get("name_scores")
    if not ns or max(max(v.values()) for v in ns.values()) < fit_levels(o)[0]:
        return None
    return ns


def catalogue_nouns(q: Query, v: Vocabulary) -> tuple[str, ...]:
    """The vocabulary nouns the text's noun may be ("block": any cuboid or block-like one)."""
    if q.category == "block":
        return tuple(c.name for c in v.categories if c.block or c.cuboid)
    return (str(q.category),)
