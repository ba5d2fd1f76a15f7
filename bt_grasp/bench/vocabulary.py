"""The catalogue as a perception Vocabulary: its categories, sizes and colours, as the
geometric perceiver needs them (bt_grasp.perception.lexicon).

    python -m bt_grasp.bench.vocabulary > new.yaml && mv new.yaml bt_grasp/perception/catalogue_vocabulary.yaml

regenerates the perceiver's shipped default (a test checks the two are equal). The words people
use for the objects (each category's `words`, the `phrasing`) are not the catalogue's to say:
they are data, kept from the shipped file.
"""

from __future__ import annotations

import sys

import yaml

from bt_grasp.perception.lexicon import Category, Vocabulary, default_vocabulary

from .catalogue import catalogue, extents

SIZES = ("small", "medium", "large")
# How each catalogue mesh is built (lexicon.BODIES); procedural shapes are their own body.
MESH_BODY = {"jenga block": "block-mesh", "domino": "block-mesh", "lego brick": "studded-mesh",
             "duck": "organic-mesh", "teddy bear": "organic-mesh", "mug": "mesh"}
# Perceived shape classes: (typical pose, other rest poses). Dropped objects rest in any pose
# (a can on its side looks like a box from above), so other poses still count, just less.
SHAPES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "box": (("box",), ("bar",)), "cube": (("box",), ()),
    "can": (("cylinder",), ("box", "bar", "disc")), "ball": (("ball",), ("cylinder", "irregular")),
    "bar": (("bar",), ("box",)), "puck": (("disc", "cylinder"), ("box", "bar")),
    "duck": (("irregular", "ball"), ("box", "cylinder")), "mug": (("cylinder", "irregular"), ("box", "ball")),
    "lego brick": (("box",), ("irregular", "bar")), "teddy bear": (("irregular",), ("box", "ball", "cylinder")),
    "jenga block": (("bar", "box"), ()), "domino": (("box", "bar", "disc"), ()),
}
# How textured entries look to the camera. A mesh's own texture tints its catalogue colour (the
# duck's yellow texture turns a blue duck green), so the palette name seen is not the word.
# Measured on the calibration scenes (seed 0, both lightings, every such object seen: 100 %
# consistent, except purple ducks under hard lighting, 7 of 11). Others look like their word.
LOOKS: dict[str, dict[str, str]] = {
    "duck": {"blue": "green", "pink": "orange", "purple": "brown", "white": "yellow"},
    "jenga block": {"blue": "black"},
}
BLOCKS = ("box", "cube", "lego brick", "jenga block")  # what "a block" may be


def catalogue_vocabulary() -> Vocabulary:
    """Every catalogue category, in catalogue order, with its sizes' extents and its colours."""
    sizes: dict[str, dict[str, tuple[float, float, float]]] = {}
    colours: dict[str, dict[str, None]] = {}
    body: dict[str, str] = {}
    for s in catalogue():
        sizes.setdefault(s.category, {}).setdefault(s.size, extents(s))
        colours.setdefault(s.category, {})[s.colour] = None
        body[s.category] = MESH_BODY[s.category] if s.shape == "mesh" else s.shape
    shipped = default_vocabulary()
    cats = []
    for name, by_size in sizes.items():
        ordered = tuple((z, by_size[z]) for z in SIZES if z in by_size)
        shapes, other = SHAPES[name]
        looks = tuple((c, v) for c, v in LOOKS.get(name, {}).items() if c in colours[name])
        words = shipped.by_name[name].words if name in shipped.by_name else ()
        cats.append(Category(name, body[name], ordered, tuple(colours[name]), shapes, other, looks, words,
                             block=name in BLOCKS))
    return Vocabulary(SIZES, tuple(cats), shipped.phrasing)


def default_vocabulary_header() -> list[str]:
    """The shipped file's leading comment lines (kept when it is regenerated)."""
    from bt_grasp.perception.lexicon import DEFAULT_FILE

    lines = DEFAULT_FILE.read_text().splitlines(keepends=True)
    return [line for line in lines[:next(i for i, x in enumerate(lines) if not x.startswith("#"))]]


if __name__ == "__main__":
    sys.stdout.write("".join(default_vocabulary_header()))
    sys.stdout.write(yaml.safe_dump(catalogue_vocabulary().to_data(), sort_keys=False, default_flow_style=None,
                                    width=110))
