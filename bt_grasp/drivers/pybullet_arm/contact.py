"""Switches for how the fingers meet objects, read at use; the defaults are the shipped behaviour.

Why a switch: tools/perf/contact_models.py compares contact models on the same episodes in one
process, and two of them change what the driver commands rather than an engine parameter: the
finger closing speed and the range of grip forces. A Robotiq 2F-85 closes at 20-150 mm/s and
grips with 20-235 N; the shipped fingers close at 2 x FINGER_SPEED_MPS = 160 mm/s and take any
force in [0, the profile's max_force_n]. Finger position targets never pass the stroke whatever
these say (control.py clamps them to [0, FINGER_TRAVEL_M]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from bt_grasp.drivers.pybullet_arm.gripper import FINGER_SPEED_MPS


@dataclass
class ContactOptions:
    finger_speed_mps: float = FINGER_SPEED_MPS  # per finger; the gap closes at twice this
    force_min_n: float = 0.0                    # grip forces are clipped to [min, min(max, profile max)]
    force_max_n: float = math.inf


CONTACT = ContactOptions()


def set_contact(**values: Any) -> dict[str, Any]:
    """Set switches in place (the driver reads CONTACT at use); returns the previous values."""
    old = {f.name: getattr(CONTACT, f.name) for f in fields(CONTACT)}
    for k, v in values.items():
        if k not in old:
            raise ValueError(f"unknown contact option {k!r} (one of {', '.join(old)})")
        setattr(CONTACT, k, float(v))
    return old


def reset_contact() -> None:
    """Back to the shipped behaviour."""
    set_contact(**{f.name: f.default for f in fields(ContactOptions)})
