"""The perceiver's vocabulary as data: categories (body, shape classes, sizes, colours, the words
a goal may use for them), size words, and the phrasing a goal text is read with (query.py).

Why data: the geometric backend names a segment by the known entry it fits best and grounds a
goal text against those names, so what it can name is whatever it is told about, not code. A
Vocabulary is built in code or read from YAML (`Vocabulary.from_yaml`, format in
docs/perception.md, "Vocabulary"); the benchmark's catalogue is one provider
(bt_grasp.bench.vocabulary), and the one shipped here (catalogue_vocabulary.yaml, the same
words, checked equal in the tests) is the default when a perceiver is given none.

Bodies: box, cylinder and sphere are solids of those extents; the mesh bodies are matched to
their bounding box with looser tolerances: block-mesh (flat faces, any face down), studded-mesh
(a bumpy top when upright, like a lego brick), organic-mesh (curved all over, like a duck) and
mesh (anything else, like a mug).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from bt_grasp.errors import UserError

from .colour import PALETTE

BODIES = ("box", "cylinder", "sphere", "block-mesh", "studded-mesh", "organic-mesh", "mesh")
SHAPE_CLASSES = ("box", "cylinder", "ball", "bar", "disc", "irregular")  # features.classify_shape's
CUBOID_BODIES = ("box", "block-mesh")
DEFAULT_FILE = Path(__file__).with_name("catalogue_vocabulary.yaml")

Extents = tuple[float, float, float]


@dataclass(frozen=True)
class Category:
    """One kind of object: how it is built, what shape classes it shows, its sizes and colours.

    sizes: (size word, (x, y, z) extents in metres at rest) smallest first; one size means names
    carry no size word. colours: the words it comes in; looks: (colour, palette name the camera
    sees) where a texture tints it. shapes / other_shapes: perceived shape classes in its typical
    rest pose / in other poses (used for segments no entry explains). block: "block" may name it.
    """

    name: str
    body: str
    sizes: tuple[tuple[str, Extents], ...]
    colours: tuple[str, ...]
    shapes: tuple[str, ...] = ()
    other_shapes: tuple[str, ...] = ()
    looks: tuple[tuple[str, str], ...] = ()
    words: tuple[str, ...] = ()
    block: bool = False

    @property
    def cuboid(self) -> bool:
        return self.body in CUBOID_BODIES


Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Phrasing:
    """How a goal text is read (query.parse): words for colours and sizes (word -> the colour or
    size it means), comparatives ("larger": rank, not a size), generic nouns ("thing"), words
    with no meaning for the choice ("please"), and the words for any category with `block`."""

    colour_words: Pairs
    size_words: Pairs
    comparatives: tuple[str, ...]
    generic: tuple[str, ...]
    ignore: tuple[str, ...]
    any_block: tuple[str, ...]

    @cached_property
    def colours(self) -> dict[str, str]:
        return dict(self.colour_words)

    @cached_property
    def sizes(self) -> dict[str, str]:
        return dict(self.size_words)


@dataclass(frozen=True)
class Vocabulary:
    """Size words (smallest first) and categories, in the order names are tried; `phrasing`
    None reads goal texts with the shipped default's phrasing."""

    sizes: tuple[str, ...]
    categories: tuple[Category, ...]
    phrasing: Phrasing | None = None

    @cached_property
    def by_name(self) -> dict[str, Category]:
        return {c.name: c for c in self.categories}

    @cached_property
    def appearance(self) -> dict[tuple[str, str], str]:
        """(category, colour) -> palette name seen, for textured entries only."""
        return {(c.name, k): v for c in self.categories for k, v in c.looks}

    def untextured(self) -> Vocabulary:
        """The same words for a world that draws every object in its own colour (no `looks`)."""
        return Vocabulary(self.sizes, tuple(replace(c, looks=()) for c in self.categories), self.phrasing)

    def phrases(self) -> Phrasing:
        """Its own phrasing, else the shipped default's."""
        own = self.phrasing or default_vocabulary().phrasing
        assert own is not None, f"{DEFAULT_FILE} has a phrasing section"
        return own

    @cached_property
    def words(self) -> dict[str, tuple[str, ...]]:
        """Category -> words naming it in a goal text (its name first)."""
        return {c.name: tuple(dict.fromkeys((c.name, *c.words))) for c in self.categories}

    def looks(self, noun: str, colour: str) -> str:
        """The palette name the camera sees for (noun, colour)."""
        return self.appearance.get((noun, colour), colour)

    @classmethod
    def from_yaml(cls, path: str | Path) -> Vocabulary:
        """A validated vocabulary; any mistake is one UserError at the offending file:line:col."""
        from bt_grasp.spec.yaml_pos import decode_text, load_positioned

        display = str(path)
        try:
            text = decode_text(Path(path).read_bytes(), display)
        except OSError as exc:
            raise UserError(f"cannot read: {exc.strerror}", file=display) from None
        return _Reader(display).vocabulary(load_positioned(text, display))

    def to_data(self) -> dict[str, Any]:
        """Plain data that from_yaml reads back to an equal Vocabulary."""
        cats: dict[str, Any] = {}
        for c in self.categories:
            d: dict[str, Any] = {"body": c.body, "shapes": list(c.shapes), "other_shapes": list(c.other_shapes),
                                 "sizes": {s: list(e) for s, e in c.sizes}, "colours": list(c.colours)}
            if c.looks:
                d["looks"] = dict(c.looks)
            if c.words:
                d["words"] = list(c.words)
            if c.block:
                d["block"] = True
            cats[c.name] = d
        out: dict[str, Any] = {"sizes": list(self.sizes), "categories": cats}
        if self.phrasing is not None:
            ph = self.phrasing
            out["phrasing"] = {"colour_words": dict(ph.colour_words), "size_words": dict(ph.size_words),
                               "comparatives": list(ph.comparatives), "generic": list(ph.generic),
                               "ignore": list(ph.ignore), "any_block": list(ph.any_block)}
        return out


