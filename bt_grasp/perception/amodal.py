"""How large a partly hidden segment's object could be: its visible footprint plus what nearer
objects could hide.

Why: one view sees an occluded object's visible part only. Judging that part by its own extents
names a bar whose end shows beside a box "small box" (its visible patch is box-sized), and a
uniform allowance for occlusion cannot tell a patch with room to continue out of sight from one
whose far sides are bare table. Here the room is measured: from each side of the visible
footprint, along its own axes, the object may continue under whatever is at least as high as its
top (an occluder covering it), and must stop where the table shows.

Simplified: the room is measured along the visible footprint's two axes only (an object hidden
at a slant gets the room of the nearer axis), on a 3 mm grid of the points' base-frame xy (an
overhead view: what hides a point lies above it).
"""

from __future__ import annotations

import numpy as np

from .geometry import finite_rows

CELL_M = 0.003  # grid cell of the room map
MAX_ROOM_M = 0.16  # no catalogue object is longer than 15 cm
COVER_SHARE = 0.5  # a grid row across the strip continues the object when this share can hide it
COVER_BELOW_TOP_M = 0.006  # a cover may be this much lower than the segment's top (its rim, noise)
WINDOW_PX = 120  # image margin searched for covers around the segment (about 16 cm at 0.8 m)


def footprint_room(mask: np.ndarray, P: np.ndarray, heights: np.ndarray, top: float,
                   centre: np.ndarray, yaw: float) -> tuple[float, float]:
    """(room along yaw, room across): the longest extents the object's footprint could have,
    given the visible points (mask) and what around them could hide more of it."""
    rows, cols = np.nonzero(mask.any(axis=1))[0], np.nonzero(mask.any(axis=0))[0]
    H, W = mask.shape
    win = (slice(max(rows[0] - WINDOW_PX, 0), min(rows[-1] + WINDOW_PX + 1, H)),
           slice(max(cols[0] - WINDOW_PX, 0), min(cols[-1] + WINDOW_PX + 1, W)))
    m, p, h = mask[win], P[win], heights[win]
    ok = np.isfinite(h) & finite_rows(p)
    cover = ok & ~m & (h > top - COVER_BELOW_TOP_M)
    axes = np.array([[np.cos(yaw), np.sin(yaw)], [-np.sin(yaw), np.cos(yaw)]])
    seen = (p[m & ok][:, :2] - centre) @ axes.T
    hid = (p[cover][:, :2] - centre) @ axes.T
    if len(seen) < 3:
        return 0.0, 0.0
    lo, hi = seen.min(axis=0), seen.max(axis=0)
    span = np.maximum(hi - lo, CELL_M)
    reach = lo - MAX_ROOM_M
    n = np.ceil((span + 2 * MAX_ROOM_M) / CELL_M).astype(int) + 1
    grid = np.zeros((n[0], n[1]), dtype=bool)
    for pts in (seen, hid):
        idx = np.floor((pts - reach) / CELL_M).astype(int)
        keep = (idx[:, 0] >= 0) & (idx[:, 1] >= 0) & (idx[:, 0] < n[0]) & (idx[:, 1] < n[1])
        grid[idx[keep, 0], idx[keep, 1]] = True
    first = np.floor((lo - reach) / CELL_M).astype(int)
    last = np.floor((hi - reach) / CELL_M).astype(int)
    room = []
    for ax in (0, 1):
        strip = grid[:, first[1]:last[1] + 1] if ax == 0 else grid[first[0]:last[0] + 1, :].T
        share = strip.mean(axis=1)  # per row along this axis: how much of the strip could hide it
        extra = _run(share[last[ax] + 1:]) + _run(share[:first[ax]][::-1])
        room.append(float(span[ax] + extra * CELL_M))
    return room[0], room[1]


def _run(share: np.ndarray) -> int:
    """Cells outward from the visible edge while the strip stays hidden (one missing row allowed:
    the seam between two segments)."""
    gaps, n = 0, 0
    for k, s in enumerate(share):
        if s >= COVER_SHARE:
            gaps, n = 0, k + 1
        else:
            gaps += 1
            if gaps > 1:
                break
    return n
