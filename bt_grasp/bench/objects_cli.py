"""`bt-grasp objects`: what the simulated worlds can place, by category, colour and size.

Why: a goal names an object ("the red mug"); in simulation the scene is built from these, so a
user needs to know which words can name something that is there (anything else is "not found").
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .objects import ObjectSpec


def add_objects_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("objects", help="list the objects the simulated worlds can place",
                              description="The objects the simulated arm (PyBullet, MuJoCo) and the simulated "
                                          "Stretch can place, by category with their colours and sizes.")
    p.add_argument("--world", choices=("arm", "stretch"), default="arm",
                   help="arm: the UR5e scenes (default); stretch: the simulated Stretch's rooms")
    p.add_argument("--json", action="store_true", help="one JSON document: category -> sizes, colours, names")
    p.set_defaults(func=cmd_objects)


def placeable(world: str) -> list[ObjectSpec]:
    """The objects a world's scene generator draws from."""
    if world == "stretch":
        from bt_grasp.drivers.stretch.sim.scene import object_pool

        return object_pool()
    from bt_grasp.drivers.pybullet_arm import scene

    return [o for o in scene.object_catalogue() if scene.fits_gripper(o)]


def by_category(objects: list[ObjectSpec]) -> dict[str, dict[str, Any]]:
    """category -> {sizes, colours, names}, in catalogue order."""
    out: dict[str, dict[str, Any]] = {}
    for o in objects:
        entry = out.setdefault(o.category, {"sizes": [], "colours": [], "names": []})
        for key, word in (("sizes", o.size), ("colours", o.colour)):
            if word not in entry[key]:
                entry[key].append(word)
        entry["names"].append(o.name)
    return out


def cmd_objects(args: argparse.Namespace) -> int:
    table = by_category(placeable(args.world))
    if args.json:
        print(json.dumps(table, indent=1))
        return 0
    total = sum(len(e["names"]) for e in table.values())
    print(f"{total} objects in {len(table)} categories: what the simulated {args.world} scenes are built from.")
    if args.world == "arm":
        print("A goal's words choose the target among them (\"the mug\": one of the mugs, by the seed; "
              "\"the small red box\": that one); words that fit none build a scene without it.")
    width = max(len(c) for c in table)
    for cat, e in table.items():
        print(f"  {cat:<{width}}  sizes: {', '.join(e['sizes']):<21}  colours: {', '.join(e['colours'])}")
    return 0
