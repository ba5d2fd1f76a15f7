"""Referring expressions parsed into a Query: "the small red box left of the mug" -> colour,
size, category, superlative and one relational clause (scored by grounding.py).

The words are the vocabulary's (lexicon.py: each category's words, and its phrasing: colour and
size words, comparatives, generic nouns, words to ignore); the grammar of superlatives and
relations ("leftmost", "left of", "on top of") is English and lives here.
Simplified: one relational clause at most, no negation, no ordinals ("second from left").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from .lexicon import default_vocabulary

if TYPE_CHECKING:
    from .lexicon import Vocabulary

SUPERLATIVES = {
    "left": [r"\bleft[- ]?most\b", r"\b(?:on|to|at|in) the (?:far )?left\b(?! of)", r"\bfurthest left\b"],
    "right": [r"\bright[- ]?most\b", r"\b(?:on|to|at|in) the (?:far )?right\b(?! of)", r"\bfurthest right\b"],
    "front": [r"\bfront[- ]?most\b", r"\bin (?:the )?front\b(?! of)", r"\b(?:nearest|closest)\b(?! to)"],
    "back": [r"\bback[- ]?most\b", r"\b(?:at|in) the back\b", r"\b(?:farthest|furthest)\b(?! (?:left|right))",
             r"\bat the rear\b"],
}
RELATIONS = [
    ("left_of", r"\b(?:to the |on the )?left of\b"),
    ("right_of", r"\b(?:to the |on the )?right of\b"),
    ("in_front_of", r"\bin front of\b"),
    ("behind", r"\bbehind\b|\bin back of\b"),
    ("on_top_of", r"\bon top of\b|\bontop of\b|\batop\b|\bon\b|\bsitting on\b|\bresting on\b"),
    ("under", r"\bunder(?:neath)?\b|\bbeneath\b|\bbelow\b"),
    ("next_to", r"\bnext to\b|\bbeside\b|\bnear\b|\bby\b|\bclose to\b|\badjacent to\b"),
]


@dataclass
class Query:
    """A parsed referring expression."""

    colour: str | None = None
    size: str | None = None
    category: str | None = None
    unknown_noun: str | None = None
    superlative: str | None = None
    comparative: bool = False  # "the larger red can": rank among the candidates, not an absolute size
    relation: str | None = None
    anchor: Query | None = None
    words: list[str] = field(default_factory=list)


@cache
def category_words(vocab: Vocabulary | None = None) -> dict[str, tuple[str, ...]]:
    """Category -> the words naming it (its name first), in the vocabulary's order, then the
    generic "block" (any category marked `block`) with its phrasing words."""
    v = vocab or default_vocabulary()
    return {**v.words, "block": v.phrases().any_block}


def _find_category(text: str, vocab: Vocabulary | None = None) -> tuple[str | None, str]:
    """(canonical category, text without it); the longest matching synonym wins."""
    best: tuple[int, str, str] | None = None
    for cat, syns in category_words(vocab).items():
        for s in syns:
            m = re.search(rf"\b{re.escape(s)}\b", text)
            if m and (best is None or len(s) > best[0]):
                best = (len(s), cat, text[:m.start()] + " " + text[m.end():])
    return (best[1], best[2]) if best else (None, text)


def _own_size(size: str, vocab: Vocabulary) -> str:
    """An English size word in the vocabulary's terms: "small" / "large" (and their comparatives)
    are its smallest / largest size word when it has no such word itself."""
    if size in vocab.sizes or len(vocab.sizes) < 2:
        return size
    return {"small": vocab.sizes[0], "large": vocab.sizes[-1]}.get(size, size)


def parse(text: str, vocab: Vocabulary | None = None) -> Query:
    """Parse colour, size, category, a superlative and one relational clause, in the words of
    the vocabulary (the shipped default when None)."""
    v = vocab or default_vocabulary()
    ph = v.phrases()
    t = " " + re.sub(r"[^a-z\- ]", " ", text.lower()) + " "
    q = Query()
    for direction, pats in SUPERLATIVES.items():
        for pat in pats:
            if re.search(pat, t):
                q.superlative = direction
                t = re.sub(pat, " ", t)
                break
        if q.superlative:
            break
    for rel, pat in RELATIONS:
        m = re.search(pat, t)
        if m:
            q.relation, q.anchor = rel, parse(t[m.end():], v)
            t = t[:m.start()]
            break
    cat, t = _find_category(t, v)
    q.category = cat
    words = [w for w in t.split() if w]
    q.words = words
    own_sizes = set(v.sizes)
    own_colours = {c for k in v.categories for c in k.colours}
    for w in words:
        if w in own_colours and q.colour is None:
            q.colour = w
        elif w in own_sizes and q.size is None:
            q.size = w
        elif w in ph.colours and q.colour is None:
            q.colour = ph.colours[w]
        elif w in ph.sizes and q.size is None:
            q.size = _own_size(ph.sizes[w], v)
            q.comparative = w in ph.comparatives
    if cat is None:
        rest = [w for w in words if w not in ph.colours and w not in ph.sizes and w not in ph.ignore
                and w not in ph.generic and w not in own_sizes and w not in own_colours]
        if rest:
            q.unknown_noun = rest[-1]
    return q
