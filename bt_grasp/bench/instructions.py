"""Referring-expression instructions generated from a scene's ground truth, one per form.

Why generated: the benchmark measures how well the perceiver grounds everyday phrasings (a
synonym, the fewest attributes, a relation to a neighbour, a superlative, a description two
objects fit, an object that is not there), so every instruction must be true of its scene, and
the scene is known only to the simulator. This is benchmark set-up: it reads ground truth (the
objects present, their catalogue attributes, their positions, their visible pixels); the
perceiver gets only the text. Templates and paraphrases are data (instructions.yaml).

Conventions: positions are the camera's image axes for the overhead camera (left = +y of the
base, front = nearer the robot = -x), as perception/scene_graph.py relates objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import yaml

FORMS = ("name", "synonym", "attributes", "relation", "superlative", "ambiguous", "absent")
TEMPLATES = Path(__file__).with_name("instructions.yaml")
RELATION_M = 0.05  # a relation's offset along its axis, at least, and 1.5 × the other axis's
SUPERLATIVE_M = 0.04  # the target's lead over the runner-up in a superlative's direction
ATTRIBUTE_SETS = (("category",), ("colour",), ("colour", "category"), ("size", "category"),
                  ("size", "colour"), ("size", "colour", "category"))


@dataclass(frozen=True)
class Present:
    """One object on the table, as the simulator knows it."""

    name: str
    category: str
    colour: str
    size: str
    xy: tuple[float, float]  # base frame, metres
    visible: bool  # enough of it is in view for anyone to see it
    sized: bool  # its category comes in several sizes (a size word tells it apart)


@dataclass(frozen=True)
class Instruction:
    """The text, the objects it refers to (two for `ambiguous`, none for `absent`), and how."""

    form: str
    text: str
    referents: tuple[str, ...]
    detail: str = ""


@cache
def templates() -> dict[str, Any]:
    return dict(yaml.safe_load(TEMPLATES.read_text()))


def _image(o: Present) -> tuple[float, float]:
    """(right, down) in the overhead image, metres: right = -y, down (front) = -x."""
    return (-o.xy[1], -o.xy[0])


def describe(o: Present, attrs: tuple[str, ...]) -> str:
    words = [o.size if "size" in attrs else "", o.colour if "colour" in attrs else "",
             o.category if "category" in attrs else templates()["synonyms"]["no_category"]]
    return " ".join(w for w in words if w)


def fits(o: Present, like: Present, attrs: tuple[str, ...]) -> bool:
    return all(getattr(o, a) == getattr(like, a) for a in attrs)


def fewest_attributes(o: Present, present: list[Present]) -> tuple[str, ...] | None:
    """The fewest of colour/size/category no other present object shares (size only where it
    tells sizes of the category apart)."""
    for attrs in ATTRIBUTE_SETS:
        if "size" in attrs and not o.sized:
            continue
        if not any(fits(p, o, attrs) for p in present if p.name != o.name):
            return attrs
    return None


def relation(a: Present, b: Present, margin: float = RELATION_M) -> str | None:
    """left_of / right_of / in_front_of / behind of A relative to B, when clear."""
    (ua, va), (ub, vb) = _image(a), _image(b)
    du, dv = ua - ub, va - vb
    if abs(du) >= max(margin, 1.5 * abs(dv)):
        return "left_of" if du < 0 else "right_of"
    if abs(dv) >= max(margin, 1.5 * abs(du)):
        return "in_front_of" if dv > 0 else "behind"
    return None


def _pick(rng: np.random.Generator, items: list[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _text(form: str, rng: np.random.Generator, **parts: str) -> str:
    return str(_pick(rng, templates()["forms"][form])).format(**parts)


def generate(form: str, target: str, present: list[Present], catalogue: list[Any],
             rng: np.random.Generator) -> Instruction | None:
    """The instruction of `form` for this scene, or None when the scene has none of that form
    (no clear relation, no object extreme enough, no two visible objects alike)."""
    if form not in FORMS:
        raise ValueError(f"unknown instruction form {form!r} (one of: {', '.join(FORMS)})")
    by_name = {p.name: p for p in present}
    t = by_name[target]
    if form == "name":
        return Instruction(form, _text(form, rng, desc=t.name), (t.name,))
    if form == "synonym":
        return _synonym(t, rng)
    if form == "attributes":
        attrs = fewest_attributes(t, present)
        return None if attrs is None else Instruction(form, _text(form, rng, desc=describe(t, attrs)), (t.name,),
                                                      "+".join(attrs))
    if form == "relation":
        return _relation(t, present, rng)
    if form == "superlative":
        return _superlative(t, present, rng)
    if form == "ambiguous":
        return _ambiguous(t, present, rng)
    return _absent(present, catalogue, rng)


def _synonym(t: Present, rng: np.random.Generator) -> Instruction:
    syn = templates()["synonyms"]
    noun = _pick(rng, syn["category"].get(t.category, [t.category]))
    size = _pick(rng, syn["size"].get(t.size, [t.size])) if t.sized else ""
    desc = " ".join(w for w in (size, t.colour, noun) if w)
    return Instruction("synonym", _text("synonym", rng, desc=desc), (t.name,), noun)


def _relation(t: Present, present: list[Present], rng: np.random.Generator) -> Instruction | None:
    others = sorted((p for p in present if p.name != t.name and p.visible),
                    key=lambda p: float(np.hypot(p.xy[0] - t.xy[0], p.xy[1] - t.xy[1])))
    for anchor in others:
        rel = relation(t, anchor)
        anchor_attrs = fewest_attributes(anchor, present)
        if rel is None or anchor_attrs is None:
            continue
        for attrs in (("category",), ("colour", "category")):
            rivals = [p for p in present if p.name not in (t.name, anchor.name) and fits(p, t, attrs)]
            if all(relation(p, anchor, 0.02) != rel for p in rivals):
                words = _pick(rng, templates()["relation"][rel])
                text = _text("relation", rng, desc=describe(t, attrs), relation=words,
                             anchor=describe(anchor, anchor_attrs))
                return Instruction("relation", text, (t.name,), f"{rel} {anchor.name}")
    return None


def _lead(t: Present, group: list[Present], direction: str) -> float:
    """How far the target is ahead of the next object of `group` in `direction` (inf: alone)."""
    axis, sign = {"left": (0, -1.0), "right": (0, 1.0), "front": (1, 1.0), "back": (1, -1.0)}[direction]
    mine = sign * _image(t)[axis]
    rest = [sign * _image(p)[axis] for p in group if p.name != t.name]
    return mine - max(rest) if rest else float("inf")


def _superlative(t: Present, present: list[Present], rng: np.random.Generator) -> Instruction | None:
    """An object in view by a direction it leads its group in: the target when it does, else
    another (in name order): most scenes have some object leading its kind, far fewer the one
    object the scene was made for, and the form measures the words, not that object. In view,
    because a hidden referent is no superlative anyone can see: the one member of its kind in
    view would answer "the nearest brick" truly as far as the camera tells."""
    directions = list(templates()["superlative"])
    rng.shuffle(directions)
    others = sorted((p for p in present if p.name != t.name and p.visible), key=lambda p: p.name)
    for o in ((t, *others) if t.visible else others):
        for attrs in (("category",), ("colour", "category")):
            group = [p for p in present if fits(p, o, attrs)]
            if len(group) < 2:
                continue
            for d in directions:
                if _lead(o, group, d) >= SUPERLATIVE_M:
                    text = _text("superlative", rng, superlative=_pick(rng, templates()["superlative"][d]),
                                 desc=describe(o, attrs))
                    return Instruction("superlative", text, (o.name,), f"{d} of {len(group)}")
    return None


def _ambiguous(t: Present, present: list[Present], rng: np.random.Generator) -> Instruction | None:
    """A description exactly two present objects fit, both in view (the target's pair first)."""
    visible = [p for p in present if p.visible]
    pairs = sorted(combinations(visible, 2), key=lambda ab: t.name not in (ab[0].name, ab[1].name))
    for attrs in (("category",), ("colour", "category"), ("colour",)):
        for a, b in pairs:
            if fits(a, b, attrs) and sum(fits(p, a, attrs) for p in present) == 2:
                text = _text("ambiguous", rng, desc=describe(a, attrs))
                return Instruction("ambiguous", text, (a.name, b.name), "+".join(attrs))
    return None


def _absent(present: list[Present], catalogue: list[Any], rng: np.random.Generator) -> Instruction | None:
    """A catalogue object of a category in the scene, in a colour no object here that looks like
    it has or resembles (colour.SIMILAR), else of a category not in the scene. "Looks like": the
    same category, or one shown in the same shape class at rest (a white cube is a fair answer to
    "the white box", so "the white box" is not absent beside one)."""
    from bt_grasp.perception.colour import SIMILAR
    from bt_grasp.perception.lexicon import default_vocabulary

    vocabulary = default_vocabulary()
    looks = vocabulary.looks  # a textured mesh looks another colour (a blue duck: green)
    shapes = {c.name: set(c.shapes) for c in vocabulary.categories}
    here = {(p.category, p.colour) for p in present} | {(p.category, looks(p.category, p.colour)) for p in present}
    cats = {p.category for p in present}

    def alike(category: str, other: str) -> bool:
        return category == other or bool(shapes.get(category, set()) & shapes.get(other, set()))

    def unlike(spec: Any) -> bool:
        return all(not alike(c, spec.category) or (k != spec.colour and frozenset((k, spec.colour)) not in SIMILAR)
                   for c, k in here)

    names = sorted({f"{s.colour} {s.category}" for s in catalogue if unlike(s) and s.category in cats}) or \
        sorted({f"{s.colour} {s.category}" for s in catalogue if s.category not in cats})
    if not names:
        return None
    desc = _pick(rng, names)
    return Instruction("absent", _text("absent", rng, desc=desc), (), desc)
