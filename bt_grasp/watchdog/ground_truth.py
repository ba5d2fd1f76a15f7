"""The label a recorded attempt really earned, read from the simulator (never from the classifier).

Engine-neutral: the simulator facts come from the driver's SimLabelling surface (drivers/capabilities.py);
only the recorder and tests use it.

Ground truth, decided in this order from simulator facts (see `ground_truth`):
  The Watchdog judges the *physical* grasp, so "held" means any object (usually the target; with
  a grasp offset it can be a neighbour). Whether the held object is the target is stored as
  `truth.target_held` -- that is the semantic verifier's question, not the Watchdog's.
  1. STALL    the sim saw a motion that did not progress: the fingers, commanded to close, moved
              < 2 mm over >= 0.5 s of CLOSE, or came to rest >= 3 mm open for the last 0.3 s of
              CLOSE..SETTLE, without an object between them; or the lift phases ran for
              at least their nominal 0.3 s and the tool centre point rose < 5 mm of the commanded 15 mm.
  2. TIMEOUT  the driver ended the primitive on its time budget (Execution.fault == "timeout").
  3. Held at the end of the grasp (`held_object()` is not None after the HOLD phase):
       SUCCESS  still held after a further 5 cm lift and `hold_s` (1 s) of simulated waiting, the
                grip safety factor SF = mu * sum(finger normal forces) / (m g) >= `sf_min` (2.0),
                mu = the pads' friction with the object (finger * object friction: Bullet
                multiplies them, the MuJoCo arm's pad contacts do the same), and the mean pad
                normal force per finger >= `weak_grip_frac` (0.25) * the gripper's maximum force
       WEAK     otherwise: lost during the transport lift, or a low safety factor, or gripped below
                the firm-hold force. The last clause mirrors the label's definition ("held, but
                effort below the hold threshold") but is measured at the contacts by the physics
                engine, with a constant fixed here, not by the motor reading or the classifier's
                (calibrated) threshold.
  4. Not held at the end of the grasp:
       SLIP     an object touched both fingers, with the gap >= 3 mm (so it was between them, not
                touching their outsides), for >= 0.1 s during CLOSE..MICRO_LIFT (acquired)
       EMPTY    none did (nothing was between the fingers)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.outcomes import Label
from bt_grasp.watchdog.telemetry import Phase

MIN_HELD_GAP_M = 0.003  # a finger gap below this cannot have an object between the pads
G = 9.81


class SimObserver:
    """Watches the simulator every physics tick of a primitive: finger/object contacts, gap, tcp z.

    It wraps the driver's per-step hook (`_tick`, the same on both simulated arms) for the
    duration of one primitive. That is the simulator's ground truth, read for labelling only.
    """

    def __init__(self, driver: Any) -> None:
        self.d = driver
        self.rows: list[tuple[float, int, bool, float, float]] = []  # clock, phase, both-contact, gap, tcp z
        self._orig = None

    def __enter__(self) -> SimObserver:
        d = self.d
        orig = d._tick

        def tick() -> None:
            try:
                orig()
            finally:
                touching = d.finger_touches()
                both = bool(set.intersection(*touching) & set(d.bodies))  # one object between both fingers
                gap = d.finger_gap_m()
                z = float(d.tcp_pose()[0][2])
                self.rows.append((d.clock, int(d._phase), bool(both), float(gap), z))

        self._orig = orig
        d._tick = tick
        return self

    def __exit__(self, *exc: Any) -> None:
        self.d.__dict__.pop("_tick", None)

    def facts(self, commanded_lift_m: float = 0.015, nominal_lift_s: float = 0.3) -> dict[str, Any]:
        if not self.rows:
            return {"ticks": 0}
        arr = np.array([(c, p, b, g, z) for c, p, b, g, z in self.rows], dtype=float)
        clock, ph, both, gap, z = arr.T
        dt = np.diff(clock, prepend=clock[0])
        acq_phases = (ph >= Phase.CLOSE) & (ph <= Phase.MICRO_LIFT)
        # "between the fingers": touching both while the gap stays open (an object touching the
        # outsides of both fingers while they close fully is not held between them)
        contact_s = float(np.sum(dt[acq_phases & (both > 0) & (gap >= MIN_HELD_GAP_M)]))
        close = ph == Phase.CLOSE
        finger_stalled = False
        if close.any():
            c_clock = clock[close]
            c_gap = gap[close]
            dur = float(c_clock[-1] - c_clock[0])
            finger_stalled = bool(dur >= 0.5 and (c_gap.max() - c_gap.min()) < 0.002
                                  and not (both[close] > 0).any())
        cs = (ph == Phase.CLOSE) | (ph == Phase.SETTLE)
        if cs.any() and not finger_stalled:  # jammed part-way (block_fingers): at rest, open, nothing between
            last = cs & (clock >= clock[cs][-1] - 0.3)
            finger_stalled = bool(clock[cs][-1] - clock[cs][0] >= 0.3 and gap[last].min() >= MIN_HELD_GAP_M
                                  and (gap[last].max() - gap[last].min()) < 0.002 and not (both[cs] > 0).any())
        lift_rise = None
        lift_s = 0.0
        lifting = ph >= Phase.MICRO_LIFT
        if lifting.any():
            z_before = z[ph <= Phase.SETTLE][-1] if (ph <= Phase.SETTLE).any() else z[0]
            lift_rise = float(z[lifting].max() - z_before)
            lift_s = float(clock[lifting][-1] - clock[lifting][0])
        # a lift cut short by the time budget is not a stall: it must have had its nominal time
        lift_stalled = bool(lift_rise is not None and lift_rise < 0.005 and lift_s >= nominal_lift_s)
        return {"ticks": len(self.rows), "contact_s": contact_s, "finger_stalled": finger_stalled,
                "lift_rise_m": lift_rise, "lift_s": lift_s, "lift_stalled": lift_stalled,
                "commanded_lift_m": commanded_lift_m}


def grip_safety_factor(driver: Any, body: int) -> tuple[float, float] | None:
    """(mu * sum of finger normal forces / (m g), mean normal force per finger in N) from the
    simulator's contacts; None if `body` is gone or has no mass."""
    if body not in driver.bodies:
        return None
    per_finger = driver.finger_normal_n(body)
    normal = sum(per_finger)
    mass, mu = driver.body_mass_friction(body)
    if mass <= 0:
        return None
    return float(mu * normal / (mass * G)), normal / len(per_finger)


