"""Semantic check after a physical SUCCESS: did we pick up the *target*?

Re-perceives the scene while the object is held after the micro-lift. If the target is still
lying where it was (same place, not raised), the fingers hold something else: veto.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RAISED_M = 0.006  # the micro-lift raises a held target by 10-20 mm
SAME_PLACE_M = 0.03


class TargetStillThere:
    """Veto when the located target is still at its place on the table after the grasp."""

    def __init__(self, target_key: str = "target", text_key: str = "target.query") -> None:
        self.target_key = target_key
        self.text_key = text_key

    def __call__(self, ctx: Any) -> tuple[bool, str]:
        before = ctx.blackboard.get(self.target_key)
        text = ctx.blackboard.get(self.text_key)
        if before is None or not text or not len(getattr(before, "points_base", [])):
            return True, "nothing to compare (no located target)"
        obs = ctx.driver.observe()
        after = ctx.perceiver.locate(obs, str(text), ctx.perceiver.survey(obs))
        if after is None or not len(after.points_base):
            return True, "target no longer visible at its place"
        p0 = np.median(np.asarray(before.points_base), axis=0)
        p1 = np.median(np.asarray(after.points_base), axis=0)
        moved = float(np.linalg.norm(p1[:2] - p0[:2]))
        raised = float(p1[2] - p0[2])
        if raised >= RAISED_M or moved > SAME_PLACE_M:
            return True, f"target raised {raised * 1000:.0f} mm, moved {moved * 1000:.0f} mm"
        return False, (f"target still on the table (raised {raised * 1000:.0f} mm, "
                       f"moved {moved * 1000:.0f} mm): the gripper holds another object")
