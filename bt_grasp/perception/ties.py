"""Ties between equally scored candidates: when a near-perfect catalogue fit settles one, and when
the words leave one open (a question, whatever the fits).

Why apart from grounding.py: scoring says which objects fit the words; these rules say what a
tie among them means, and they are what a change to asking or guessing touches.
"""

from __future__ import annotations

from .calibration import value
from .fits import catalogue_nouns, name_fit
from .lexicon import Vocabulary
from .query import Query
from .types import SceneObject

# A runner-up scoring at least this share of the best is "equally good": ask, do not guess.
AMBIGUOUS = value("AMBIGUOUS")
# ... unless one of the equally good candidates is explained by the named entry this well, and
# clearly better than each other one: near-perfect evidence settles it (a mug whose best fit is
# "duck" scores as well as the duck relative to its own fits, not in absolute terms).
DECISIVE_FIT = value("DECISIVE_FIT")
DECISIVE_MARGIN = value("DECISIVE_MARGIN")


def _named_fit(q: Query, o: SceneObject, v: Vocabulary) -> float | None:
    """How well the catalogue entry the text names explains this segment, in absolute terms (the
    geometric backend's fit for that noun and size); None without measured fits."""
    ns = name_fit(o)
    if ns is None or q.category is None:
        return None
    fits = [by[q.size] if q.size in by else max(by.values()) for n, by in ns.items() if n in catalogue_nouns(q, v)]
    return max(fits, default=None)


def clearly_named(q: Query, o: SceneObject, v: Vocabulary) -> bool:
    """The named category explains this segment best, and no other category about as well
    (AMBIGUOUS share of its fit): a mug whose fits are "duck" 0.8 and "mug" 0.76 is no clear duck."""
    ns = name_fit(o)
    if ns is None:
        return False
    nouns = catalogue_nouns(q, v)
    named = max((max(by.values()) for n, by in ns.items() if n in nouns), default=0.0)
    other = max((max(by.values()) for n, by in ns.items() if n not in nouns), default=0.0)
    return named > 0.0 and other < AMBIGUOUS * named


# A segment believed this surely a cylinder on its side (features.measure's lying_cylinder).
LYING = 0.5


def seen_otherwise(q: Query, o: SceneObject, v: Vocabulary) -> bool:
    """The named category explains this segment about as well as any (AMBIGUOUS share of its best
    fit), and what keeps it from a clear fit is how it is seen, which the perceiver itself tells:
    partly covered, with the named category still its best fit (a cube cut by its cover also fits
    "box"), or a cylinder of the named kind on its side (a can lying down also fits "bar").

    Why: two objects of the named kind, one seen in a plain pose and one in another, differ in
    fit by their pose alone, which the words leave open; a segment best explained by another
    kind in a plain view (a mug that fits "duck" about as well as "mug") stays no candidate."""
    ns = name_fit(o)
    if ns is None:
        return False
    nouns = catalogue_nouns(q, v)
    named = max((max(by.values()) for n, by in ns.items() if n in nouns), default=0.0)
    best = max(max(by.values()) for by in ns.values())
    if named <= 0.0 or named < AMBIGUOUS * best:
        return False
    if o.attributes.get("occluded"):
        return named >= best
    lying = float(o.attributes.get("lying_cylinder") or 0.0) >= LYING
    return lying and any(v.by_name[n].body == "cylinder" for n in nouns if n in v.by_name)


def words_leave_open(q: Query, candidates: list[SceneObject], v: Vocabulary) -> list[SceneObject]:
    """The candidates the words leave tied (best first), when at least two; else [].

    The text names a category and at most a colour ("the bar", "the red cube"): the candidates
    clearly of that category (clearly_named), or of it as far as their pose or cover lets them
    be seen (seen_otherwise), are tied when one at least is clear; the others (a cube for "the
    box") drop out. The text names only a colour ("the purple one"): every candidate shows it. Then how well
    each is seen (its pose, its size, how much of it shows) is all that tells them apart, which
    the words leave open: no fit settles the tie, and no second look will. Any other word (a
    size, a superlative, a relation, a comparative) may tell them apart, as the scores judged it."""
    if q.size is not None or q.superlative or q.relation or q.comparative or q.unknown_noun is not None:
        return []
    if q.category is None:
        return candidates if q.colour is not None else []
    tied = [o for o in candidates if clearly_named(q, o, v) or seen_otherwise(q, o, v)]
    return tied if len(tied) >= 2 and any(clearly_named(q, o, v) for o in tied) else []


def decisive(q: Query, candidates: list[SceneObject], v: Vocabulary) -> SceneObject | None:
    """The one candidate whose named fit reaches DECISIVE_FIT and beats every other's by
    DECISIVE_MARGIN, or None (all must have measured fits: no comparing a fit with a guess)."""
    named = [_named_fit(q, o, v) for o in candidates]
    fits = [f for f in named if f is not None]
    if len(fits) < len(candidates):
        return None
    order = sorted(range(len(fits)), key=lambda i: fits[i], reverse=True)
    top, second = fits[order[0]], fits[order[1]]
    return candidates[order[0]] if top >= DECISIVE_FIT and top - second >= DECISIVE_MARGIN else None
