"""Watchdog thresholds: the numbers that turn gripper telemetry into a label, per robot.

They live in the `watchdog:` section of a robot profile (`robots/*.yaml`) so that a new gripper
is calibrated by data (`bt-grasp watchdog calibrate`), not by editing code. Every field has a
default that suits a Robotiq-2F-85-like parallel gripper in PyBullet; a profile overrides only
what differs. Unknown keys are rejected (a typo in a threshold must not silently fall back to a
default that decides whether the robot thinks it holds something).

Units follow `bt_grasp.watchdog.telemetry`: seconds, metres, aperture normalised to 0 (closed
stop) .. 1 (fully open), effort normalised to the gripper's maximum force (0..1).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bt_grasp.errors import UserError


class WatchdogThresholds(BaseModel):
    """Decision thresholds (used by `classify`) and sensor-model parameters (used by `record`)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # --- closing / acquisition -------------------------------------------------------------
    closed_eps: float = Field(
        0.04, ge=0, le=0.5,
        description="Fingers count as at the closed stop when aperture_norm <= closed_eps. Must sit "
                    "above the closed-stop reading plus sensor noise, and below the thinnest object "
                    "the robot should hold (normalised).")
    empty_effort_max: float = Field(
        0.1, ge=0, le=1,
        description="At the closed stop, effort at or below this means nothing is between the "
                    "fingers (EMPTY). Effort above it at the closed stop is squeezing something thin.")
    hold_effort_min: float = Field(
        0.3, ge=0, le=1.5,
        description="Effort at or above this, with the fingers stopped on an object, is a firm hold. "
                    "Between contact_effort_min and this the hold is WEAK.")
    contact_effort_min: float = Field(
        0.06, ge=0, le=1,
        description="Effort above this with the fingers open of the closed stop is contact with "
                    "something (an object or an obstacle); below it the fingers are moving freely.")
    settle_window_s: float = Field(
        0.15, gt=0, le=5,
        description="Hysteresis: a signature must hold for this long (trailing window) before it "
                    "yields a label; also the window over which hold/stability is judged.")
    min_window_samples: int = Field(
        3, ge=1, le=1000,
        description="A window with fewer samples than this is not evidence (too sparse telemetry).")

    # --- micro-lift ---------------------------------------------------------------------------
    micro_lift_min_m: float = Field(
        0.008, ge=0, le=0.2,
        description="End-effector rise (from its height at the end of closing) that counts as lift "
                    "evidence. Without it a grasp is at most contact and never SUCCESS.")
    micro_lift_max_m: float = Field(
        0.05, gt=0, le=1.0,
        description="Rise above this during the micro-lift is implausible for a 1-2 cm test lift; "
                    "the rise is clipped to this for margins (it does not veto a label).")
    lift_progress_min_m: float = Field(
        0.004, ge=0, le=0.2,
        description="A lift phase that rose less than this over its duration (longer than "
                    "stall_window_s) did not progress: STALL when the arm was commanded to lift.")

    hold_phase_required: bool = Field(
        True,
        description="SUCCESS / WEAK windows must lie in the HOLD phase (after the micro-lift motion), "
                    "so a slip during the lift itself is seen before a success is declared. Set "
                    "false for a driver whose telemetry has no HOLD phase.")

    # --- stability through the lift -----------------------------------------------------------
    aperture_drift_max: float = Field(
        0.08, ge=0, le=1,
        description="Largest allowed |aperture_norm - aperture at acquisition| during the lift "
                    "while still holding; beyond it (without collapse) the hold is WEAK.")
    slip_collapse_frac: float = Field(
        0.6, gt=0, le=1,
        description="SLIP when the aperture during the lift falls below (1 - this fraction) of the "
                    "acquired gap (i.e. it collapsed toward closed by this share of the gap).")
    effort_drop_frac: float = Field(
        0.6, gt=0, le=1,
        description="SLIP when effort during the lift falls below (1 - this fraction) of the held "
                    "effort and below hold_effort_min: the object left the fingers.")

    # --- wrist load (only when the driver measures it: Telemetry.load) --------------------------
    use_load: bool = Field(
        True,
        description="Use the wrist load when the telemetry has it: a carried object weighs the same "
                    "during the steady lift and at rest in HOLD. Without a load channel the check is "
                    "skipped.")
    pushed_up_load_n: float = Field(
        0.0, ge=-1000, le=50,
        description="SLIP instead of SUCCESS / WEAK when the wrist load at rest in HOLD is below this (N, "
                    "downward positive): carrying only ever adds weight, so a wrist pushed up means the "
                    "gripper presses on something the table supports.")
    load_drop_max_n: float = Field(
        0.5, gt=0, le=50,
        description="SLIP instead of SUCCESS / WEAK when the HOLD load is more than this (N) below the "
                    "load over the second half of the micro-lift: the lift dragged the object by "
                    "friction (pads sliding along it), and the drag vanished when the arm stopped.")

    # --- stall ----------------------------------------------------------------------------------
    stall_velocity_eps: float = Field(
        0.02, ge=0, le=1,
        description="|finger velocity| (m/s) at or below this counts as not moving (fingers pressing on "
                    "an object jitter by a few mm/s; free closing runs at ~0.1-0.2 m/s).")
    stall_window_s: float = Field(
        0.3, gt=0, le=10,
        description="The fingers must be motionless (and away from the commanded aperture) for "
                    "this long during CLOSE with no contact effort before the attempt is a STALL.")
    trust_stall_flag: bool = Field(
        False,
        description="Treat the driver's `stalled` motor flag (held for stall_window_s) as STALL. Off by "
                    "default: the PyBullet driver raises it whenever the fingers rest off their command "
                    "with low effort, which includes a light grip on an object.")
    command_tracking_eps: float = Field(
        0.05, ge=0, le=1,
        description="|aperture_norm - commanded_aperture| at or below this means the fingers "
                    "reached their command (not stalled).")

    # --- time ---------------------------------------------------------------------------------
    attempt_time_budget_s: float = Field(
        8.0, gt=0, le=600,
        description="An attempt whose telemetry spans more than this without a stable terminal "
                    "signature is TIMEOUT; so is an attempt whose telemetry ends before any "
                    "terminal signature (the motion was cut short).")

    # --- confidence --------------------------------------------------------------------------
    confidence_floor: float = Field(
        0.5, ge=0, le=1,
        description="Confidence of a label whose deciding margin is zero; it rises toward 1 as the "
                    "margin grows to the threshold's own scale. Below 0.5 nothing is emitted.")

    # --- sensor model (record only; classify never reads these) -------------------------------
    aperture_noise_m: float = Field(
        0.0004, ge=0, le=0.01,
        description="Std of Gaussian noise added to aperture readings when recording (metres).")
    effort_noise: float = Field(
        0.02, ge=0, le=0.5,
        description="Std of Gaussian noise added to normalised effort readings when recording.")
    height_noise_m: float = Field(
        0.0005, ge=0, le=0.01,
        description="Std of Gaussian noise added to end-effector height readings when recording.")
    velocity_noise: float = Field(
        0.003, ge=0, le=0.5,
        description="Std of Gaussian noise added to finger velocity readings (m/s) when recording "
                    "(an encoder-derived, filtered velocity; not the derivative of the noisy aperture).")
    load_noise_n: float = Field(
        0.3, ge=0, le=20,
        description="Std of Gaussian noise added to wrist load readings (N) when recording.")
    latency_s: float = Field(
        0.02, ge=0, le=1,
        description="Sensor latency applied when recording: each reading reports the state this "
                    "long before its timestamp.")

    # --- provenance (classify never reads it) ---------------------------------------------------
    calibration_seeds: list[int] = Field(
        default_factory=list,
        description="Recording seeds of the traces these thresholds were fitted on (written by "
                    "`bt-grasp watchdog calibrate`); `watchdog eval` reports traces from other seeds "
                    "as held out.")

    @model_validator(mode="after")
    def _consistent(self) -> WatchdogThresholds:
        if self.empty_effort_max >= self.hold_effort_min:
            raise ValueError("empty_effort_max must be below hold_effort_min")
        if self.contact_effort_min > self.hold_effort_min:
            raise ValueError("contact_effort_min must not exceed hold_effort_min")
        if self.micro_lift_min_m >= self.micro_lift_max_m:
            raise ValueError("micro_lift_min_m must be below micro_lift_max_m")
        return self

    def decision_fields(self) -> dict[str, Any]:
        """The fields classify reads (calibrate fits these; the sensor model is left alone)."""
        return {k: v for k, v in self.model_dump().items() if k not in SENSOR_FIELDS and k not in META_FIELDS}


