"""The description of one graspable object, shared by the catalogue, scenes and perception."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Shape = Literal["box", "cylinder", "sphere", "mesh"]


@dataclass(frozen=True)
class ObjectSpec:
    """An object with an appearance-grounded name ("small blue box").

    dims: box -> (x, y, z) full extents; cylinder -> (radius, height); sphere -> (radius,);
    mesh -> (scale,). rgba in 0..1. mass in kg; friction is Bullet's lateral friction.
    """

    name: str
    category: str
    colour: str
    size: Literal["small", "medium", "large"]
    shape: Shape
    dims: tuple[float, ...]
    rgba: tuple[float, float, float, float]
    mass: float
    friction: float = 0.8
    mesh: str | None = None  # path relative to pybullet_data, for shape == "mesh"
    tags: tuple[str, ...] = field(default_factory=tuple)
