"""Semantic check after a physical SUCCESS: did we pick up the *target*?

Re-perceives the scene while the object is held (after the micro-lift, or higher after the
lift) and looks at the place where the target was located: the surface under the target's
mask, in a fresh depth frame of the same camera. Three answers, because "I could not see" must
never read as "yes":
- ok: that surface rose (the held target was raised) or fell to what lay beneath (it left);
- mismatch: that surface has not moved (at its median and over most of it): the target still lies
  there, the fingers hold another object;
- unknown: no evidence (the target was never located, no depth there, or a change too small to
  tell).
Without the frame the target was located in, the text is located again and compared instead.
Simplified: the robot is not drawn in the simulated camera's image; on a real robot the gripper
above the target hides part of the mask (fewer pixels, same test).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

RAISED_M = 0.006  # the micro-lift raises a held target by 10-20 mm
STILL_M = 0.003  # a surface that moved less than this has not moved
STILL_SHARE = 0.8  # "still lies there" needs this share of its surface unmoved
SAME_PLACE_M = 0.03
MIN_PIXELS = 10

Verdict = Literal["ok", "mismatch", "unknown"]
VERDICTS: tuple[str, ...] = ("ok", "mismatch", "unknown")


def centre(points: Any) -> np.ndarray | None:
    """Median of an Nx3 point set (robust to a few stray pixels); None when empty."""
    pts = np.asarray(points, dtype=float).reshape(-1, 3) if points is not None else np.zeros((0, 3))
    return np.median(pts, axis=0) if len(pts) else None


def surface_heights(before_obs: Any, after_obs: Any, mask: np.ndarray) -> np.ndarray | None:
    """Height changes (metres, base z) of the surface seen through `mask` between two frames of
    the same camera, one per pixel with depth in both; None when too few have it."""
    from bt_grasp.perception.geometry import frame_pointmap

    m = np.asarray(mask, bool)
    if before_obs is None or after_obs is None or m.shape != np.asarray(after_obs.depth).shape:
        return None
    z0 = frame_pointmap(before_obs)[..., 2][m]
    z1 = frame_pointmap(after_obs)[..., 2][m]
    ok = np.isfinite(z0) & np.isfinite(z1)
    if int(ok.sum()) < MIN_PIXELS:
        return None
    return z1[ok] - z0[ok]


def surface_change(before_obs: Any, after_obs: Any, mask: np.ndarray) -> float | None:
    """Median height change (metres, base z) of the surface seen through `mask` between two
    frames of the same camera; None when too few pixels have depth in both."""
    dz = surface_heights(before_obs, after_obs, mask)
    return None if dz is None else float(np.median(dz))


class TargetStillThere:
    """Has the target located before the grasp left its place? Answered from the robot's own
    frames only (`perceptual`): its mismatches may teach the grasp planner (aim_memory.py)."""

    perceptual = True

    def __init__(self, target_key: str = "target", text_key: str = "target.query",
                 frame_key: str = "target.frame") -> None:
        self.target_key = target_key
        self.text_key = text_key
        self.frame_key = frame_key

    def check(self, ctx: Any) -> tuple[Verdict, str]:
        """(verdict, reason) from the robot's own observation."""
        before = ctx.blackboard.get(self.target_key)
        if before is None or not len(getattr(before, "points_base", [])):
            return "unknown", "nothing to compare (the target was never located)"
        obs = ctx.driver.observe()
        frame = ctx.blackboard.get(self.frame_key)
        if frame is not None and getattr(before, "mask", None) is not None:
            heights = surface_heights(frame, obs, before.mask)
            if heights is None:
                return "unknown", "no depth where the target was"
            dz = float(np.median(heights))
            if dz >= RAISED_M:
                return "ok", f"the target's surface rose {dz * 1000:.0f} mm: it is held"
            if dz <= -RAISED_M:
                return "ok", f"the target's surface fell {-dz * 1000:.0f} mm: it left its place"
            still = float(np.mean(np.abs(heights) < STILL_M))
            if abs(dz) < STILL_M and still < STILL_SHARE:
                # a held target that tilts or slides in the grip leaves its median where it was
                return "unknown", (f"the target's surface moved {dz * 1000:.1f} mm at the median, but "
                                   f"only {still:.0%} of it is still: it was disturbed")
            if abs(dz) < STILL_M:
                return "mismatch", (f"the target's surface moved {dz * 1000:.1f} mm: it still lies "
                                    "there, the gripper holds another object")
            return "unknown", f"the target's surface moved {dz * 1000:.1f} mm: too little to tell"
        return self._relocate(ctx, before, obs)

    def _relocate(self, ctx: Any, before: Any, obs: Any) -> tuple[Verdict, str]:
        text = ctx.blackboard.get(self.text_key)
        if not text:
            return "unknown", "no target text to look for"
        after = ctx.perceiver.locate(obs, str(text), ctx.perceiver.survey(obs))
        p0 = centre(before.points_base)
        p1 = centre(getattr(after, "points_base", None)) if after is not None else None
        if p0 is None or p1 is None:
            return "unknown", "the target is not visible after the grasp"
        moved = float(np.linalg.norm(p1[:2] - p0[:2]))
        raised = float(p1[2] - p0[2])
        if raised >= RAISED_M or moved > SAME_PLACE_M:
            return "ok", f"target raised {raised * 1000:.0f} mm, moved {moved * 1000:.0f} mm"
        return "mismatch", (f"target still on the table (raised {raised * 1000:.0f} mm, "
                            f"moved {moved * 1000:.0f} mm): the gripper holds another object")

    def __call__(self, ctx: Any) -> tuple[Verdict, str]:
        return self.check(ctx)
