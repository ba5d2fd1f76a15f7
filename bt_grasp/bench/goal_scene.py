"""Which catalogue objects a goal text fits: the simulator's choice of a scene's target.

Why: a simulated scene is built for a goal ("grab the mug", "the red mug, please"), and the
scene builder must know which catalogue objects the words describe, to place one of them (chosen
by the seed) and keep the others out, so the words single out one object. This is simulator
set-up and reads the catalogue; the perceiver never sees it (it grounds the same words against
what the camera shows). Words that fit no catalogue object ("the banana") build the scene
without it, and the episode has to search and end in "not found".

Simplified: only the object's own words count (colour, size, category); a relation or
superlative in the text ("the mug left of the box") is not arranged in the scene.
"""

from __future__ import annotations

from dataclasses import dataclass

from bt_grasp.perception.query import Query, parse

from .objects import ObjectSpec


@dataclass(frozen=True)
class GoalObjects:
    """The catalogue objects a goal text fits (empty: it names nothing the simulator can place)."""

    words: str
    fitting: tuple[ObjectSpec, ...]

    @property
    def absent(self) -> bool:
        return not self.fitting


def _sizes_by_category(pool: list[ObjectSpec]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for o in pool:
        out.setdefault(o.category, set()).add(o.size)
    return out


def _fits(q: Query, o: ObjectSpec, sizes: dict[str, set[str]], blocks: frozenset[str]) -> bool:
    if q.category == "block":
        if o.category not in blocks:
            return False
    elif q.category is not None and q.category != o.category:
        return False
    if q.colour is not None and q.colour != o.colour:
        return False
    # A size word only tells objects apart where the category comes in several sizes ("the
    # small mug" is the one mug size there is); a comparative ranks objects, it names no size.
    return q.size is None or q.comparative or len(sizes.get(o.category, ())) < 2 or q.size == o.size


def goal_objects(text: str, pool: list[ObjectSpec]) -> GoalObjects:
    """The objects of `pool` that the words of `text` (a goal's object phrase) describe."""
    from bt_grasp.perception.lexicon import default_vocabulary

    vocab = default_vocabulary()
    q = parse(text, vocab)
    if q.category is None and q.unknown_noun is not None:
        return GoalObjects(text, ())
    blocks = frozenset(c.name for c in vocab.categories if c.block)
    sizes = _sizes_by_category(pool)
    return GoalObjects(text, tuple(o for o in pool if _fits(q, o, sizes, blocks)))
