"""Referring expressions parsed into a Query: "the small red box left of the mug" -> colour,
size, category, superlative and one relational clause (scored by grounding.py).

Simplified: one relational clause at most, no negation, no ordinals ("second from left").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .lexicon import Vocabulary

COLOUR_WORDS = {"red": "red", "orange": "orange", "yellow": "yellow", "green": "green", "cyan": "cyan",
                "turquoise": "cyan", "blue": "blue", "navy": "blue", "purple": "purple", "violet": "purple",
                "pink": "pink", "magenta": "pink", "brown": "brown", "wooden": "brown", "white": "white",
                "grey": "grey", "gray": "grey", "silver": "grey", "black": "black", "crimson": "red",
                "scarlet": "red", "gold": "yellow", "golden": "yellow", "lime": "green"}
SIZE_WORDS = {"small": "small", "little": "small", "tiny": "small", "mini": "small", "smallest": "small",
              "medium": "medium", "mid": "medium", "middle-sized": "medium", "large": "large", "big": "large",
              "huge": "large", "biggest": "large", "largest": "large", "tall": "large", "larger": "large",
              "bigger": "large", "smaller": "small", "taller": "large", "shorter": "small"}
# Words that compare objects in the scene rather than name a catalogue size.
COMPARATIVES = {"larger", "bigger", "biggest", "largest", "smaller", "smallest", "taller", "shorter", "tallest"}
# Canonical category -> synonyms (single words or phrases).
CATEGORY_WORDS: dict[str, tuple[str, ...]] = {
    "box": ("box", "boxes", "carton", "crate", "package"),
    "cube": ("cube", "cubes", "dice"),
    "can": ("can", "cans", "tin", "cylinder", "cylinders", "canister", "bottle"),
    "ball": ("ball", "balls", "sphere", "spheres", "orb"),
    "bar": ("bar", "bars", "stick", "rod", "beam", "plank"),
    "puck": ("puck", "pucks", "disc", "disk", "coaster"),
    "duck": ("duck", "ducks", "rubber duck", "duckie", "ducky"),
    "mug": ("mug", "mugs", "cup", "cups", "coffee mug"),
    "lego brick": ("lego brick", "lego", "brick", "bricks", "building block"),
    "teddy bear": ("teddy bear", "teddy", "bear", "plush", "stuffed animal", "toy bear"),
    "jenga block": ("jenga block", "jenga", "jenga piece", "wooden block"),
    "domino": ("domino", "dominoes", "domino tile", "tile"),
    "block": ("block", "blocks"),
}
GENERIC = {"object", "thing", "item", "one", "toy"}
STOP = {"the", "a", "an", "that", "this", "please", "pick", "up", "grab", "grasp", "get", "me", "is",
        "which", "one", "of", "to", "at", "in", "and", "with", "it", "there"}

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


def _category_words(vocab: Vocabulary | None) -> dict[str, tuple[str, ...]]:
    """CATEGORY_WORDS with the vocabulary's own categories and words added."""
    if vocab is None:
        return CATEGORY_WORDS
    out = dict(CATEGORY_WORDS)
    for cat, words in vocab.words.items():
        out[cat] = tuple(dict.fromkeys((*out.get(cat, ()), *words)))
    return out


def _find_category(text: str, vocab: Vocabulary | None = None) -> tuple[str | None, str]:
    """(canonical category, text without it); the longest matching synonym wins."""
    best: tuple[int, str, str] | None = None
    for cat, syns in _category_words(vocab).items():
        for s in syns:
            m = re.search(rf"\b{re.escape(s)}\b", text)
            if m and (best is None or len(s) > best[0]):
                best = (len(s), cat, text[:m.start()] + " " + text[m.end():])
    return (best[1], best[2]) if best else (None, text)


def _own_size(size: str, vocab: Vocabulary | None) -> str:
    """An English size word in the vocabulary's terms: "small" / "large" (and their comparatives)
    are its smallest / largest size word when it has no such word itself."""
    if vocab is None or size in vocab.sizes or len(vocab.sizes) < 2:
        return size
    return {"small": vocab.sizes[0], "large": vocab.sizes[-1]}.get(size, size)


def parse(text: str, vocab: Vocabulary | None = None) -> Query:
    """Parse colour, size, category, a superlative and one relational clause. With a vocabulary
    (lexicon.py) its categories, size words and colour words are read as such too."""
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
            q.relation, q.anchor = rel, parse(t[m.end():], vocab)
            t = t[:m.start()]
            break
    cat, t = _find_category(t, vocab)
    q.category = cat
    words = [w for w in t.split() if w]
    q.words = words
    own_sizes = set(vocab.sizes) if vocab is not None else set()
    own_colours = {c for k in vocab.categories for c in k.colours} if vocab is not None else set()
    for w in words:
        if w in own_colours and q.colour is None:
            q.colour = w
        elif w in own_sizes and q.size is None:
            q.size = w
        elif w in COLOUR_WORDS and q.colour is None:
            q.colour = COLOUR_WORDS[w]
        elif w in SIZE_WORDS and q.size is None:
            q.size = _own_size(SIZE_WORDS[w], vocab)
            q.comparative = w in COMPARATIVES
    if cat is None:
        rest = [w for w in words if w not in COLOUR_WORDS and w not in SIZE_WORDS and w not in STOP
                and w not in GENERIC and w not in own_sizes and w not in own_colours]
        if rest:
            q.unknown_noun = rest[-1]
    return q
