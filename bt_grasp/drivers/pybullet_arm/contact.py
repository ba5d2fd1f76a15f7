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
Measured figures: docs/benchmark.md, "Contact model".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from bt_grasp.drivers.pybullet_arm.gripper import FINGER_SPEED_MPS
from bt_grasp.drivers.pybullet_arm.speed import set_switches


@dataclass
class ContactOptions:
    finger_speed_mps: float = FINGER_SPEED_MPS  # per finger; the gap closes at twice this
    force_min_n: float = 0.0                    # grip forces are clipped to [min, min(max, profile max)]
    force_max_n: float = math.inf
    carry_keeps_yaw: bool = True                # place carries with the grasp's yaw, not DOWN
    ik_near_seed: bool = True                   # IK returns each joint's turn nearest the seed


CONTACT = ContactOptions()


def set_contact(**values: Any) -> dict[str, Any]:
    """Set switches in place (the driver reads CONTACT at use); returns the previous values."""
    return set_switches(CONTACT, "contact", values)


def reset_contact() -> None:
    """Back to the shipped behaviour."""
    set_contact(**{f.name: f.default for f in fields(ContactOptions)})
