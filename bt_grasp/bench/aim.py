"""Aim: which object each grasp was planned on, and whether that is the object it held.

A grasp pose comes from `plan_grasps(obs, located)`: the planner's answer for one perceived
object (the located target, or an occluder or hider the tree chose). The benchmark wraps that
service, remembers each plan with the body under its object's mask (the simulator's instance
ids: scoring only, the tree never sees it), and when the driver is asked to grasp, finds the plan
the pose came from. So "aimed at" is what the tree targeted, not the body nearest the fingers.

Aim accuracy = executed grasps that held the object aimed at / executed grasps that held
anything (with a known aim). A wrong hold is a neighbour closed on instead of the aim.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

PLANS_KEPT = 16  # recent plans searched for a pose (a tree plans a few objects per grasp)


def mask_body(mask: Any, instance: np.ndarray) -> tuple[int | None, float]:
    """(body covering most of the mask, that body's share of the mask) from the sim's instance ids."""
    m = np.asarray(mask, bool)
    ids = instance[m]
    ids = ids[ids >= 0]
    if ids.size == 0:
        return None, 0.0
    values, counts = np.unique(ids, return_counts=True)
    k = int(np.argmax(counts))
    return int(values[k]), float(counts[k] / max(1, int(m.sum())))


def recording_plans(plan_grasps: Callable[..., Any], plans: list[dict[str, Any]]) -> Callable[..., Any]:
    """`plan_grasps` that also appends {poses, body, purity, as} to `plans` for every call."""

    def planned(obs: Any, located: Any, *args: Any, **kwargs: Any) -> Any:
        poses = plan_grasps(obs, located, *args, **kwargs)
        instance = (getattr(obs, "annotations", None) or {}).get("instance")
        mask = getattr(located, "mask", None)
        body, purity = (mask_body(mask, np.asarray(instance)) if instance is not None and mask is not None
                        else (None, 0.0))
        plans.append({"poses": list(poses), "body": body, "purity": purity,
                      "as": getattr(located, "name", None)})
        del plans[:-PLANS_KEPT]
        return poses

    return planned


def _same_pose(a: Any, b: Any) -> bool:
    if a is b:
        return True
    return bool(np.allclose(np.asarray(a.position, float), np.asarray(b.position, float), atol=1e-6)
                and np.allclose(np.asarray(a.orientation, float), np.asarray(b.orientation, float), atol=1e-6)
                and math.isclose(float(a.width), float(b.width), abs_tol=1e-6))


def yaw_deg(orientation: Any) -> float:
    """Heading of the gripper's closing axis (its x axis) in the base frame, degrees."""
    x, y, z, w = (float(v) for v in orientation)
    # first column of the rotation matrix of the quaternion (x, y, z, w)
    cx, cy = 1 - 2 * (y * y + z * z), 2 * (x * y + w * z)
    return math.degrees(math.atan2(cy, cx))


def aim_of(plans: list[dict[str, Any]], pose: Any) -> dict[str, Any]:
    """{aimed_body, aimed_as, aimed_purity, plan} of the newest plan that proposed `pose`;
    aimed_body None when no recorded plan did (a pose made outside the planner)."""
    if pose is None or not hasattr(pose, "position"):
        return {"aimed_body": None, "aimed_as": None}
    summary = {"at": [round(float(v), 4) for v in np.asarray(pose.position, float)],
               "yaw": round(yaw_deg(pose.orientation), 1), "width": round(float(pose.width), 4)}
    for plan in reversed(plans):
        for rank, p in enumerate(plan["poses"]):
            if _same_pose(p, pose):
                return {"aimed_body": plan["body"], "aimed_as": plan["as"],
                        "aimed_purity": round(float(plan["purity"]), 3),
                        "plan": {**summary, "rank": rank, "candidates": len(plan["poses"])}}
    return {"aimed_body": None, "aimed_as": None, "plan": summary}


def aim_counts(attempts: Iterable[dict[str, Any]]) -> tuple[int, int]:
    """(held the object aimed at, held anything) over executed grasps whose aim is known."""
    hit = held = 0
    for a in attempts:
        if not a.get("executed") or a.get("aimed") is None or not a.get("held"):
            continue
        held += 1
        hit += a["held"] == a["aimed"]
    return hit, held


def neighbour_grasps(attempts: Iterable[dict[str, Any]], target: str | None) -> list[dict[str, Any]]:
    """Executed grasps aimed at `target` that held another object (a neighbour)."""
    return [a for a in attempts if a.get("executed") and target is not None and a.get("aimed") == target
            and a.get("held") and a["held"] != target]
