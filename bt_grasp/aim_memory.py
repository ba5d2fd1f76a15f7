"""What a run learns when a grasp held a neighbour instead of the target it aimed at.

A wrong hold is known only from perception: the semantic check after the grasp (the target's
surface has not moved: it still lies where it was located, so the fingers hold something else),
never from the simulator's ground truth. Each one is remembered in the run's memory
(`RunMemory.wrong_holds`) with the target as perception saw it (its name and where its points
lay) and the grasp that produced it (grasp point, closing direction, approach). The grasp leaf
then plans the same visible target again without grasps like a failed one (another grasp point,
closing direction or approach; the neighbour taken is in the basket by then, so the new plan's
fingers are clear of it), and after `WRONG_HOLDS_BEFORE_PUSH` wrong holds on it answers
`infeasible`, which trees route to a push that frees the target (clutter.yaml: grasp_or_push)
instead of spending the action budget on more neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bt_grasp.watchdog.semantic import centre

# The same visible target: located within this of where a wrong hold's target lay (as the
# locate leaf's track follows a renamed target within 4 cm). A push moves it farther.
SAME_TARGET_M = 0.04
# A grasp like a failed one: the same approach, its grasp point within 2 cm and its closing
# direction within 30 degrees (a parallel gripper's yaw is modulo 180).
SAME_POINT_M = 0.02
SAME_YAW_DEG = 30.0
TOP_DOWN_DEG = 5.0  # an approach within this of straight down is top-down
WRONG_HOLDS_BEFORE_PUSH = 2


@dataclass(frozen=True)
class AimedGrasp:
    """A grasp as executed on a located target: what the planner aimed at and how."""

    role: str  # the blackboard key the grasp's target came from ("target", "hider", ...)
    target: str  # the located target's name, as perception saw it
    target_at: tuple[float, float, float]  # the median of its points (base frame, metres)
    position: tuple[float, float, float]  # the grasp point
    yaw_deg: float  # the closing direction's heading, in [0, 180)
    approach: str  # "top_down" | "tilted"


def target_centre(located: Any) -> np.ndarray | None:
    """Where a located target's finite points lie (the semantic check's median, base frame);
    None without points."""
    pts = np.asarray(getattr(located, "points_base", np.zeros((0, 3))), float).reshape(-1, 3)
    return centre(pts[np.isfinite(pts).all(axis=1)])


def grasp_shape(pose: Any) -> tuple[float, str]:
    """(yaw of the closing direction in degrees mod 180, approach family) from the pose's
    orientation: its frame's x axis closes, its z axis approaches."""
    from scipy.spatial.transform import Rotation  # half a second to import: only grasps that ran need it

    R = Rotation.from_quat(np.asarray(pose.orientation, float)).as_matrix()
    yaw = float(np.degrees(np.arctan2(R[1, 0], R[0, 0])) % 180.0)
    down = float(np.degrees(np.arccos(np.clip(-R[2, 2], -1.0, 1.0))))
    return yaw, "top_down" if down <= TOP_DOWN_DEG else "tilted"


def aimed_grasp(role: str, located: Any, pose: Any) -> AimedGrasp | None:
    """The record of a grasp about to run on `located`, read from blackboard key `role` (None
    when the target has no points)."""
    at = target_centre(located)
    if at is None:
        return None
    yaw, approach = grasp_shape(pose)
    return AimedGrasp(role, str(getattr(located, "name", "")), tuple(float(x) for x in at),  # type: ignore[arg-type]
                      tuple(float(x) for x in np.asarray(pose.position, float)[:3]),  # type: ignore[arg-type]
                      round(yaw, 2), approach)


def note_wrong_hold(memory: Any) -> AimedGrasp | None:
    """The last grasp held a neighbour (perception says the target never left): remember it once."""
    last = memory.last_grasp
    memory.last_grasp = None
    if last is not None:
        memory.wrong_holds.append(last)
    return last


def wrong_holds_on(wrong_holds: Sequence[AimedGrasp], role: str, located: Any) -> list[AimedGrasp]:
    """The wrong holds on the same visible target: read from the same key (an object the search
    takes away where the target lay is not the target) and lying where `located` lies now."""
    at = target_centre(located)
    if at is None:
        return []
    return [w for w in wrong_holds if w.role == role
            and float(np.linalg.norm(np.asarray(w.target_at[:2]) - at[:2])) <= SAME_TARGET_M]


def like(pose: Any, wrong: AimedGrasp) -> bool:
    """Is `pose` a grasp like the one that held a neighbour (same approach, point and direction)?"""
    yaw, approach = grasp_shape(pose)
    turn = abs(yaw - wrong.yaw_deg) % 180.0
    near = float(np.linalg.norm(np.asarray(pose.position, float)[:3] - np.asarray(wrong.position)))
    return approach == wrong.approach and near <= SAME_POINT_M and min(turn, 180.0 - turn) <= SAME_YAW_DEG