@cache
def default_vocabulary() -> Vocabulary:
    """The shipped vocabulary (the benchmark catalogue's words): used when none is given."""
    return Vocabulary.from_yaml(DEFAULT_FILE)


class _Reader:
    """Checks positioned YAML (bt_grasp.spec.yaml_pos) and builds the Vocabulary."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, what: str, node: Any, key: Any = None) -> UserError:
        pos = getattr(node, "pos", None)
        if key is not None and key in getattr(node, "val_pos", {}):
            pos = node.val_pos[key]
        line, col = (pos.line, pos.col) if pos is not None else (1, 1)
        return UserError(what, self.file, line, col)

    def mapping(self, node: Any, where: str, fix: str) -> Any:
        if not isinstance(node, dict):
            raise self.fail(f"{where} is not a mapping ({fix})", node)
        return node

    def words(self, node: Any, key: str, where: str, allowed: tuple[str, ...] | None = None) -> tuple[str, ...]:
        value: Any = node.get(key, [])
        if not isinstance(value, list) or not all(isinstance(w, str) and w.strip() for w in value):
            raise self.fail(f"{where}.{key} must be a list of words (e.g. [{', '.join((allowed or ('word',))[:2])}])",
                            node, key)
        for i, w in enumerate(value):
            if allowed is not None and w not in allowed:
                items = getattr(value, "item_pos", None)  # a PosList (bt_grasp.spec.yaml_pos)
                pos = items[i] if items else node.val_pos[key]
                raise UserError(f"{where}.{key}: unknown {w!r} (one of: {', '.join(allowed)})", self.file,
                                pos.line, pos.col)
        return tuple(value)

    def vocabulary(self, data: Any) -> Vocabulary:
        top = self.mapping(data, "the vocabulary", "expected keys sizes and categories")
        for key in top:
            if key not in ("sizes", "categories", "phrasing"):
                raise UserError(f"unknown key {key!r} (expected sizes, categories, phrasing)", self.file,
                                top.key_pos[key].line, top.key_pos[key].col)
        if "categories" not in top:
            raise self.fail("no categories (add categories: NAME: {body, sizes, colours})", top)
        sizes = self.words(top, "sizes", "vocabulary")
        if not sizes:
            raise self.fail("no size words (add sizes: [small, large], smallest first)", top)
        cats = self.mapping(top["categories"], "categories", "NAME: {body, sizes, colours}")
        if not cats:
            raise self.fail("no categories (add categories: NAME: {body, sizes, colours})", top, "categories")
        phrasing = self.phrasing(top["phrasing"]) if "phrasing" in top else None
        return Vocabulary(sizes, tuple(self.category(str(n), v, sizes) for n, v in cats.items()), phrasing)

    def pairs(self, node: Any, key: str) -> Pairs:
        value = self.mapping(node.get(key, {}) or {}, f"phrasing.{key}", "word: what it means")
        for k, v in value.items():
            if not isinstance(v, str) or not str(k).strip() or not v.strip():
                raise self.fail(f"phrasing.{key}.{k}: expected a word (word: what it means)", value, k)
        return tuple((str(k), str(v)) for k, v in value.items())

    def phrasing(self, node: Any) -> Phrasing:
        """The phrasing section; a missing list is empty (nothing read that way)."""
        ph = self.mapping(node, "phrasing", "keys colour_words, size_words, comparatives, generic, ignore, any_block")
        known = ("colour_words", "size_words", "comparatives", "generic", "ignore", "any_block")
        for key in ph:
            if key not in known:
                raise UserError(f"phrasing: unknown key {key!r} (one of: {', '.join(known)})", self.file,
                                ph.key_pos[key].line, ph.key_pos[key].col)
        return Phrasing(self.pairs(ph, "colour_words"), self.pairs(ph, "size_words"),
                        self.words(ph, "comparatives", "phrasing"), self.words(ph, "generic", "phrasing"),
                        self.words(ph, "ignore", "phrasing"), self.words(ph, "any_block", "phrasing"))

    def category(self, name: str, node: Any, sizes: tuple[str, ...]) -> Category:
        where = f"categories.{name}"
        c = self.mapping(node, where, "keys body, sizes, colours")
        known = ("body", "sizes", "colours", "shapes", "other_shapes", "looks", "words", "block")
        for key in c:
            if key not in known:
                raise UserError(f"{where}: unknown key {key!r} (one of: {', '.join(known)})", self.file,
                                c.key_pos[key].line, c.key_pos[key].col)
        for key in ("body", "sizes", "colours"):
            if key not in c:
                raise self.fail(f"{where}: missing {key} (see docs/perception.md, Vocabulary)", c)
        if c["body"] not in BODIES:
            raise self.fail(f"{where}.body: unknown {c['body']!r} (one of: {', '.join(BODIES)})", c, "body")
        by_size = self.mapping(c["sizes"], f"{where}.sizes", "size word: [x, y, z] in metres")
        entries: list[tuple[str, Extents]] = []
        for s, e in by_size.items():
            if s not in sizes:
                pos = by_size.key_pos[s]
                raise UserError(f"{where}.sizes: {s!r} is no size word (one of: {', '.join(sizes)})", self.file,
                                pos.line, pos.col)
            ok = isinstance(e, list) and len(e) == 3 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x < 2 for x in e)
            if not ok:
                raise self.fail(f"{where}.sizes.{s}: expected [x, y, z] extents in metres, each in (0, 2)",
                                by_size, s)
            entries.append((str(s), (float(e[0]), float(e[1]), float(e[2]))))
        if not entries:
            raise self.fail(f"{where}.sizes: empty (give at least one size word: [x, y, z])", c, "sizes")
        colours = self.words(c, "colours", where)
        if not colours:
            raise self.fail(f"{where}.colours: empty (list the colour words it comes in)", c, "colours")
        looks = self.mapping(c.get("looks", {}) or {}, f"{where}.looks", "colour: palette name seen")
        for k, v in looks.items():
            if k not in colours or v not in PALETTE:
                raise self.fail(f"{where}.looks: {k!r}: {v!r} must map one of its colours to a palette name "
                                f"({', '.join(PALETTE)})", looks, k)
        unseen = [k for k in colours if k not in PALETTE and k not in looks]
        if unseen:
            raise self.fail(f"{where}.colours: {unseen[0]!r} is no palette colour, so it is never seen "
                            f"(add looks: {{{unseen[0]}: PALETTE_NAME}}, one of {', '.join(PALETTE)})", c, "colours")
        block = c.get("block", False)
        if not isinstance(block, bool):
            raise self.fail(f"{where}.block must be true or false", c, "block")
        return Category(name, str(c["body"]), tuple(entries), colours,
                        self.words(c, "shapes", where, SHAPE_CLASSES),
                        self.words(c, "other_shapes", where, SHAPE_CLASSES),
                        tuple((str(k), str(v)) for k, v in looks.items()),
                        self.words(c, "words", where), block)
