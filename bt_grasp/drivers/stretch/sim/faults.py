"""Physical faults in the simulated Stretch's world (an object removed, slippery or heavy, the
fingers or lift blocked, a motion that never finishes), armed for one primitive at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Fault
from bt_grasp.drivers.stretch.sim.params import PCT_MAX_OPEN, pct_to_finger_q


@dataclass
class ActiveFaults:
    """Physical faults the world applies until the driver ends the primitive."""

    remove_on_close: bool = False
    block_fingers_q: float | None = None
    block_lift_at: float | None = None
    block_lift_after: float | None = None
    never_finish: bool = False
    target: int | None = None
    restore: list[tuple[int, dict[str, float]]] = field(default_factory=list)


class FaultsMixin:
    """Mixin of StretchWorld: arming, triggering and ending the physical faults."""

    pb: Any
    cid: int
    objects: dict[int, Any]
    faults: ActiveFaults
    q_closed_stop: float
    _set_finger_limits: Any
    _apply_motors: Any
    gripper_pct: Any
    grasp_center: Any
    nearest_object: Any
    _body_by_name: Any

    def apply_faults(self, faults: list[Fault], target_point: np.ndarray | None) -> None:
        """Arm the physical faults for the primitive about to run (target: object nearest the point)."""
        tgt = self.nearest_object(target_point) if target_point is not None else None
        self.faults.target = tgt
        for f in faults:
            p = f.params
            if f.kind == "remove_target_on_close":
                self.faults.remove_on_close = True
            elif f.kind in ("friction", "mass"):
                bodies = [self._body_by_name(p["object"])] if "object" in p else (
                    [tgt] if tgt is not None else list(self.objects))
                for b in bodies:
                    if b is None:
                        continue
                    info = self.pb.getDynamicsInfo(b, -1, physicsClientId=self.cid)
                    self.faults.restore.append((b, {"mass": info[0], "lateralFriction": info[1]}))
                    kw = {"lateralFriction": float(p.get("value", 0.05))} if f.kind == "friction" else {
                        "mass": float(p.get("value", 2.0))}
                    self.pb.changeDynamics(b, -1, physicsClientId=self.cid, **kw)
            elif f.kind == "block_fingers":
                at = float(p.get("at_norm", 0.5))
                self.faults.block_fingers_q = pct_to_finger_q(at * PCT_MAX_OPEN)
                self._set_finger_limits(self.faults.block_fingers_q)
            elif f.kind == "block_lift":
                self.faults.block_lift_after = float(p.get("after_m", 0.0))  # armed for the next rise
            elif f.kind == "never_finish":
                self.faults.never_finish = True
        self._apply_motors()

    def on_gripper_command(self, pct: float) -> None:
        """Called by the simulated gripper: a closing command triggers remove_target_on_close."""
        if self.faults.remove_on_close and pct < self.gripper_pct():
            self.faults.remove_on_close = False
            body = self.faults.target
            if body is None:
                body = self.nearest_object(self.grasp_center())
            if body is not None and body in self.objects:
                # parked out of reach, and static there: moved off the floor it would fall without
                # end (and a falling body is work for every later physics step)
                self.pb.resetBasePositionAndOrientation(body, [5.0 + body, 5.0, 0.05], [0, 0, 0, 1],
                                                        physicsClientId=self.cid)
                self.pb.resetBaseVelocity(body, [0, 0, 0], [0, 0, 0], physicsClientId=self.cid)
                self.pb.changeDynamics(body, -1, mass=0.0, physicsClientId=self.cid)

    def end_faults(self) -> None:
        """Primitive over: physical obstructions go away (removed objects stay removed; mass and
        friction changes persist for the episode, like a real object's properties)."""
        self.faults.block_fingers_q = None
        self.faults.block_lift_at = None
        self.faults.block_lift_after = None
        self.faults.never_finish = False
        self.faults.remove_on_close = False
        self._set_finger_limits(self.q_closed_stop)
        self._apply_motors()

    def clear_faults(self) -> None:
        for b, kw in reversed(self.faults.restore):  # undo in reverse: later saves hold earlier changes
            if b in self.objects:
                self.pb.changeDynamics(b, -1, physicsClientId=self.cid, **kw)
        self.faults = ActiveFaults()
        self._set_finger_limits(self.q_closed_stop)
