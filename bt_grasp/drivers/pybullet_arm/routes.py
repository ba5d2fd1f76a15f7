"""Routes: the arm's paths between spots, made of control.py's straight lines.

A guarded move stops where the wrist feels what it carries or touches rest on something; a depart
leaves a spot upwards slowly, keeping the gripper's orientation; a transit crosses above what
stands on the table; and a grasp or push yaw is taken in whichever of its two mirror-image
orientations is nearer the gripper's. Why each is shaped so is in contact.py (its switches) and
params.py (its speeds and heights). Both engines' arms run these same routes.
"""

from __future__ import annotations

import numpy as np
import pybullet as pb

from bt_grasp.drivers.pybullet_arm.contact import CONTACT
from bt_grasp.drivers.pybullet_arm.control import ControlMixin, Steps
from bt_grasp.drivers.pybullet_arm.params import (
    DEPART_M,
    FREE_TRANSIT_MPS,
    GUARD_BACKOFF_M,
    GUARD_N,
    GUARD_REST_STEPS,
    GUARD_START_STEPS,
    GUARD_STEPS,
    SAFE_Z,
)
from bt_grasp.watchdog.telemetry import Phase


class RoutesMixin(ControlMixin):
    """Paths built from ControlMixin's lines and ticks, whichever engine steps them."""

    def _guarded_line(self, pos: np.ndarray, orn: np.ndarray, speed: float, phase: Phase,
                      guard_n: float = GUARD_N) -> Steps:
        """A guarded move: the line to (pos, orn), stopped where the wrist has carried `guard_n`
        newtons less than at rest before it for GUARD_STEPS steps in a row, i.e. where what the
        gripper holds or touches rests on something. The arm then backs off to the joint targets
        of the step the load first fell and GUARD_BACKOFF_M further: the joints lag their targets,
        so holding the targets of the step it stopped at would keep pressing ~50 N on what it met.
        The rest load is the median over GUARD_REST_STEPS steps held still first (the end of the
        previous move still rings in the reading)."""
        self._phase = phase
        loads = []
        for _ in range(GUARD_REST_STEPS):
            self._tick()
            loads.append(self.wrist.read())
            yield
        base = float(np.median(loads))
        run = steps = 0
        touched = self.q_cmd

        def dropped() -> bool:
            nonlocal run, touched, steps
            steps += 1
            if steps <= GUARD_START_STEPS:  # the move's own start rings in the reading
                return False
            if self.wrist.read() < base - guard_n:
                touched = self.q_cmd if run == 0 else touched
                run += 1
            else:
                run = 0
            return run >= GUARD_STEPS

        start = self.tcp_pose()[0]
        yield from self._move_line(pos, orn, speed, phase, until=dropped)
        if run >= GUARD_STEPS:  # back off to where it was first felt, and GUARD_BACKOFF_M more
            self.q_cmd = touched.copy()
            self._hold_arm(self.q_cmd)
            here = self.tcp_pose()[0]
            away = (start - here) / max(float(np.linalg.norm(start - here)), 1e-9)
            yield from self._move_line(here + away * GUARD_BACKOFF_M, orn, speed, phase)

    def _facing(self, orn: np.ndarray) -> np.ndarray:
        """`orn`, or `orn` turned a half turn about its approach axis if that is nearer the
        gripper's current orientation (contact.py, symmetric_yaw; the fingers are mirror images).
        A tie (both a quarter turn away, within ~0.2 deg) keeps `orn`: either turn is as large."""
        orn = np.asarray(orn, float)
        if not CONTACT.symmetric_yaw:
            return orn
        turned = np.array(pb.multiplyTransforms((0, 0, 0), orn, (0, 0, 0), (0, 0, 1, 0))[1])
        now = self.tcp_pose()[1]
        return turned if abs(float(np.dot(turned, now))) > abs(float(np.dot(orn, now))) + 1e-3 else orn

    def _depart(self, pos: np.ndarray, orn: np.ndarray, phase: Phase) -> Steps:
        """Leave the current spot in a straight line to (pos, orn), the first DEPART_M at
        CONTACT.depart_mps and the rest at free transit (params.py says why).

        With a slow depart the whole line keeps the current orientation: a line takes its end
        orientation at its first IK point, so turning to `orn` there would swing the fingers
        through what they are among (the wrist turns up to a half turn at Bullet's 100 rad/s cap,
        and a large turn can flip IK to another arm branch); the next move, from above, turns."""
        start, now = self.tcp_pose()
        dist = float(np.linalg.norm(pos - start))
        if CONTACT.depart_mps >= FREE_TRANSIT_MPS or dist < 1e-6:
            yield from self._move_line(pos, orn, FREE_TRANSIT_MPS, phase)
            return
        slow = min(DEPART_M, dist)
        yield from self._move_line(start + (pos - start) * slow / dist, now, CONTACT.depart_mps, phase)
        if dist > DEPART_M:
            yield from self._move_line(pos, now, FREE_TRANSIT_MPS, phase)

    def _transit(self, pos: np.ndarray, orn: np.ndarray, phase: Phase) -> Steps:
        """Free transit to (pos, orn) over what stands on the table (contact.py, level_transit):
        up to SAFE_Z keeping the orientation, across at that height turning to `orn` (evenly with
        turn_in_transit, else at the first IK point), then straight down."""
        start, now = self.tcp_pose()
        if not CONTACT.level_transit:
            yield from self._move_line(pos, orn, FREE_TRANSIT_MPS, phase, turn=CONTACT.turn_in_transit)
            return
        z = max(float(start[2]), float(pos[2]), SAFE_Z)
        if z - start[2] > 1e-3:
            yield from self._move_line(np.array([start[0], start[1], z]), now, FREE_TRANSIT_MPS, phase)
        yield from self._move_line(np.array([pos[0], pos[1], z]), orn, FREE_TRANSIT_MPS, phase,
                                   turn=CONTACT.turn_in_transit)
        if z - pos[2] > 1e-3:
            yield from self._move_line(pos, orn, FREE_TRANSIT_MPS, phase)
