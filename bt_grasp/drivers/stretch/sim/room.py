"""The household room's layout: its bounds, the receptacles (with their access sides) and the
obstacles, and how a task places an object; shared by the world that builds the room, the driver
that navigates it and the scenarios that fill it."""

from __future__ import annotations

from dataclasses import dataclass

from bt_grasp.drivers.stretch.sim.scene import TABLE_HEIGHT
from bt_grasp.mobile.nav import Rect, standoff_candidates

ROOM = (-1.0, 4.0, -2.5, 2.5)  # xmin, xmax, ymin, ymax
DRAWER_TRAVEL_M = 0.25


@dataclass(frozen=True)
class Receptacle:
    """A piece of furniture objects rest on. `front` is the access side objects are placed for."""

    name: str
    rect: Rect
    height: float
    sides: tuple[str, ...]
    colour: tuple[float, float, float, float]
    articulated: str | None = None  # name of its drawer, when it has one

    @property
    def front(self) -> str:
        return self.sides[0]

    def standoff(self) -> tuple[float, float, float]:
        return standoff_candidates(self.rect, (self.front,))[self.front]


RECEPTACLES: tuple[Receptacle, ...] = (
    Receptacle("large table", Rect(1.5, -1.95, 1.2, 0.6), TABLE_HEIGHT, ("+y",), (0.72, 0.62, 0.48, 1)),
    Receptacle("small table", Rect(1.5, 1.95, 0.6, 0.5), TABLE_HEIGHT, ("-y",), (0.55, 0.40, 0.25, 1)),
    Receptacle("cabinet", Rect(3.5, 0.0, 0.5, 0.8), TABLE_HEIGHT, ("-x",), (0.85, 0.85, 0.80, 1),
               articulated="cabinet drawer"),
)
OBSTACLES: tuple[tuple[str, Rect, float], ...] = (("sofa", Rect(1.5, 0.0, 0.6, 1.0), 0.40),)


@dataclass
class Placement:
    """One object of a task: catalogue name, receptacle, and optionally a slot (standoff base
    frame x, y in metres) — scenarios pin slots so spatial words have a known answer."""

    name: str
    receptacle: str
    slot: tuple[float, float] | None = None