def ground_truth(exec_fault: str | None, facts: dict[str, Any], held_after_grasp: bool,
                 held_final: bool, sf: float | None, grip_frac: float | None, sf_min: float = 2.0,
                 weak_grip_frac: float = 0.25) -> tuple[Label, str]:
    """The label from simulator facts, in the order documented at the top of this module."""
    if facts.get("finger_stalled"):
        return Label.STALL, "fingers commanded to close did not move (no object contact)"
    if facts.get("lift_stalled"):
        return Label.STALL, f"micro-lift rose {1000 * facts['lift_rise_m']:.1f} mm of 15 mm"
    if exec_fault == "timeout":
        return Label.TIMEOUT, "driver ended the grasp on its time budget"
    if held_after_grasp:
        if not held_final:
            return Label.WEAK, "held after the grasp but lost during the transport lift"
        if sf is None or sf < sf_min:
            return Label.WEAK, f"held, grip safety factor {sf if sf is not None else float('nan'):.2f} < {sf_min}"
        if grip_frac is None or grip_frac < weak_grip_frac:
            return Label.WEAK, f"held, pad force {grip_frac or 0:.2f} of max < {weak_grip_frac}"
        return Label.SUCCESS, f"held after the transport lift and wait; safety factor {sf:.1f}, pad force " \
                              f"{grip_frac:.2f} of max"
    if facts.get("contact_s", 0.0) >= 0.1:
        return Label.SLIP, f"an object touched both fingers for {facts['contact_s']:.2f} s, then lost"
    return Label.EMPTY, "no object ever between both fingers"
