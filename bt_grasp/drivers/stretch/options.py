"""Stretch driver settings: the profile's driver_options, the arm kinematics, and the clock.

Nothing here talks to the robot; the driver modules read these numbers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from bt_grasp.errors import UserError
from bt_grasp.profile import RobotProfile

GRIPPER = "stretch_gripper"


class Clock(Protocol):
    """Time source of the primitives (wall time on hardware, sim time in simulation).

    `simulated` says who moves time between two polls of a primitive: True, the primitive does
    (it sleeps one control period, which steps the physics); False, the world does (wall time
    passes while the tree ticks)."""

    simulated: bool

    def now(self) -> float: ...

    def sleep(self, dt: float) -> None: ...


class WallClock:
    """Real time: what a real Stretch runs on."""

    simulated = False

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, dt: float) -> None:
        time.sleep(dt)


@dataclass(frozen=True)
class StretchKinematics:
    """Where the grasp centre is, from lift, arm and base x (RE2V0 URDF, measured at zero pose).

    Base frame: x forward, y left, z up, origin on the floor between the wheels. The arm telescopes
    along -y; with wrist_yaw = 0 the Stretch gripper points along -y and down (~30 deg), and the
    grasp centre ("link_grasp_center") sits at
        x = grasp_x0 + base_dx,   y = grasp_y0 - arm,   z = grasp_z0 + lift.
    The fingers close along base x. Override in the profile (driver_options.kinematics) if your
    robot's calibrated URDF differs.
    """

    grasp_x0: float = -0.021
    grasp_y0: float = -0.350
    grasp_z0: float = 0.026
    lift_range: tuple[float, float] = (0.0, 1.10)
    arm_range: tuple[float, float] = (0.0, 0.52)

    def joints_for(self, p: np.ndarray) -> tuple[float, float, float]:
        """(base_dx, arm, lift) that put the grasp centre at p (no limits applied)."""
        return float(p[0] - self.grasp_x0), float(self.grasp_y0 - p[1]), float(p[2] - self.grasp_z0)

    def grasp_centre(self, base_dx: float, arm: float, lift: float) -> np.ndarray:
        return np.array([self.grasp_x0 + base_dx, self.grasp_y0 - arm, self.grasp_z0 + lift])


@dataclass
class StretchOptions:
    """driver_options of a Stretch profile (see robots/stretch3.yaml for what each is for)."""

    backend: str = "sim"
    table_height_m: float = 0.55
    close_pct: float = -10.0
    hold_squeeze_pct: float = 8.0
    micro_lift_m: float = 0.015
    approach_clearance_m: float = 0.10
    min_grasp_height_m: float = 0.027
    ready_lift_m: float = 0.85
    head_ready: tuple[float, float] = (-math.pi / 2, -0.8)
    poll_hz: float = 20.0  # legacy: the robot profile's control_period_s now sets the polling rate
    primitive_timeout_s: float = 40.0
    settle_s: float = 0.3
    hold_s: float = 0.5
    dry_run_window_s: float = 0.5
    max_base_travel_m: float = 0.6
    max_closing_axis_deg: float = 25.0
    places: dict[str, list[float]] | None = None
    nav_places: dict[str, list[float]] | None = None  # name -> (x, y, theta) standoff in odometry
    kinematics: dict[str, Any] | None = None
    guard: dict[str, Any] | None = None  # collision guard options (bt_grasp/drivers/stretch/guard.py)
    sim: dict[str, Any] | None = None

    @classmethod
    def from_profile(cls, profile: RobotProfile) -> StretchOptions:
        opts = dict(profile.driver_options)
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(opts) - known)
        if unknown:
            raise UserError(f"unknown Stretch driver_options: {', '.join(unknown)} (known: {', '.join(sorted(known))})",
                            file=profile.source)
        if "head_ready" in opts:
            opts["head_ready"] = tuple(opts["head_ready"])
        return cls(**opts)


PLACE_HALF_M = 0.08  # half the footprint of a receptacle around its place point (the sim basket's)
