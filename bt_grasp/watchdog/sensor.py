"""The sensor model of recorded telemetry: a real gripper's readings are noisy and late.

The driver's clean telemetry gets Gaussian noise on aperture, effort, velocity,
height and wrist load, then a reading latency (each reading reports the state `latency_s` earlier), with the
magnitudes in the profile's WatchdogThresholds (`aperture_noise_m`, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds


@dataclass
class SensorModel:
    """Noise and latency added to clean simulator telemetry (values from WatchdogThresholds)."""

    aperture_noise_m: float
    effort_noise: float
    height_noise_m: float
    velocity_noise: float
    latency_s: float
    stroke_m: float = 0.085
    load_noise_n: float = 0.0

    @classmethod
    def from_thresholds(cls, th: WatchdogThresholds, stroke_m: float, enabled: bool = True) -> SensorModel:
        if not enabled:
            return cls(0.0, 0.0, 0.0, 0.0, 0.0, stroke_m)
        return cls(th.aperture_noise_m, th.effort_noise, th.height_noise_m, th.velocity_noise, th.latency_s,
                   stroke_m, th.load_noise_n)

    def as_dict(self) -> dict[str, float]:
        return {"aperture_noise_m": self.aperture_noise_m, "effort_noise": self.effort_noise,
                "height_noise_m": self.height_noise_m, "velocity_noise": self.velocity_noise,
                "latency_s": self.latency_s, "load_noise_n": self.load_noise_n}

    def apply(self, tel: Telemetry, rng: np.random.Generator) -> Telemetry:
        n = len(tel)
        if n == 0:
            return tel
        d = {k: np.array(v, copy=True) for k, v in tel.to_dict().items()}
        d["aperture_m"] = np.clip(d["aperture_m"] + rng.normal(0, self.aperture_noise_m, n), 0.0, None)
        d["aperture_norm"] = np.clip(d["aperture_m"] / self.stroke_m, 0.0, 1.0)
        d["effort"] = np.clip(d["effort"] + rng.normal(0, self.effort_noise, n), 0.0, None)
        d["velocity"] = d["velocity"] + rng.normal(0, self.velocity_noise, n)
        d["ee_height"] = d["ee_height"] + rng.normal(0, self.height_noise_m, n)
        if self.load_noise_n > 0:  # drawn last, so the other columns' noise matches older recordings
            d["load"] = d["load"] + rng.normal(0, self.load_noise_n, n)
        if self.latency_s > 0:
            src = np.clip(np.searchsorted(d["t"], d["t"] - self.latency_s, side="right") - 1, 0, n - 1)
            for k in ("aperture_m", "aperture_norm", "effort", "velocity", "ee_height", "load", "stalled",
                      "overload"):
                d[k] = d[k][src]  # commands and phase are the controller's own: not delayed
        return Telemetry(**d)
