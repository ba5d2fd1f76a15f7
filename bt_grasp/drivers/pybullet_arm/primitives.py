"""The arm's primitives: grasp, lift, place, open_gripper, push.

Each primitive has a `_prepare_<name>` that makes its checks without moving (a refused call returns
its Execution at once, consuming the call's faults) and otherwise returns a `Planned` body: a
generator that yields after every physics step. motions.py runs that body across ticks
(`start`); the blocking methods here are `run_to_end(self.start(...))`, the same code path.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pybullet as pb

from bt_grasp.drivers.base import Execution, Fault, GraspPose
from bt_grasp.drivers.motion import run_to_end
from bt_grasp.drivers.pybullet_arm import scene
from bt_grasp.drivers.pybullet_arm.contact import CONTACT
from bt_grasp.drivers.pybullet_arm.control import Planned, Steps
from bt_grasp.drivers.pybullet_arm.gripper import (
    STROKE_M,
    TCP_FROM_TIP_M,
)
from bt_grasp.drivers.pybullet_arm.params import (
    CARRY_TRANSIT_MPS,
    DOWN,
    GUARD_REST_STEPS,
    GUARDED_MPS,
    SAFE_Z,
    TABLE_CLEARANCE_M,
    WEDGED_N,
)
from bt_grasp.watchdog.telemetry import Phase, Telemetry

# The lowest tcp height a place lowers to: the fingertips 1 cm above the basket's floor (its top at
# 7.5 mm), whatever contact.py's release_z_m asks.
RELEASE_FLOOR_Z = 0.0075 + 0.01 + TCP_FROM_TIP_M
# A grasp's HOLD spans two of the Watchdog's settle windows (0.125 s): an object that shifts once
# in the grip (a ball rolling to its seat) breaks one window, and the hold is still judged on the
# next instead of the attempt ending with no stable signature (TIMEOUT).
GRASP_HOLD_S = 0.3
RELEASE_WAIT_S = 0.6  # place: from the open command until what was released has fallen clear


# The least a low object's close presses with (contact.py band_close_n_per_m): the Watchdog's
# contact threshold (6 % of a 100 N gripper's effort) with a margin.
BAND_CLOSE_MIN_N = 10.0


def closing_force(force: float, object_top_z: float | None, tip_z: float) -> float:
    """The grip force while closing: `force`, or less on a low object whose side the pads meet
    over only a few millimetres above the fingertips at `tip_z` (contact.py band_close_n_per_m)."""
    if object_top_z is None or not math.isfinite(CONTACT.band_close_n_per_m):
        return force
    band = max(float(object_top_z) - tip_z, 0.0)
    return min(force, max(BAND_CLOSE_MIN_N, CONTACT.band_close_n_per_m * band))


class PrimitivesMixin:
    """Primitive bodies built from ControlMixin moves, refused up front by FeasibilityMixin checks."""

    # Provided by the host class PyBulletArm (driver.py) and its other mixins.
    _body_name: Any
    _collisions: Any
    _command_fingers: Any
    _depart: Any
    _facing: Any
    _finger_speed: Any
    _finger_state: Any
    _grasp_checks: Any
    _grasp_plan: Any
    _guarded_line: Any
    _line_hit: Any
    _move_line: Any
    _transit: Any
    _stall_forever: Any
    _tick: Any
    _wait: Any
    bodies: Any
    set_body_mass: Any
    client: Any
    faults: Any
    places_started: int
    feasible: Any
    finger_j: Any
    held_object: Any
    max_force: Any
    object_in_basket: Any
    robot: Any
    start: Any
    tcp_pose: Any
    wrist: Any

    def _prepare_grasp(self, pose: GraspPose, width: float, force: float) -> Execution | Planned:
        """Checks and body of grasp()."""
        plan = self._grasp_plan(pose, width, self.faults.peek("grasp"))
        pos, orn, pre, gap_open, target_body = plan["pos"], plan["orn"], plan["pre"], plan["gap"], plan["target"]
        info: dict[str, Any] = {"width": float(width), "force": float(force)}
        if "height_clamped_m" in plan:
            info["height_clamped_m"] = plan["height_clamped_m"]
        force = float(np.clip(force, CONTACT.force_min_n, min(CONTACT.force_max_n, self.max_force)))
        close_n = closing_force(force, pose.metadata.get("object_top_z"), plan["tip_z"])
        if close_n < force:
            info["close_force_n"] = round(close_n, 1)
        info.update(position=pos.tolist(), orientation=orn.tolist(), pregrasp=pre.tolist())
        info["object"] = self._body_name(target_body) if target_body is not None else None
        ok, why = self._grasp_checks(plan)
        if not ok:
            self.faults.take("grasp")  # the attempt is consumed even though nothing moved
            return Execution(Telemetry.empty(), 0.0, f"infeasible: {why}", info)

        def body(faults: list[Fault]) -> Steps:
            kinds = {f.kind: f for f in faults}
            if target_body is not None:
                if "friction" in kinds:
                    pb.changeDynamics(target_body, -1, lateralFriction=float(kinds["friction"].params.get("value", 0.1)),
                                      physicsClientId=self.client)
                if "mass" in kinds:
                    self.set_body_mass(target_body, float(kinds["mass"].params.get("value", 2.0)))
            self.grip_force = force
            self.gap_cmd = gap_open
            self._command_fingers(gap_open, force)
            above = self.tcp_pose()[0]
            if above[2] < pre[2] + 0.05:  # leave the current spot upwards first (slowly: contact.py)
                yield from self._depart(np.array([above[0], above[1], max(pre[2], above[2]) + 0.05]), orn,
                                        Phase.APPROACH)
            yield from self._transit(pre, orn, Phase.APPROACH)
            if math.isfinite(CONTACT.descent_guard_n):
                yield from self._guarded_line(pos, orn, 0.15, Phase.APPROACH, guard_n=CONTACT.descent_guard_n)
            else:
                yield from self._move_line(pos, orn, 0.15, Phase.APPROACH)
            yield from self._close(force, close_n, kinds, target_body, info)
            self._phase = Phase.SETTLE
            yield from self._settle(force, 0.3)
            yield from self._lift_phase(0.015, orn, kinds.get("block_lift"), Phase.MICRO_LIFT, speed=0.05)
            self._phase = Phase.HOLD
            yield from self._wait(GRASP_HOLD_S)
            info["held"] = self.held_object()

        return Planned(Phase.APPROACH, body, info)

    def _close(self, force: float, close_n: float, kinds: dict[str, Fault], target: int | None,
               info: dict[str, Any]) -> Steps:
        """CLOSE phase: drive the fingers shut at `close_n` (at most `force`) until they stop
        (object, stop, or limit); the settle then ramps the grip to `force`."""
        self._phase = Phase.CLOSE
        if "never_finish" in kinds:
            self.gap_cmd = 0.0
            yield from self._stall_forever()
        if "block_fingers" in kinds:
            at = float(kinds["block_fingers"].params.get("at_norm", 0.5)) * STROKE_M
            info["blocked_at_m"] = at
            self._gap_floor = at  # jammed part-way: the fingers stop there and stop pushing (no grip)
        self.gap_cmd = 0.0
        self._command_fingers(0.0, min(close_n, CONTACT.close_force_n))  # contact.py: close_force_n
        removed = False
        still = 0
        n = 0
        while n * scene.TIMESTEP < 2.0:
            self._tick()
            yield
            n += 1
            if "remove_target_on_close" in kinds and not removed and n >= 6:  # just after the close starts
                if target is not None and target in self.bodies:
                    self._take_out(target)
                    info["removed"] = self.bodies.pop(target).name
                removed = True
            still = still + 1 if self._finger_speed() < 0.002 and n > 24 else 0
            if still >= 12:
                break

    def _take_out(self, body: int) -> None:
        """Remove a body from the world (the remove_target_on_close fault)."""
        pb.removeBody(body, physicsClientId=self.client)

    def _settle(self, force: float, seconds: float) -> Steps:
        """SETTLE after a close: the grip rises from the closing force to `force` over
        CONTACT.grip_ramp_s (at once when the close was at `force`), then holds."""
        start = self.grip_force
        if start >= force:
            yield from self._wait(seconds)
            return
        n_ramp = max(1, round(CONTACT.grip_ramp_s / scene.TIMESTEP))

        def ramp(i: int) -> None:
            self.grip_force = start + (force - start) * min(1.0, (i + 1) / n_ramp)

        yield from self._wait(seconds, before_step=ramp)

    def _lift_phase(self, dz: float, orn: np.ndarray, block: Fault | None, phase: Phase, speed: float) -> Steps:
        p, _ = self.tcp_pose()
        stop_after = float(block.params.get("after_m", 0.0)) if block is not None else None
        yield from self._move_line(p + np.array([0, 0, dz]), orn, speed, phase, stop_after_m=stop_after)

    def _prepare_lift(self, dz: float) -> Execution | Planned:
        """Checks and body of lift()."""
        _, orn = self.tcp_pose()
        info: dict[str, Any] = {"dz": float(dz)}

        def body(faults: list[Fault]) -> Steps:
            kinds = {f.kind: f for f in faults}
            if "never_finish" in kinds:
                yield from self._stall_forever()
            yield from self._lift_phase(float(dz), orn, kinds.get("block_lift"), Phase.MICRO_LIFT, speed=0.15)
            self._phase = Phase.HOLD
            yield from self._wait(0.1)
            info["held"] = self.held_object()

        p, _ = self.tcp_pose()
        ok, why = self.feasible([np.concatenate([p + np.array([0.0, 0.0, dz]), orn])], check_objects=False)
        if not ok:
            self.faults.take("lift")
            return Execution(Telemetry.empty(), 0.0, f"infeasible: {why}", info)
        return Planned(Phase.MICRO_LIFT, body, info)

    def _prepare_place(self, target: str = "basket") -> Execution | Planned:
        """Checks and body of place()."""
        if target != "basket":
            return Execution(Telemetry.empty(), 0.0, f"infeasible: unknown place target {target!r}", {})
        bx, by = scene.BASKET_DROP_SPOTS[self.places_started % len(scene.BASKET_DROP_SPOTS)]
        above = np.array([bx, by, 0.25])
        info: dict[str, Any] = {"target": target, "object": self.held_object()}

        def body(faults: list[Fault]) -> Steps:
            kinds = {f.kind: f for f in faults}
            if "never_finish" in kinds:
                yield from self._stall_forever()
            self.places_started += 1
            p, orn = self.tcp_pose()
            if p[2] < SAFE_Z:
                yield from self._move_line(np.array([p[0], p[1], SAFE_Z]), orn, 0.3, Phase.APPROACH,
                                           stop_after_m=float(kinds["block_lift"].params.get("after_m", 0.0))
                                           if "block_lift" in kinds else None)
            # shipped, the carry turns to DOWN at its first IK point (contact.py: carry_keeps_yaw)
            carry = orn if CONTACT.carry_keeps_yaw else DOWN
            yield from self._move_line(np.array([above[0], above[1], SAFE_Z]), carry, CARRY_TRANSIT_MPS, Phase.APPROACH)
            # one guarded move down to the release height: piles grow under the drop spots
            # (scene.BASKET_DROP_SPOTS), and what is held, hanging below the fingers, would be
            # driven into a pile's top; it stops where that rests on something (contact.py)
            low = min(above[2], max(CONTACT.release_z_m, RELEASE_FLOOR_Z))
            yield from self._guarded_line(np.array([bx, by, low]), carry, GUARDED_MPS, Phase.APPROACH)
            self._phase = Phase.SETTLE
            self.gap_cmd = STROKE_M
            self._command_fingers(STROKE_M, self.grip_force)
            loads: list[float] = []  # the wrist at rest over the wait's last GUARD_REST_STEPS
            settled = round(RELEASE_WAIT_S / scene.TIMESTEP) - GUARD_REST_STEPS
            yield from self._wait(RELEASE_WAIT_S, before_step=lambda i: loads.append(self.wrist.read())
                                  if i >= settled else None)
            # rise clear of what the basket holds before anything moves sideways or narrows the
            # fingers; what is wedged between them comes along, out of the basket's region
            # (contact.py, retreat_z_m)
            info["load_after_release_n"] = round(float(np.median(loads)) - self.wrist.empty_n, 3)
            p, _ = self.tcp_pose()
            rise = CONTACT.rise_after_release or info["load_after_release_n"] > WEDGED_N
            if rise and CONTACT.retreat_z_m > p[2]:
                yield from self._depart(np.array([p[0], p[1], CONTACT.retreat_z_m]), carry, Phase.SETTLE)
            info["in_basket"] = self.object_in_basket(info["object"]) if info["object"] else False

        ok, why = self.feasible([above], check_objects=False)
        if not ok:
            self.faults.take("place")
            return Execution(Telemetry.empty(), 0.0, f"infeasible: {why}", info)
        return Planned(Phase.APPROACH, body, info)

    def _prepare_open_gripper(self) -> Execution | Planned:
        """Checks and body of open_gripper()."""
        def body(faults: list[Fault]) -> Steps:
            if any(f.kind == "never_finish" for f in faults):
                self.gap_cmd = STROKE_M
                yield from self._stall_forever()
            self._phase = Phase.SETTLE
            self.gap_cmd = STROKE_M
            self._command_fingers(STROKE_M, self.grip_force)
            for _ in range(int(1.5 / scene.TIMESTEP)):
                self._tick()
                yield
                if self._finger_state()[0] > STROKE_M - 0.001:
                    break
            yield from self._wait(0.05)

        return Planned(Phase.SETTLE, body, {})

    def _prepare_push(self, start: np.ndarray, end: np.ndarray, height: float) -> Execution | Planned:
        """Checks and body of push()."""
        start = np.asarray(start, float)[:2]
        end = np.asarray(end, float)[:2]
        d = end - start
        yaw = math.atan2(d[1], d[0]) + math.pi / 2  # closing axis across the push: the fingers' flat sides lead
        orn = self._facing(np.array(pb.getQuaternionFromEuler([math.pi, 0.0, -yaw])))
        h = max(float(height), TABLE_CLEARANCE_M - 0.0 + TCP_FROM_TIP_M)
        p0 = np.array([start[0], start[1], h])
        p1 = np.array([end[0], end[1], h])
        above = p0 + np.array([0, 0, 0.12])
        info: dict[str, Any] = {"start": p0.tolist(), "end": p1.tolist(), "height": h}
        ok, why = self.feasible([above], gap=0.0, check_objects=True)
        if ok:
            ok, why = self.feasible([p0, p1], gap=0.0, check_objects=False)
        if ok:  # the way down to the push start too: a finger landing on a pile throws it
            hit = self._line_hit(above, p0, orn, 0.0, "the push start")
            if hit:
                ok, why = False, f"collision: {hit}"
        if not ok:
            self.faults.take("push")
            return Execution(Telemetry.empty(), 0.0, f"infeasible: {why}", info)

        def body(faults: list[Fault]) -> Steps:
            if any(f.kind == "never_finish" for f in faults):
                yield from self._stall_forever()
            self.gap_cmd = 0.0
            self._command_fingers(0.0, self.grip_force)
            cur = self.tcp_pose()[0]
            if cur[2] < above[2]:
                yield from self._depart(np.array([cur[0], cur[1], above[2]]), orn, Phase.APPROACH)
            yield from self._transit(above, orn, Phase.APPROACH)
            yield from self._move_line(p0, orn, 0.15, Phase.APPROACH)
            yield from self._move_line(p1, orn, 0.1, Phase.APPROACH)
            yield from self._move_line(p1 + np.array([0, 0, 0.12]), orn, 0.2, Phase.APPROACH)

        return Planned(Phase.APPROACH, body, info)

    # ------------------------------------------------------------------ blocking calls: start + poll to the end
    def grasp(self, pose: GraspPose, width: float, force: float, timeout: float | None = None) -> Execution:
        """Pre-grasp above along the approach axis, descend, close with `force`, settle, micro-lift, hold."""
        return run_to_end(self.start("grasp", pose=pose, width=width, force=force, timeout=timeout))

    def lift(self, dz: float, timeout: float | None = None) -> Execution:
        """Raise the tcp by dz (m) keeping orientation and grip; telemetry phase MICRO_LIFT then HOLD."""
        return run_to_end(self.start("lift", dz=dz, timeout=timeout))

    def place(self, target: str = "basket", timeout: float | None = None) -> Execution:
        """Carry whatever is held at a safe height over the basket's next drop spot (an episode's
        places take scene.BASKET_DROP_SPOTS in turn), lower it as a guarded move, open the gripper,
        and rise clear of the basket with anything wedged between the fingers (contact.py).

        Phases: APPROACH for the transit, SETTLE for the release and any rise (commanded_aperture
        shows the opening). info: `load_after_release_n`, the wrist load above the empty gripper's.
        """
        return run_to_end(self.start("place", target=target, timeout=timeout))

    def open_gripper(self, timeout: float | None = None) -> Execution:
        """Open fully and wait until the fingers stop."""
        return run_to_end(self.start("open_gripper", timeout=timeout))

    def push(self, start: np.ndarray, end: np.ndarray, height: float, timeout: float | None = None) -> Execution:
        """Closed gripper, top-down, moves start -> end (base frame xy) with the grasp point at `height`."""
        return run_to_end(self.start("push", start=start, end=end, height=height, timeout=timeout))
