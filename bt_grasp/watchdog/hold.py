"""Hold check for motions that carry a grasped object (lift, place): was the object dropped?

The Watchdog judges a grasp once, at the end of its micro-lift. An object can still slide out
later, during the lift or the transit to the basket, and a tree that does not look again reports
"target in basket" for an object lying on the table. This check reads the same telemetry with
the same thresholds as the Watchdog's EMPTY rule: while the gripper is still commanded shut,
the fingers rest at the closed stop with no effort for a whole settle window -> nothing is
between them any more. Samples after the gripper is commanded open (the release in `place`)
are not judged: an empty gripper is expected there.
"""

from __future__ import annotations

import numpy as np

from bt_grasp.watchdog.classify import _first_stable
from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds

OPEN_COMMAND_DELTA = 0.05  # commanded aperture rising this much (normalised) = release started


def holding_samples(tel: Telemetry) -> int:
    """Number of leading samples recorded before the gripper was commanded to open."""
    cmd = np.asarray(tel.commanded_aperture, dtype=np.float64)
    if len(cmd) == 0:
        return 0
    opened = np.flatnonzero(cmd > np.nanmin(cmd[:1]) + OPEN_COMMAND_DELTA)
    return int(opened[0]) if len(opened) else len(cmd)


def hold_lost(tel: Telemetry, th: WatchdogThresholds | None = None) -> tuple[bool, str]:
    """(True, why) when the telemetry shows the held object gone before any release."""
    th = th or WatchdogThresholds()
    n = holding_samples(tel)
    if n == 0:
        return False, "no telemetry while holding"
    t = np.asarray(tel.t[:n], dtype=np.float64)
    empty = (np.asarray(tel.aperture_norm[:n]) <= th.closed_eps) & (np.asarray(tel.effort[:n]) <= th.empty_effort_max)
    hit = _first_stable(empty, t, th.settle_window_s, th.min_window_samples)
    if hit is None:
        return False, "fingers still on the object"
    i, run_start = hit
    return True, (f"fingers at the closed stop with effort {float(tel.effort[i]):.2f} "
                  f"from t={t[run_start]:.2f} s: the object was dropped")
