"""Robot profiles: YAML data (shipped in robots/, or any file) describing geometry, camera, gripper and Watchdog thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from bt_grasp.errors import UserError
from bt_grasp.resources import ROBOTS, profile_path, shipped_dir
from bt_grasp.spec.model import Pos

ROTATION_TOL = 1e-3  # |R^T R - I| and |det R - 1| allowed in T_cam_base


def _above(value: float, info: ValidationInfo, field: str, lower: str) -> float:
    """An ordering check between two fields (the lower one is validated first, as declared)."""
    low = info.data.get(lower)
    if low is not None and value <= low:
        raise ValueError(f"{field} ({value}) must be greater than {lower} ({low})")
    return value


class CameraSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    width: int = Field(512, gt=0, le=8192)
    height: int = Field(512, gt=0, le=8192)
    fov_deg: float = Field(60.0, gt=0, lt=180, description="vertical field of view")
    near: float = Field(0.05, gt=0)
    far: float = Field(3.0, gt=0)
    T_cam_base: list[list[float]] = Field(
        description="4x4 pose of the camera in the robot base frame (OpenCV axes: z forward, y down)")

    @field_validator("far")
    @classmethod
    def _far_beyond_near(cls, far: float, info: ValidationInfo) -> float:
        return _above(far, info, "far", "near")

    @field_validator("T_cam_base")
    @classmethod
    def _rigid_transform(cls, rows: list[list[float]]) -> list[list[float]]:
        """Checked here, at load time: a bad matrix must not surface once the simulator runs."""
        if len(rows) != 4 or any(len(r) != 4 for r in rows):
            shape = f"{len(rows)} rows of {', '.join(str(len(r)) for r in rows)}"
            raise ValueError(f"must be a 4x4 matrix (4 rows of 4 numbers), got {shape}")
        T = np.asarray(rows, dtype=float)
        if not np.allclose(T[3], [0, 0, 0, 1]):
            raise ValueError(f"last row must be [0, 0, 0, 1], got {T[3].tolist()}")
        R = T[:3, :3]
        if not np.allclose(R.T @ R, np.eye(3), atol=ROTATION_TOL) or abs(np.linalg.det(R) - 1) > ROTATION_TOL:
            raise ValueError("the upper-left 3x3 block must be a rotation (orthonormal, determinant +1)")
        return rows

    def K(self) -> np.ndarray:
        f = 0.5 * self.height / np.tan(np.radians(self.fov_deg) / 2)
        return np.array([[f, 0, self.width / 2], [0, f, self.height / 2], [0, 0, 1.0]])

    def T(self) -> np.ndarray:
        return np.asarray(self.T_cam_base, dtype=float)


class GripperSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    min_aperture_m: float = Field(0.0, ge=0)
    max_aperture_m: float = Field(0.085, gt=0, le=1.0)
    max_force_n: float = Field(100.0, gt=0)

    @field_validator("max_aperture_m")
    @classmethod
    def _max_above_min(cls, high: float, info: ValidationInfo) -> float:
        return _above(high, info, "max_aperture_m", "min_aperture_m")


class RobotProfile(BaseModel):
    """A robot: which driver runs it, and the numbers that driver and the Watchdog need."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str = Field(min_length=1)
    driver: str = Field(description="driver plug-in (entry point group bt_grasp.drivers): "
                                    "pybullet_arm | stretch | an installed one")
    perception: str = Field("geometric", description="perceiver plug-in (entry point group "
                                                     "bt_grasp.perceivers): geometric | sim | an installed one; "
                                                     "or {backend: NAME, vocabulary: FILE}")
    perception_vocabulary: str | None = Field(
        None, description="the perceiver's vocabulary file (written perception: {vocabulary: FILE}, relative "
                          "to the profile); none: the shipped catalogue vocabulary")
    camera: CameraSpec
    gripper: GripperSpec = GripperSpec()
    watchdog: dict[str, Any] = Field(default_factory=dict, description="Watchdog thresholds")
    driver_options: dict[str, Any] = Field(default_factory=dict)
    control_period_s: float = Field(
        0.05, gt=0, le=1.0,
        description="seconds one poll of a running primitive advances a simulated motion (a simulator "
                    "rounds it to whole physics steps)")
    call_timeout_s: float | None = Field(
        None, gt=0,
        description="wall-clock seconds one driver or perceiver call may take before the run decides "
                    "WAIT_CLARIFY 'driver not responding' (default: the call's max_ticks x "
                    "control_period_s, at least 30 s; see docs/failures.md, Wall-clock limits)")
    source: str | None = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _perception_block(cls, data: Any) -> Any:
        """perception: {backend: NAME, vocabulary: FILE} -> perception and perception_vocabulary."""
        block = data.get("perception") if isinstance(data, dict) else None
        if not isinstance(block, dict):
            return data
        unknown = [k for k in block if k not in PERCEPTION_KEYS]
        if unknown:
            raise ValueError(f"perception: unknown key {unknown[0]!r} (one of: {', '.join(PERCEPTION_KEYS)})")
        out = {k: v for k, v in data.items() if k != "perception"}
        out["perception"] = block.get("backend", "geometric")
        if block.get("vocabulary") is not None:
            out["perception_vocabulary"] = block["vocabulary"]
        return out

    @field_validator("driver")
    @classmethod
    def _installed_driver(cls, name: str) -> str:
        """Checked by name at load time (the plug-in itself is imported only when a run starts)."""
        from bt_grasp.plugins import DRIVERS, check_name

        return check_name(DRIVERS, name)

    @field_validator("perception")
    @classmethod
    def _installed_perceiver(cls, name: str) -> str:
        from bt_grasp.plugins import PERCEIVERS, check_name

        return check_name(PERCEIVERS, name)


