"""Robot profiles: YAML data (shipped in robots/, or any file) describing geometry, camera, gripper and Watchdog thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bt_grasp.errors import UserError
from bt_grasp.resources import ROBOTS, profile_path, shipped_dir


class CameraSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    width: int = Field(512, gt=0)
    height: int = Field(512, gt=0)
    fov_deg: float = Field(60.0, gt=0, lt=180, description="vertical field of view")
    near: float = Field(0.05, gt=0)
    far: float = Field(3.0, gt=0)
    T_cam_base: list[list[float]] = Field(
        description="4x4 pose of the camera in the robot base frame (OpenCV axes: z forward, y down)")

    def K(self) -> np.ndarray:
        f = 0.5 * self.height / np.tan(np.radians(self.fov_deg) / 2)
        return np.array([[f, 0, self.width / 2], [0, f, self.height / 2], [0, 0, 1.0]])

    def T(self) -> np.ndarray:
        return np.asarray(self.T_cam_base, dtype=float)


class GripperSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    min_aperture_m: float = Field(0.0, ge=0)
    max_aperture_m: float = Field(0.085, gt=0)
    max_force_n: float = Field(100.0, gt=0)


class RobotProfile(BaseModel):
    """A robot: which driver runs it, and the numbers that driver and the Watchdog need."""

    model_config = ConfigDict(extra="forbid")
    name: str
    driver: str = Field(description="pybullet_arm | stretch | stretch_sim")
    camera: CameraSpec
    gripper: GripperSpec = GripperSpec()
    watchdog: dict[str, Any] = Field(default_factory=dict, description="Watchdog thresholds")
    driver_options: dict[str, Any] = Field(default_factory=dict)
    source: str | None = Field(default=None, exclude=True)


DEFAULT_PROFILE = "ur5e_robotiq"


def resolve_profile_path(name_or_path: str | None) -> Path:
    """A profile file by path (wins) or by shipped name (`stretch3`); default ur5e_robotiq."""
    return profile_path(name_or_path or DEFAULT_PROFILE)


def __getattr__(name: str) -> Any:
    """ROBOTS_DIR: the shipped profiles' folder, looked up when asked for (it depends on the install)."""
    if name == "ROBOTS_DIR":
        return shipped_dir(ROBOTS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_profile(name_or_path: str | None = None) -> RobotProfile:
    path = resolve_profile_path(name_or_path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UserError(f"YAML syntax error: {getattr(exc, 'problem', exc)}", file=str(path),
                        line=mark.line + 1 if mark else None,
                        col=mark.column + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise UserError("not a robot profile (expected a mapping with name, driver, camera)",
                        file=str(path), line=1)
    try:
        prof = RobotProfile(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise UserError(f"profile field {loc}: {err['msg']}", file=str(path)) from None
    prof.source = str(path)
    return prof