SENSOR_FIELDS: frozenset[str] = frozenset(
    {"aperture_noise_m", "effort_noise", "height_noise_m", "velocity_noise", "latency_s", "load_noise_n"})
META_FIELDS: frozenset[str] = frozenset({"calibration_seeds"})


def thresholds_from_dict(data: dict[str, Any] | None, source: str | None = None) -> WatchdogThresholds:
    """Validate a `watchdog:` mapping; bad keys or values become a one-line UserError."""
    try:
        return WatchdogThresholds(**(data or {}))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "watchdog"
        raise UserError(f"watchdog threshold {loc}: {err['msg']}", file=source) from None
    except TypeError as exc:  # e.g. a non-mapping section
        raise UserError(f"watchdog section must be a mapping: {exc}", file=source) from None


def thresholds_from_profile(profile: Any) -> WatchdogThresholds:
    """Thresholds from a RobotProfile's `watchdog:` section (or a plain mapping), defaults elsewhere."""
    if profile is None:
        return WatchdogThresholds()
    if isinstance(profile, WatchdogThresholds):
        return profile
    if isinstance(profile, dict):
        return thresholds_from_dict(profile.get("watchdog", profile))
    section = getattr(profile, "watchdog", None)
    if section is not None and not isinstance(section, dict):
        raise UserError("watchdog section must be a mapping", file=getattr(profile, "source", None))
    return thresholds_from_dict(section, getattr(profile, "source", None))
