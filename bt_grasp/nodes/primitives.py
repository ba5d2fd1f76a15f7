"""Primitive leaves: grasp, push, lift, place, open_gripper. Each call emits one OutcomeEvent;
grasp and push count toward the episode's action budget (the guard lives in Leaf)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.aim_memory import WRONG_HOLDS_BEFORE_PUSH, aimed_grasp, like, wrong_holds_on
from bt_grasp.drivers.base import Driver, Execution, GraspPose
from bt_grasp.drivers.capabilities import GraspChecker
from bt_grasp.drivers.motion import start_motion
from bt_grasp.nodes.base import Leaf, LeafResult, Pending
from bt_grasp.nodes.declare import (
    CARRY_OUT,
    CHECK_HOLD_DOC,
    GRASP_OUT,
    LABEL_SO_FAR,
    MOTION_OUT,
    PUSH_OUT,
    REASON,
    carry_outcomes,
    key_port,
    leaf_type,
)
from bt_grasp.nodes.watchdog import WatchedGrasp
from bt_grasp.registry import NodeType, Port


def _outcome_of(execution: Execution) -> str:
    """Map a driver fault to the leaf's alphabet. A motion stopped by its deadline is 'done':
    the Watchdog judges its telemetry (a motion stuck at the deadline reads STALL or TIMEOUT)."""
    fault = execution.fault
    if fault is None or fault == "timeout":
        return "done"
    if fault.startswith("infeasible"):
        return "infeasible"
    return "fault"


def _exec_meta(execution: Execution) -> dict[str, Any]:
    tel = execution.telemetry
    meta: dict[str, Any] = {"duration": round(float(execution.duration), 4), "fault": execution.fault,
                            "samples": len(tel)}
    if len(tel):
        meta["final_aperture_m"] = round(float(tel.aperture_m[-1]), 5)
        meta["final_effort"] = round(float(tel.effort[-1]), 4)
    return meta


def check_grasp(driver: Driver, pose: GraspPose, waypoint: Any) -> tuple[bool, str]:
    """Can `driver` execute this grasp candidate? A driver that checks a grasp exactly as it would
    execute it (raised off the table, its pre-grasp and descent, ignoring the object it aims at)
    answers through grasp_feasible; otherwise `waypoint` is checked by feasible()."""
    if isinstance(driver, GraspChecker):
        return driver.grasp_feasible(pose, pose.width)
    return driver.feasible([waypoint])


PUSH_DIRECTIONS = ("left", "right", "up", "down")


class Grasp(WatchedGrasp):
    """Plan ranked 6-DoF grasps on the located object, run the first feasible one. What the run
    learned from wrong holds on this target (bt_grasp/aim_memory.py) shapes the plan: grasps like
    one that held a neighbour are skipped, and after two such holds the answer is `infeasible`."""

    NODE_TYPE = leaf_type("grasp", "primitive", {
        "target": Port("target", "str", default="{target}", doc="located object to grasp"),
        "force": Port("force", "float", default=60.0, minimum=0.0, doc="grip force in newtons"),
        "execution": key_port("execution", "grasp.execution", "where the Execution is written"),
        "outcome": key_port("outcome", "grasp.outcome", "done | infeasible | fault"),
    }, outcomes=GRASP_OUT, counts_as_action=True, outcome_port="outcome",
        doc="Plan a grasp on the located object and execute it (approach, close, settle, micro-lift); "
            "grasps like one that held a neighbour of it are skipped, after two such holds: infeasible.",
        keys=(REASON, *LABEL_SO_FAR), max_ticks=600)
    SUCCESS_OUTCOMES = frozenset({"done"})

    def execute(self) -> LeafResult | Pending:
        ctx = self.ctx
        self.live = None
        located = self.port("target")
        exec_key = self.out_key("execution")
        if located is None or isinstance(located, str):
            return self.result("infeasible", {exec_key: None},
                               event_meta={"reason": "no located target to grasp"})
        obs = ctx.memory.last_observation or ctx.observe()
        role = self.out_key("target")
        missed = wrong_holds_on(ctx.memory.wrong_holds, role, located)
        if len(missed) >= WRONG_HOLDS_BEFORE_PUSH:  # grasping it again would take another neighbour
            reason = f"{len(missed)} grasps on {located.name} held a neighbour: free it first"
            return self.result("infeasible", {exec_key: None, f"{self.node_id}.reason": reason},
                               event_meta={"reason": reason, "target": located.name})
        planned = ctx.services.plan_grasps(obs, located)
        candidates = [p for p in planned if not any(like(p, w) for w in missed)]
        reasons = []
        for pose in candidates[: self.MAX_CANDIDATES]:
            ok, reason = check_grasp(ctx.need_driver(), pose, np.concatenate([pose.position, pose.orientation]))
            if not ok:
                reasons.append(reason)
                continue
            motion = self.watched(start_motion(ctx.driver, "grasp", pose=pose, width=pose.width,
                                               force=float(self.port("force")), timeout=ctx.remaining_time()))
            ctx.memory.last_grasp = aimed_grasp(role, located, pose)
            about = {"target": located.name, "width": round(float(pose.width), 4), "candidates": len(candidates),
                     "pose": [round(float(x), 4) for x in np.concatenate([pose.position, pose.orientation])]}
            if missed:  # re-planned after a wrong hold: how many candidates were like a failed grasp
                about["unlike_wrong_holds"] = {"wrong_holds": len(missed), "dropped": len(planned) - len(candidates)}

            def finish(execution: Execution, about: dict[str, Any] = about) -> LeafResult:
                return self.result(_outcome_of(execution), {exec_key: execution}, execution.duration,
                                   {**_exec_meta(execution), **about})

            return Pending(motion, finish, halt_writes=lambda execution: {exec_key: execution})
        reason = ("every grasp candidate is like one that held a neighbour" if planned and not candidates
                  else "no grasp candidates" if not candidates else f"all candidates infeasible: {reasons[0]}")
        return self.result("infeasible", {exec_key: None, f"{self.node_id}.reason": reason},
                           event_meta={"reason": reason, "target": located.name})


class Push(Leaf):
    """Push the located object along an image direction from a free gap behind it."""

    NODE_TYPE = leaf_type("push", "primitive", {
        "target": Port("target", "str", default="{target}", doc="located object to push"),
        "direction": Port("direction", "str", default="auto",
                          choices=("auto", "left", "right", "up", "down"),
                          doc="image direction; auto = away from the nearest neighbour"),
        "distance": Port("distance", "float", default=0.10, minimum=0.03, maximum=0.20,
                         doc="metres"),
        "outcome": key_port("outcome", "push.outcome", "done | infeasible | clutter_too_dense | fault"),
    }, outcomes=PUSH_OUT, counts_as_action=True, outcome_port="outcome",
        doc="Push the object along an image direction, starting from a free gap behind it.",
        keys=(REASON,), max_ticks=400)
    SUCCESS_OUTCOMES = frozenset({"done"})

    def execute(self) -> LeafResult | Pending:
        ctx = self.ctx
        located = self.port("target")
        if located is None or isinstance(located, str):
            return self.result("infeasible", event_meta={"reason": "no located target to push"})
        obs = ctx.memory.last_observation or ctx.observe()
        scene = ctx.memory.last_scene
        refused: list[str] = []  # why each direction was not pushed (planner or driver guard)
        dense = True
        for direction in self._directions(located, scene):
            plan = ctx.services.plan_push(obs, located, scene, direction, float(self.port("distance")))
            if not plan.ok:
                dense &= "dense" in plan.reason
                refused.append(f"{direction}: {plan.reason}")
                continue
            # The safety guard is the driver's: it keeps the fingertips off the table (raising a
            # push planned lower than that) and checks IK and collisions on the points it will
            # move through. "infeasible: ..." means nothing moved, so the next direction is tried.
            motion = start_motion(ctx.driver, "push", start=plan.start, end=plan.end, height=plan.height,
                                  timeout=ctx.remaining_time())
            first = motion.poll()  # a refused push ends at its first poll, before anything moves
            if first is not None and _outcome_of(first) == "infeasible":
                dense = False
                refused.append(f"{direction}: {first.fault}")
                continue
            about = {"target": located.name, "direction": plan.direction,
                     "start": [round(float(x), 4) for x in plan.start],
                     "end": [round(float(x), 4) for x in plan.end]}

            def finish(execution: Execution, about: dict[str, Any] = about) -> LeafResult:
                writes = {f"{self.node_id}.reason": execution.fault} if execution.fault else {}
                return self.result(_outcome_of(execution), writes, execution.duration,
                                   {**_exec_meta(execution), **about})

            if first is not None:
                return finish(first)
            return Pending(motion, finish, polled=True)
        reason = "; ".join(refused) or "no push direction"
        return self.result("clutter_too_dense" if dense and refused else "infeasible",
                           {f"{self.node_id}.reason": reason}, event_meta={"reason": reason, "target": located.name})


    def _directions(self, located, scene) -> list[str]:
        """The requested direction, or for `auto` all four, away from the nearest neighbour first."""
        wanted = str(self.port("direction"))
        if wanted != "auto":
            return [wanted]
        me = scene.by_id(located.object_id) if scene is not None else None
        others = [o for o in (scene.objects if scene is not None else []) if me is not None and o.id != me.id]
        if me is None or not others:
            return list(PUSH_DIRECTIONS)
        nearest = min(others, key=lambda o: (o.point2d[0] - me.point2d[0]) ** 2 + (o.point2d[1] - me.point2d[1]) ** 2)
        du, dv = me.point2d[0] - nearest.point2d[0], me.point2d[1] - nearest.point2d[1]
        away = {"right": du, "left": -du, "down": dv, "up": -dv}
        return sorted(PUSH_DIRECTIONS, key=lambda d: -away[d])


class _Motion(Leaf):
    """A primitive that is one motion: start it, poll it across ticks, judge how it ended."""

    SUCCESS_OUTCOMES = frozenset({"done"})

    def start(self) -> Any:
        """The started motion (start_motion on ctx.driver)."""
        raise NotImplementedError

    def finish(self, execution: Execution) -> LeafResult:
        return self.result(_outcome_of(execution), duration=execution.duration,
                           event_meta=_exec_meta(execution))

    def execute(self) -> Pending:
        return Pending(self.start(), self.finish)


class _CarryMotion(_Motion):
    """A motion that carries the grasped object; with check_hold a drop is outcome `dropped`."""

    def finish(self, execution: Execution) -> LeafResult:
        from bt_grasp.watchdog.hold import hold_lost

        outcome = _outcome_of(execution)
        meta = _exec_meta(execution)
        if outcome == "done" and self.port("check_hold"):
            lost, why = hold_lost(execution.telemetry, self.ctx.services.thresholds)
            meta["hold"] = why
            if lost:
                outcome = "dropped"
        writes = {f"{self.node_id}.reason": meta["hold"]} if "hold" in meta else {}
        return self.result(outcome, writes, duration=execution.duration, event_meta=meta)


def carry_type(name: str, setting: Port, doc: str, max_ticks: int) -> NodeType:
    """A carrying motion's type: its one `setting`, check_hold, and the outcome key (`dropped`
    only with check_hold)."""
    return leaf_type(name, "primitive", {
        setting.name: setting,
        "check_hold": Port("check_hold", "bool", default=False, doc=CHECK_HOLD_DOC),
        "outcome": key_port("outcome", f"{name}.outcome", "done | dropped | infeasible | fault"),
    }, outcomes=CARRY_OUT, outcomes_for=carry_outcomes, outcome_port="outcome", doc=doc,
        keys=(REASON,), max_ticks=max_ticks)


class Lift(_CarryMotion):
    NODE_TYPE = carry_type("lift", Port("height", "float", default=0.15, minimum=0.0, doc="metres to rise"),
                           "Raise the end effector.", max_ticks=300)

    def start(self) -> Any:
        return start_motion(self.ctx.driver, "lift", dz=float(self.port("height")),
                            timeout=self.ctx.remaining_time())


class Place(_CarryMotion):
    NODE_TYPE = carry_type("place", Port("target", "str", default="basket", doc="where to put the held object"),
                           "Carry the held object to a receptacle and release it.", max_ticks=600)

    def start(self) -> Any:
        return start_motion(self.ctx.driver, "place", target=str(self.port("target")),
                            timeout=self.ctx.remaining_time())


class OpenGripper(_Motion):
    NODE_TYPE = leaf_type("open_gripper", "primitive", {
        "outcome": key_port("outcome", "open_gripper.outcome", "done | infeasible | fault"),
    }, outcomes=MOTION_OUT, outcome_port="outcome", doc="Open the gripper fully.", max_ticks=200)

    def start(self) -> Any:
        return start_motion(self.ctx.driver, "open_gripper", timeout=self.ctx.remaining_time())
