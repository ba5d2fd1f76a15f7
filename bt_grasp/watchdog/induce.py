"""What each recorded grasp attempt tries to induce (bt-grasp watchdog record), and how.

Induced outcomes (an *intent*; the stored label is the ground truth, which may differ):
  SUCCESS  no fault, grip force 30-90 % of the gripper maximum
  (all)    the grasp point gets a Gaussian xy error (sigma 4 mm); half the scenes have one or two
           distractor objects 9-18 cm from the target
  EMPTY    `remove_target_on_close` (the object vanishes while the fingers close) or
           `grasp_offset` 6-9 cm sideways (across the closing axis: the fingers close beside it)
  SLIP     `friction` (object lateral friction 0.001-0.02) and a mass of 0.3-2 kg; three in four
           grasped shallow (finger pads overlap the object's top 5-12 mm) so the 15 mm micro-lift
           pulls the fingers off it, one in four grasped normally -- then the object slides down
           between the pads while they stay clamped, which finger telemetry cannot see; only the
           wrist load (telemetry `load`) shows that the arm does not carry it
  WEAK     low grip force (8-22 % of the maximum) on a 0.15-0.6 kg object
  STALL    `block_lift` (the arm stops after 0-4 mm of the 15 mm micro-lift), `block_fingers` (the
           fingers jam part-way, between the opening and the object's width) or `never_finish`
           (the fingers stop moving at the start of the close) with a timeout that ends it
  TIMEOUT  a time budget of 30-85 % of the nominal grasp duration
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bt_grasp.drivers.base import Fault
from bt_grasp.outcomes import Label

INTENTS: tuple[Label, ...] = (Label.SUCCESS, Label.EMPTY, Label.SLIP, Label.WEAK, Label.STALL, Label.TIMEOUT)
# Measured: approach ~1.6 s, close ~0.4, settle 0.3, micro-lift 0.3, hold 0.3 (2.9 s); induced
# timeouts cut a grasp at 30-85 % of this, so a tenth of a second either way changes nothing.
NOMINAL_GRASP_S = 2.8


@dataclass
class Scenario:
    """One planned attempt: which outcome we try to induce and how."""

    intent: Label
    object_index: int
    xy: tuple[float, float]
    yaw: float
    force_frac: float
    fault: Fault | None = None
    timeout: float | None = None
    extra_mass: float | None = None
    pad_overlap_m: float | None = None  # grasp so the fingertips sit this far below the object's top
    pose_error_m: list[float] = field(default_factory=lambda: [0.0, 0.0])  # xy error of the grasp point
    distractors: list[tuple[int, tuple[float, float]]] = field(default_factory=list)


def plan(n: int, rng: np.random.Generator, n_objects: int) -> list[Scenario]:
    """n scenarios, intents cycled evenly (so every label is represented), parameters seeded."""
    out = []
    for i in range(n):
        intent = INTENTS[i % len(INTENTS)]
        sc = Scenario(intent=intent, object_index=int(rng.integers(n_objects)),
                      xy=(0.5 + rng.uniform(-0.08, 0.08), rng.uniform(-0.1, 0.1)), yaw=rng.uniform(-math.pi, math.pi),
                      force_frac=rng.uniform(0.3, 0.9), pose_error_m=rng.normal(0.0, 0.004, 2).tolist())
        if rng.random() < 0.5:  # a distractor or two near the target, for realism of contacts
            for _ in range(int(rng.integers(1, 3))):
                ang = rng.uniform(0, 2 * math.pi)
                r = rng.uniform(0.09, 0.18)
                sc.distractors.append((int(rng.integers(n_objects)),
                                       (sc.xy[0] + r * math.cos(ang), sc.xy[1] + r * math.sin(ang))))
        if intent is Label.EMPTY:
            if rng.random() < 0.5:
                sc.fault = Fault("remove_target_on_close", {}, primitive="grasp")
            else:
                sc.fault = Fault("grasp_offset", {"offset_m": rng.uniform(0.06, 0.09), "side": 1}, primitive="grasp")
        elif intent is Label.SLIP:
            sc.fault = Fault("friction", {"value": rng.uniform(0.001, 0.02)}, primitive="grasp")
            sc.extra_mass = rng.uniform(0.3, 2.0)
            if rng.random() < 0.75:  # a quarter are deep grasps: the slip is invisible to the fingers
                sc.pad_overlap_m = rng.uniform(0.005, 0.012)
        elif intent is Label.WEAK:
            sc.force_frac = rng.uniform(0.08, 0.22)
            sc.fault = Fault("mass", {"value": rng.uniform(0.15, 0.6)}, primitive="grasp")
        elif intent is Label.STALL:
            r = rng.random()
            if r < 0.4:
                sc.fault = Fault("block_lift", {"after_m": rng.uniform(0.0, 0.004)}, primitive="grasp")
            elif r < 0.7:  # where between the object and the opening: record_one turns it into at_norm
                sc.fault = Fault("block_fingers", {"at_frac": rng.uniform(0.3, 0.7)}, primitive="grasp")
            else:
                sc.fault = Fault("never_finish", {}, primitive="grasp")
                sc.timeout = 1.6 + rng.uniform(1.0, 2.0)
        elif intent is Label.TIMEOUT:
            sc.timeout = NOMINAL_GRASP_S * rng.uniform(0.3, 0.85)
        out.append(sc)
    return out
