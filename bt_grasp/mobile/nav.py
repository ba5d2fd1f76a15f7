"""Floor occupancy grid, A* and standoff-pose selection for `nav_to(receptacle)`.

Pure geometry (no simulator): the household scene fills the grid from its furniture footprints,
the planner finds a collision-free standoff pose with line of sight to the receptacle surface and
a path to it. Kept separate from the scene so a real map (e.g. a Stretch's saved occupancy map)
can use the same planner.

Conventions: world frame x/y in metres; a pose is (x, y, theta). The Stretch's arm reaches to
its right (base -y), so a standoff faces *along* a receptacle edge with the surface on the
robot's right, `STANDOFF_M` from the edge (the sim driver's reach band).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

STANDOFF_M = 0.45  # robot centre to receptacle edge (matches the arm's reach band, base y -0.45)
ROBOT_RADIUS_M = 0.25  # footprint used to inflate obstacles
CELL_M = 0.05


@dataclass
class Rect:
    """Axis-aligned floor footprint: centre and full size."""

    cx: float
    cy: float
    sx: float
    sy: float

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        return abs(x - self.cx) <= self.sx / 2 - margin and abs(y - self.cy) <= self.sy / 2 - margin


@dataclass
class OccupancyGrid:
    """Boolean floor grid: True = occupied. `origin` is the world xy of cell (0, 0)'s corner."""

    origin: tuple[float, float]
    shape: tuple[int, int]  # (nx, ny)
    cell: float = CELL_M
    occ: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))
    labels: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int32))
    names: dict[int, str] = field(default_factory=dict)

    @classmethod
    def room(cls, xmin: float, xmax: float, ymin: float, ymax: float, cell: float = CELL_M) -> OccupancyGrid:
        nx_, ny_ = int(round((xmax - xmin) / cell)), int(round((ymax - ymin) / cell))
        g = cls((xmin, ymin), (nx_, ny_), cell, np.zeros((nx_, ny_), dtype=bool),
                np.zeros((nx_, ny_), dtype=np.int32))
        g.occ[0, :] = g.occ[-1, :] = g.occ[:, 0] = g.occ[:, -1] = True  # walls
        g.labels[g.occ] = -1
        return g

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        return (int(math.floor((x - self.origin[0]) / self.cell)), int(math.floor((y - self.origin[1]) / self.cell)))

    def centre_of(self, i: int, j: int) -> tuple[float, float]:
        return (self.origin[0] + (i + 0.5) * self.cell, self.origin[1] + (j + 0.5) * self.cell)

    def inside(self, i: int, j: int) -> bool:
        return 0 <= i < self.shape[0] and 0 <= j < self.shape[1]

    def add_rect(self, rect: Rect, label: int, name: str) -> None:
        i0, j0 = self.cell_of(rect.cx - rect.sx / 2, rect.cy - rect.sy / 2)
        i1, j1 = self.cell_of(rect.cx + rect.sx / 2, rect.cy + rect.sy / 2)
        i0, j0, i1, j1 = max(i0, 0), max(j0, 0), min(i1, self.shape[0] - 1), min(j1, self.shape[1] - 1)
        self.occ[i0:i1 + 1, j0:j1 + 1] = True
        self.labels[i0:i1 + 1, j0:j1 + 1] = label
        self.names[label] = name

    def inflated(self, radius: float = ROBOT_RADIUS_M) -> np.ndarray:
        """Cells whose centre is within `radius` of an occupied cell (the robot centre may not go there)."""
        from scipy import ndimage

        free_dist = ndimage.distance_transform_edt(~self.occ) * self.cell
        return free_dist < radius


def line_cells(a: tuple[int, int], b: tuple[int, int]) -> list[tuple[int, int]]:
    """Grid cells on the segment a-b (Bresenham)."""
    (x0, y0), (x1, y1) = a, b
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
    err, out = dx + dy, []
    while True:
        out.append((x0, y0))
        if (x0, y0) == (x1, y1):
            return out
        e2 = 2 * err
        if e2 >= dy:
            err += dy
            x0 += sx
        if e2 <= dx:
            err += dx
            y0 += sy


_GRAPHS: dict[tuple[tuple[int, int], bytes], nx.Graph] = {}


