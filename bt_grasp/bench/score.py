"""Scoring one benchmark episode from simulator ground truth (see docs/benchmark.md).

The tree only ever sees perception; the held object, basket contents, object poses and the
instance ids of located masks are read here, after the fact, through bt_grasp.bench.instrument.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.bench.aim import aim_counts
from bt_grasp.bench.metrics import taxonomy

DISPLACED_M = 0.02  # a non-target object counts as displaced when it moved more than this
# The target left the table when it ends this far below where it rested after the reset: more
# than any pile is tall, and there is no floor, so a body off the table keeps falling.
LEFT_TABLE_DROP_M = 0.25


class SnapshotWorld:
    """The World handed to run_episode: after reset, remembers every object's pose (for
    'objects displaced') before the tree moves anything. `fixed_scene`: the goal text does not
    choose the scene (an instruction written for the seed's own scene)."""

    def __init__(self, world: Any, before: dict[str, Any], fixed_scene: bool = False) -> None:
        self._world = world
        self._before = before
        proxy = world.driver
        outer = self

        class _ResetSnap:
            def __getattr__(self, name: str) -> Any:
                return getattr(proxy, name)

            def reset(self, *args: Any, **kwargs: Any) -> Any:
                if fixed_scene:  # the instruction was written for the seed's scene: keep it
                    kwargs.pop("target", None)
                obs = proxy.reset(*args, **kwargs)
                outer._snapshot()
                return obs

        self.driver = _ResetSnap()
        self.perceiver = world.perceiver
        self.services = world.services
        self.profile = world.profile

    def _snapshot(self) -> None:
        d = self._world.driver
        for name in d.object_names().values():
            pose = d.object_pose(name)
            if pose is not None:
                self._before[name] = [float(x) for x in pose[0]]

    def close(self) -> None:  # the worker keeps its driver for the next episode
        pass


def score_episode(driver: Any, result: Any, probe: Any, before: dict[str, Any]) -> dict[str, Any]:
    """The per-episode record: outcome, counts and ground-truth scores (see docs/benchmark.md)."""
    import numpy as np

    spec = driver.spec
    target = driver.task()
    names = driver.object_names()
    target_bodies = {b for b, n in names.items() if n == target}
    # Grounding: the first locate of the goal text that returned a mask; success when the body
    # covering most of that mask is the true target (the sim's instance annotation).
    goal_locates = [r for r in probe.locates if r["text"] == target]
    first_mask = next((r for r in goal_locates if r["found"]), None)
    grounded = bool(first_mask is not None and first_mask["body"] in target_bodies)
    # Grasps: executed = the arm moved (not refused as infeasible); success = the sim says held.
    executed = [g for g in probe.grasps if g["executed"]]
    held = [g for g in executed if g["held"]]
    grasp_events = [e for e in result.events if e.primitive == "grasp"]
    judged = [e for e in grasp_events if "duration" in e.metadata]  # an Execution came back
    agree = [(e.watchdog_label == "SUCCESS") == bool(g["held"])
             for e, g in zip(judged, probe.grasps, strict=False)
             if e.watchdog_label is not None and g["executed"]]
    # Each driver grasp call: the leaf that asked, the object its plan aimed at (the body under
    # the planned object's mask, bench/aim.py), the body nearest the grasp point, what was held,
    # the label and the plan (grasp point, yaw, width).
    attempts = [{"node": e.node, "aimed": names.get(g["aimed_body"]) if g.get("aimed_body") is not None else None,
                 "aimed_as": g.get("aimed_as"), "aimed_purity": g.get("aimed_purity"), "nearest": g["object"],
                 "held": g["held"], "label": e.watchdog_label, "executed": g["executed"],
                 **({"plan": g["plan"]} if "plan" in g else {})}
                for e, g in zip(judged, probe.grasps, strict=False)]
    aim_hit, aim_held = aim_counts(attempts)
    displaced = 0
    for name, p0 in before.items():
        if name == target:
            continue
        pose = driver.object_pose(name)
        if pose is not None and float(np.linalg.norm(np.asarray(pose[0]) - np.asarray(p0))) > DISPLACED_M:
            displaced += 1
    final = driver.object_pose(target) if target else None
    left_table = bool(final is not None and target in before
                      and float(final[0][2]) < before[target][2] - LEFT_TABLE_DROP_M)
    counters = result.counters
    retries = sum(max(0, int(v) - 1) for v in counters.get("retry_starts", {}).values())
    prim = counters.get("primitive_calls", {})
    rec: dict[str, Any] = {
        "target": target,
        "visibility": None if spec is None else round(float(spec.visibility), 4),
        "high_clutter": None if spec is None else bool(spec.high_clutter),
        "decision": result.decision.value, "reason": result.reason,
        "ticks": result.ticks, "sim_clock": round(result.clock, 3),
        "actions": result.actions, "grasp_calls": int(prim.get("grasp", 0)),
        "pushes": int(prim.get("push", 0)), "retries": retries,
        "perception_calls": int(counters.get("perception_calls", 0)),
        "goal_locates": len(goal_locates), "grounded": grounded,
        "located_name": None if first_mask is None else first_mask["name"],
        "mask_purity": None if first_mask is None else round(first_mask["purity"], 3),
        "grasps_executed": len(executed), "grasps_held": len(held),
        "grasps_held_target": sum(1 for g in held if g["held"] == target),
        "watchdog_judged": len(agree), "watchdog_agree": int(sum(agree)),
        "displaced": displaced, "target_left_table": left_table,
        # objects the simulator threw (a defect of the physics, not of the method): launches.py
        "launches": driver.launches(),
        "grip_jumps": driver.grip_jumps(),  # held objects jumped within the grip: not launches
        "task_success": bool(target and driver.object_in_basket(target)),
        "grounded_ever": any(r["found"] and r["body"] in target_bodies for r in goal_locates),
        "attempts": attempts,
        "aim_hit": aim_hit, "aim_held": aim_held,  # held what was aimed at / held anything (aim.py)
    }
    rec["taxonomy"] = taxonomy(rec)
    return rec