DEFAULT_PROFILE = "ur5e_robotiq"
PERCEPTION_KEYS = ("backend", "vocabulary")


def resolve_profile_path(name_or_path: str | None) -> Path:
    """A profile file by path (wins) or by shipped name (`stretch3`); default ur5e_robotiq."""
    return profile_path(name_or_path or DEFAULT_PROFILE)


def __getattr__(name: str) -> Any:
    """ROBOTS_DIR: the shipped profiles' folder, looked up when asked for (it depends on the install)."""
    if name == "ROBOTS_DIR":
        return shipped_dir(ROBOTS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_profile(name_or_path: str | None = None) -> RobotProfile:
    """A validated profile; any mistake is one UserError at the offending file:line:col."""
    path = resolve_profile_path(name_or_path)
    return validate_profile(path)


def validate_profile(path: Path) -> RobotProfile:
    """Parse and fully check one profile file (shapes, ranges, orderings, the watchdog block)."""
    from bt_grasp.spec.yaml_pos import PosDict, decode_text, load_positioned, plain

    display = str(path)
    try:
        text = decode_text(path.read_bytes(), display)
    except IsADirectoryError:
        raise UserError("is a directory, not a robot profile", file=display) from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", file=display) from None
    data = load_positioned(text, display)
    if not isinstance(data, PosDict):
        raise UserError("not a robot profile (expected a mapping with name, driver, camera)",
                        display, getattr(data, "pos", Pos(display, 1, 1)).line,
                        getattr(data, "pos", Pos(display, 1, 1)).col)
    try:
        block = data.get("perception")
        for key in block if isinstance(block, PosDict) else ():
            if key not in PERCEPTION_KEYS:
                raise _Located(("perception", key), f"unknown key {key!r} (one of: {', '.join(PERCEPTION_KEYS)})")
        prof = RobotProfile(**plain(data))
        if prof.perception_vocabulary is not None:
            vocab = path.parent / prof.perception_vocabulary
            if not vocab.is_file():
                raise _Located(("perception", "vocabulary"), f"no vocabulary file {str(vocab)!r} (a path relative "
                                                              "to the profile)")
            prof.perception_vocabulary = str(vocab.resolve())
        if prof.watchdog:
            from bt_grasp.watchdog.thresholds import WatchdogThresholds

            try:
                WatchdogThresholds(**prof.watchdog)
            except ValidationError as exc:
                raise _prefixed(exc, "watchdog") from None
    except _Located as exc:
        raise _profile_error(exc.loc, exc.msg, data, display) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise _profile_error(tuple(err["loc"]), err["msg"], data, display) from None
    prof.source = display
    return prof


class _Located(Exception):
    def __init__(self, loc: tuple[Any, ...], msg: str) -> None:
        super().__init__(msg)
        self.loc, self.msg = loc, msg


def _prefixed(exc: ValidationError, section: str) -> _Located:
    err = exc.errors()[0]
    return _Located((section, *err["loc"]), err["msg"])


def _profile_error(loc: tuple[Any, ...], msg: str, data: Any, display: str) -> UserError:
    """The message for field `loc`, placed at the deepest part of `loc` written in the file."""
    pos = data.pos
    node: Any = data  # PosDict / PosList (bt_grasp.spec.yaml_pos) down to the field
    for key in loc:
        if isinstance(node, dict) and key in node:
            pos, node = node.val_pos[key], node[key]  # type: ignore[attr-defined]  # a PosDict
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            pos, node = node.item_pos[key], node[key]  # type: ignore[attr-defined]  # a PosList
        elif isinstance(node, dict) and isinstance(key, str) and key in getattr(node, "key_pos", {}):
            pos = node.key_pos[key]  # type: ignore[attr-defined]  # a PosDict
            break
        else:
            break
    field = ".".join(str(k) for k in loc) or "profile"
    msg = msg.removeprefix("Value error, ")
    return UserError(f"profile field {field}: {msg}", display, pos.line, pos.col)
