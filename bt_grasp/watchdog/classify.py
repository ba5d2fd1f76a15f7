"""Gripper telemetry -> Watchdog label, confidence and evidence. Pure: no driver, no I/O, no clock.

Why causal: the label of an attempt is the *first* stable terminal signature in time order. A
signature is stable when its per-sample condition has held continuously for a window (hysteresis:
`settle_window_s` for acquisition, release and hold, `stall_window_s` for stalls) and the window
contains at least `min_window_samples` readings. Because the decision depends only on the samples
up to the deciding one, the streaming classifier can emit the label the moment it is stable and
still agree exactly with the batch classifier on the whole stream (property-tested). Later
samples never revise an emitted label.

Per-sample conditions (a = aperture_norm, e = effort, v = velocity, h = ee_height, p = phase;
"active" = p >= CLOSE):

- closed      a <= closed_eps
- empty       active & closed & e <= empty_effort_max
- contact     active & ~closed & e >= contact_effort_min & |v| <= stall_velocity_eps
  The first stable contact is the *acquisition*; a_ref / e_ref are the window means of aperture
  and effort over it (the gap the object holds the fingers at, and the grip effort).
- loss        after acquisition: a < a_ref (1 - slip_collapse_frac), or
              e < e_ref (1 - effort_drop_frac) and e < hold_effort_min
- lifted      rise = h - h_ref >= micro_lift_min_m, with h_ref the mean height over the CLOSE /
              SETTLE samples before the first MICRO_LIFT sample (the arm is still then)
- held        after acquisition: lifted & ~closed & e >= contact_effort_min & ~loss, and (when
              hold_phase_required) p == HOLD, i.e. the micro-lift motion has finished
- finger stall  p in {CLOSE, SETTLE} & ~closed & |v| <= stall_velocity_eps & e < contact_effort_min
              & |a - commanded| > command_tracking_eps (commanded to move, not moving, not touching)
- stall flag  active & stalled (the motor controller says so; only if trust_stall_flag)
- lift stall  p >= MICRO_LIFT, rise < micro_lift_min_m, and h rose less than lift_progress_min_m
              over the last stall_window_s (all inside the lift)

Events (first index wins; ties resolved in this order, most cautious first):
  bad telemetry -> TIMEOUT ("bad telemetry"); stable empty -> EMPTY, or SLIP if acquired before;
  stable loss -> SLIP; stable finger stall / stall flag / lift stall -> STALL; stable held ->
  SUCCESS if the window's mean effort >= hold_effort_min and mean |a - a_ref| <= aperture_drift_max,
  else WEAK -- unless the wrist load (when measured, and use_load) shows that nothing is carried:
  with L the mean load over the second half of the held window, L < pushed_up_load_n -> SLIP
  ("wrist_pushed_up": pressing on something supported), or L more than load_drop_max_n below the
  mean over the second half of the MICRO_LIFT samples -> SLIP ("load_drop_at_rest": the pads slid
  along an object that stayed down). t - t0 > attempt_time_budget_s -> TIMEOUT. No event before the stream ends ->
  TIMEOUT ("no stable terminal signature"). Contact without lift evidence therefore never becomes
  SUCCESS: `held` requires `lifted`.

Confidence is confidence_floor + (1 - floor) * m, where m in [0, 1] is the deciding rule's
smallest relative margin over its window (how far the window means sit inside the thresholds).

Module layout (one job each): verdict.py (Verdict, semantic check, the shared rule arithmetic),
reference.py (one attempt, vectorised over samples), matrix.py (many attempts at once),
stream.py (sample by sample). This module is the public entry point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bt_grasp.watchdog.matrix import classify_many
from bt_grasp.watchdog.reference import _first_stable, classify_reference
from bt_grasp.watchdog.stream import StreamingClassifier, classify_stream
from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds
from bt_grasp.watchdog.verdict import (
    BOOL_COLUMNS,
    FLOAT_COLUMNS,
    REQUIRED_COLUMNS,
    AcceptAll,
    SemanticVerifier,
    Verdict,
    semantic_check,
)

__all__ = ["BOOL_COLUMNS", "FLOAT_COLUMNS", "REQUIRED_COLUMNS", "AcceptAll", "SemanticVerifier",
           "StreamingClassifier", "Verdict", "_first_stable", "classify", "classify_many",
           "classify_reference", "classify_stream", "semantic_check"]


def classify(tel: Telemetry | Mapping[str, Any] | None, th: WatchdogThresholds | None = None) -> Verdict:
    """Label one attempt's telemetry. Never raises on bad telemetry: see the module doc.

    (One attempt takes the 1-D path, which has less fixed cost than the matrix path of
    classify_many; the two are property-tested equal, and both equal the streaming classifier.)
    """
    return classify_reference(tel, th)

