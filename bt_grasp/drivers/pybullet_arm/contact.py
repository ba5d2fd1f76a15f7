"""Switches for how the gripper meets and carries objects, read at use; defaults = shipped behaviour.

Why a switch: tools/perf/contact_models.py compares contact models on the same episodes in one
process, and some of them change what the driver commands rather than an engine parameter: the
finger closing speed and the range of grip forces. A Robotiq 2F-85 closes at 20-150 mm/s and
grips with 20-235 N; the shipped fingers close at 2 x FINGER_SPEED_MPS = 160 mm/s and take any
force in [0, the profile's max_force_n]. Finger position targets never pass the stroke whatever
these say (control.py clamps them to [0, FINGER_TRAVEL_M]).

`carry_keeps_yaw` (on) is motion, not contact, but without it objects fly: `place` would carry to
the basket with the gripper turned to DOWN, and a straight-line move takes its final orientation
at its first 1 cm IK point, so the last wrist joint would turn the grasp's yaw at Bullet's
100 rad/s cap (a UR5e's wrist: 3.14 rad/s) and could fling the held object. With it the carry
keeps the grasp's orientation and the wrist does not turn.

`ik_near_seed` (on): IkSolver.solve wraps every joint into [-pi, pi), so when the last wrist joint
crosses +-pi along a line (the base turns during the carry and the wrist turns back to hold the
yaw), the next IK point's target would be a full turn away and the joint would spin it at
100 rad/s. With it each joint takes the 2pi-equivalent nearest the seed inside its limits.
Both off is the former behaviour, kept for comparison (tools/perf/contact_models.py, "before").

`depart_mps`: how fast a grasp or push leaves its starting spot upwards for the first DEPART_M
(params.py), the rest at free transit. A grasp that found nothing ends with open_gripper where it
closed, fingers among the neighbours; the next grasp or push starts by rising from there, and a
finger dragged up at free transit (0.8 m/s, 3.3 mm per physics step) through a neighbour it
touches lifts it into the finger, whose penetration the solver removes by velocity. A real arm
backs out of clutter slowly along the approach axis for the same reason (it cannot see what the
fingers touch); here at the descent's own speed, and the whole rise keeps the gripper's
orientation (control.py, _depart): turning to the next grasp's yaw at the rise's first IK point
would swing the fingers through the neighbours, sometimes with an IK flip to another arm branch.

`turn_in_transit`: the transit to the pre-grasp (or above a push) turns the gripper evenly along
the line instead of at its first IK point, so the wrist turns at a bounded rate and IK, seeded
from the previous point, stays on the arm's branch. depart_mps at FREE_TRANSIT_MPS (0.8) is the
former rise ("before: fast depart").

`symmetric_yaw` (on): the two fingers are mirror images, so a grasp or a push turned a half turn about
its approach axis is the same grasp or push. With it the driver takes, of the two, the one nearer
the gripper's current orientation, so the wrist never turns more than a quarter turn between two
primitives. Without it the wrist may turn up to a half turn at the transit's first IK point, which
swings the fingers through the neighbours they are among at the joint cap, and a half-turn target
can send IK to another arm branch, sweeping the whole arm through the workspace.

`joint_speed_rps`: the most any arm joint turns per second. A line's joint targets move from one
IK point to the next in the time the tcp speed gives; where the joints would have to turn faster
(a turn at the first IK point, an IK point on another branch), the step takes longer instead. A
UR5e's joints are limited to 180 deg/s (pi rad/s); infinity is the former timing, where only
Bullet's 100 rad/s joint cap bounds them.

`release_z_m`: the tcp height `place` opens the gripper at. Shipped, 0.25 m: the held object falls
some 20 cm into the basket, reaching ~2 m/s, onto the basket's sloped near wall or the objects
delivered before it (all are released over one spot), and a glancing impact turns that into a
sideways throw. Below 0.25 the gripper lowers at GUARDED_MPS (params.py) as a guarded move: it
stops where the wrist load sensor feels what it holds rest on something (a real arm's "move until
contact"), else at the release floor (primitives.py), and opens there.

Measured figures: docs/benchmark.md, "Contact model".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from bt_grasp.drivers.pybullet_arm.gripper import FINGER_SPEED_MPS
from bt_grasp.drivers.pybullet_arm.params import DEPART_MPS
from bt_grasp.drivers.pybullet_arm.speed import set_switches


@dataclass
class ContactOptions:
    finger_speed_mps: float = FINGER_SPEED_MPS  # per finger; the gap closes at twice this
    force_min_n: float = 0.0                    # grip forces are clipped to [min, min(max, profile max)]
    force_max_n: float = math.inf
    carry_keeps_yaw: bool = True                # place carries with the grasp's yaw, not DOWN
    ik_near_seed: bool = True                   # IK returns each joint's turn nearest the seed
    depart_mps: float = DEPART_MPS              # the first DEPART_M of leaving a spot upwards
    turn_in_transit: bool = False               # the transit to the pre-grasp turns along the line
    symmetric_yaw: bool = True                  # grasp/push yaw: of yaw and yaw + pi the nearer one
    joint_speed_rps: float = math.inf           # joint targets move at most this fast (rad/s)
    release_z_m: float = 0.25                   # place opens at this tcp height (below 0.25: guarded)


CONTACT = ContactOptions()


def set_contact(**values: Any) -> dict[str, Any]:
    """Set switches in place (the driver reads CONTACT at use); returns the previous values."""
    return set_switches(CONTACT, "contact", values)


def reset_contact() -> None:
    """Back to the shipped behaviour."""
    set_contact(**{f.name: f.default for f in fields(ContactOptions)})