def _free_graph(blocked: np.ndarray) -> nx.Graph:
    """8-connected graph of the free cells, cached per blocked mask (the room map is static, and
    building the graph costs far more than searching it)."""
    key = (blocked.shape, np.packbits(blocked).tobytes())
    g = _GRAPHS.get(key)
    if g is None:
        g = nx.grid_2d_graph(*blocked.shape)
        for i in range(blocked.shape[0] - 1):
            for j in range(blocked.shape[1] - 1):
                g.add_edge((i, j), (i + 1, j + 1), weight=math.sqrt(2))
                g.add_edge((i + 1, j), (i, j + 1), weight=math.sqrt(2))
        g.remove_nodes_from([n for n in list(g.nodes) if blocked[n]])
        if len(_GRAPHS) > 8:
            _GRAPHS.clear()
        _GRAPHS[key] = g
    return g


def astar(blocked: np.ndarray, start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]] | None:
    """8-connected A* over free cells (networkx), Euclidean heuristic; None when unreachable.

    The start and goal may sit in the inflation margin (an imprecise stop): they are connected
    to their free neighbours for this search only."""
    g = _free_graph(blocked)
    extra = [c for c in (start, goal) if c not in g]
    if extra:
        g = g.copy()
        for c in extra:
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    n = (c[0] + di, c[1] + dj)
                    if n != c and n in g:
                        g.add_edge(c, n, weight=math.hypot(di, dj))
    try:
        return nx.astar_path(g, start, goal, heuristic=lambda a, b: math.dist(a, b),
                             weight=lambda u, v, d: d.get("weight", 1.0))
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return None


def shortcut(path: list[tuple[int, int]], blocked: np.ndarray) -> list[tuple[int, int]]:
    """Drop waypoints while the straight segment stays free (fewer turn-drive-turn segments)."""
    if len(path) <= 2:
        return list(path)
    out, i = [path[0]], 0
    while i < len(path) - 1:
        j = len(path) - 1
        while j > i + 1 and any(blocked[c] for c in line_cells(path[i], path[j])[1:-1]):
            j -= 1
        out.append(path[j])
        i = j
    return out


@dataclass
class NavPlan:
    """A standoff pose and the world-frame waypoints to it (last one carries the heading)."""

    receptacle: str
    goal: tuple[float, float, float]
    waypoints: list[tuple[float, float]]
    length_m: float
    rejected: dict[str, str] = field(default_factory=dict)  # candidate side -> why not


def standoff_candidates(rect: Rect, sides: tuple[str, ...]) -> dict[str, tuple[float, float, float]]:
    """Standoff poses beside each accessible side, facing along it with the surface on the right."""
    out = {}
    for side in sides:
        if side == "+y":
            out[side] = (rect.cx, rect.cy + rect.sy / 2 + STANDOFF_M, 0.0)
        elif side == "-y":
            out[side] = (rect.cx, rect.cy - rect.sy / 2 - STANDOFF_M, math.pi)
        elif side == "+x":
            out[side] = (rect.cx + rect.sx / 2 + STANDOFF_M, rect.cy, -math.pi / 2)
        elif side == "-x":
            out[side] = (rect.cx - rect.sx / 2 - STANDOFF_M, rect.cy, math.pi / 2)
    return out


def plan_to(grid: OccupancyGrid, start: tuple[float, float], name: str, rect: Rect, label: int,
            sides: tuple[str, ...]) -> NavPlan | None:
    """Shortest collision-free path to a standoff of `rect` that sees its surface centre.

    Line of sight: the floor cells between the standoff and the surface centre hold nothing but
    the receptacle itself (a 2D check: furniture is taller than the head camera's sight line only
    in this simplified sense — said so in the report).
    """
    blocked = grid.inflated()
    s = grid.cell_of(*start)
    best: NavPlan | None = None
    rejected: dict[str, str] = {}
    for side, pose in standoff_candidates(rect, sides).items():
        c = grid.cell_of(pose[0], pose[1])
        if not grid.inside(*c) or blocked[c]:
            rejected[side] = "standoff in collision"
            continue
        sight = line_cells(c, grid.cell_of(rect.cx, rect.cy))
        if any(grid.occ[k] and grid.labels[k] != label for k in sight if grid.inside(*k)):
            rejected[side] = "no line of sight"
            continue
        path = astar(blocked, s, c)
        if path is None:
            rejected[side] = "unreachable"
            continue
        pts = [grid.centre_of(*k) for k in shortcut(path, blocked)]
        pts = [(start[0], start[1])] + pts[1:-1] + [(pose[0], pose[1])]  # exact ends (a 1-cell path too)
        length = sum(math.dist(a, b) for a, b in zip(pts, pts[1:], strict=False))
        if best is None or length < best.length_m:
            best = NavPlan(name, pose, pts, length)
    if best is not None:
        best.rejected = rejected
    return best
