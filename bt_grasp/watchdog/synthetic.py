"""SYNTHETIC gripper telemetry: hand-written kinematic sketches of each outcome, not physics.

Why it exists: to develop and property-test the classifier and the evaluation/calibration code
without a simulator, and to benchmark throughput. It is *not* evidence that the Watchdog works:
the regression set in tests/data/watchdog/ is recorded from the PyBullet simulator by
`bt_grasp.watchdog.record`, and that is what the accuracy targets are measured on.

Each generated attempt runs APPROACH -> CLOSE -> SETTLE -> MICRO_LIFT -> HOLD at a fixed sample
rate, with Gaussian sensor noise and a reading latency taken from WatchdogThresholds. With
`with_load` it also sketches a wrist load: the free gripper's weight, plus the object's weight
once it is lifted and held; a `deep_slip` SLIP keeps the fingers looking held while the load only
shows a friction drag during the lift.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.outcomes import Label
from bt_grasp.watchdog.telemetry import Phase, Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds

STROKE_M = 0.085


def synth_attempt(label: Label | str, rng: np.random.Generator, th: WatchdogThresholds | None = None,
                  noise: bool = True, rate_hz: float = 80.0, with_load: bool = False,
                  deep_slip: bool = False) -> Telemetry:
    """One synthetic attempt whose physical outcome is `label` (see module doc: synthetic)."""
    th = th or WatchdogThresholds()
    label = Label(label)
    rate = rate_hz
    dt = 1.0 / rate
    durations = {Phase.APPROACH: rng.uniform(0.2, 0.4), Phase.CLOSE: 0.7, Phase.SETTLE: rng.uniform(0.2, 0.3),
                 Phase.MICRO_LIFT: rng.uniform(0.25, 0.4), Phase.HOLD: rng.uniform(0.4, 0.6)}
    n_ph = {ph: max(1, int(round(d * rate))) for ph, d in durations.items()}
    phase = np.concatenate([np.full(n_ph[ph], int(ph)) for ph in Phase])
    n = len(phase)
    t = np.arange(n) * dt
    t_close0 = n_ph[Phase.APPROACH] * dt
    t_lift0 = t_close0 + (n_ph[Phase.CLOSE] + n_ph[Phase.SETTLE]) * dt
    speed = 2 * 0.08 / STROKE_M  # normalised aperture per second (both fingers)
    width = rng.uniform(0.2, 0.8)  # object width, normalised
    force = rng.uniform(0.75, 1.0)
    lift_dz = rng.uniform(0.012, 0.02)
    lift_dur = durations[Phase.MICRO_LIFT] * 0.8
    h0 = rng.uniform(0.02, 0.08)

    stop = width
    effort_hold = force
    lift_block = None
    slip_at = None
    drift_rate = 0.0
    stalled_from = None
    truncate = None
    if label is Label.EMPTY:
        stop = 0.0
    elif label is Label.WEAK:
        if rng.random() < 0.6:
            effort_hold = rng.uniform(0.15, 0.35)
        else:
            drift_rate = rng.uniform(0.3, 0.6)  # aperture drifts (object rotating / sliding)
    elif label is Label.SLIP and not deep_slip:
        slip_at = t_lift0 + rng.uniform(0.05, 0.25)
    elif label is Label.STALL:
        if rng.random() < 0.5:
            stop = rng.uniform(0.3, 0.8)
            effort_hold = rng.uniform(0.0, 0.02)  # blocked before reaching anything: no grip
            stalled_from = t_close0 + (1 - stop) / speed if rng.random() < 0.5 else None
        else:
            lift_block = rng.uniform(0.0, 0.003)
    elif label is Label.TIMEOUT:
        truncate = rng.uniform(t_close0 + 0.05, t_close0 + 0.3)

    t_contact = t_close0 + (1.0 - stop) / speed
    a = np.where(t < t_close0, 1.0, np.maximum(stop, 1.0 - (t - t_close0) * speed))
    cmd = np.where(t < t_close0, 1.0, 0.0)
    effort = np.where(t < t_close0, 0.0, 0.01)
    ramp = np.clip((t - t_contact) / 0.05, 0, 1)
    if stop > 0:
        effort = np.where(t >= t_contact, 0.01 + (effort_hold - 0.01) * ramp, effort)
    else:
        effort = np.where(t >= t_contact, 0.02, effort)
    lift_prog = np.clip((t - t_lift0) / lift_dur, 0, 1) * lift_dz
    if lift_block is not None:
        lift_prog = np.minimum(lift_prog, lift_block)
    h = h0 + lift_prog
    if drift_rate:
        a = np.where(t > t_lift0, a - np.minimum((t - t_lift0) * drift_rate * 0.5, 0.25) * stop, a)
    if slip_at is not None:
        fall = np.clip((t - slip_at) / 0.08, 0, 1)
        a = a * (1 - fall)
        effort = effort * (1 - fall) + 0.02 * fall
    v = np.gradient(a, t) * STROKE_M
    stalled = np.zeros(n, bool)
    if stalled_from is not None:
        stalled = t >= stalled_from
    if noise:
        a = a + rng.normal(0, th.aperture_noise_m / STROKE_M, n)
        effort = effort + rng.normal(0, th.effort_noise, n)
        h = h + rng.normal(0, th.height_noise_m, n)
        v = v + rng.normal(0, th.velocity_noise, n)
        lag = int(round(th.latency_s * rate))
        if lag:
            for arr in (a, effort, h, v):
                arr[lag:] = arr[:-lag].copy()
                arr[:lag] = arr[lag]
    a = np.clip(a, 0.0, 1.0)
    effort = np.clip(effort, 0.0, None)
    # None: not measured (Telemetry fills NaN)
    load: Any = _load(label, t, phase, rng, th, noise, t_lift0, lift_dur, slip_at, deep_slip) if with_load else None
    tel = Telemetry(t=t, aperture_m=a * STROKE_M, aperture_norm=a, commanded_aperture=cmd, effort=effort,
                    velocity=v, ee_height=h, phase=phase, stalled=stalled, load=load)
    if truncate is not None:
        k = int(np.searchsorted(t, truncate))
        tel = Telemetry(**{k2: v2[:k] for k2, v2 in tel.to_dict().items()})
    return tel


def _load(label: Label, t: np.ndarray, phase: np.ndarray, rng: np.random.Generator, th: WatchdogThresholds,
          noise: bool, t_lift0: float, lift_dur: float, slip_at: float | None, deep_slip: bool) -> np.ndarray:
    """Wrist load (N): gripper weight, + object weight while lifted and held, or a friction drag."""
    gripper, weight = 6.9, 9.81 * rng.uniform(0.06, 0.5)
    lifted = np.clip((t - t_lift0) / 0.03, 0, 1)
    load = np.full(len(t), gripper)
    if label in (Label.SUCCESS, Label.WEAK):
        load = load + weight * lifted
    elif label is Label.SLIP and deep_slip:  # pads slide along it while the arm moves, then the drag relaxes
        moving = (t >= t_lift0) & (t <= t_lift0 + lift_dur)
        load = load + np.where(moving, rng.uniform(0.8, 2.0), 0.0) * lifted
    elif label is Label.SLIP and slip_at is not None:
        load = load + weight * lifted * (t < slip_at)
    if noise:
        load = load + rng.normal(0, th.load_noise_n, len(t))
    return load


def synth_dataset(n: int, seed: int = 0, th: WatchdogThresholds | None = None,
                  labels: tuple[Label, ...] = tuple(Label)) -> list[tuple[Label, Telemetry]]:
    """n synthetic (ground-truth label, telemetry) pairs, labels cycled evenly."""
    rng = np.random.default_rng(seed)
    return [(labels[i % len(labels)], synth_attempt(labels[i % len(labels)], rng, th)) for i in range(n)]
