"""StretchDriver: the Driver protocol on a Hello Robot Stretch, through the stretch_body object model.

The driver never imports anything robot-specific at module import: `stretch_body` is imported in
`connect()` by the default robot factory, so bt_grasp installs and tests without it. Everything it
does to the robot goes through these stretch_body calls (and only these, so that
`sim.SimStretchRobot` can implement the same subset and the *same* class runs in simulation):

  robot.startup() / robot.stop() / robot.is_homed() / robot.push_command() / robot.params
  robot.end_of_arm.get_joint('stretch_gripper' | 'wrist_yaw') -> .status / .hw_valid / .pct_max_open / .params
  robot.end_of_arm.move_to('stretch_gripper' | 'wrist_yaw', x) / robot.end_of_arm.wait_until_at_setpoint(timeout)
  robot.lift.move_to(x_m) / robot.lift.move_by(x_m) / robot.lift.status / robot.lift.params
  robot.lift.hw_valid / robot.lift.motor.status / robot.lift.motor.hw_valid
  robot.arm.move_to(x_m) / robot.arm.status / robot.arm.params / robot.arm.motor.status
  robot.base.translate_by(x_m) / robot.base.rotate_by(x_r) / robot.base.set_velocity(0, 0) / robot.base.status
  robot.base.left_wheel.status / robot.base.right_wheel.status
  robot.head.move_to('head_pan' | 'head_tilt', rad) / robot.head.status / robot.head.wait_until_at_setpoint(timeout)

Status read: gripper pos_pct, effort, stalled, stall_overload, gripper_conversion.aperture_m and
wrist_yaw pos; lift/arm pos, vel and motor is_mg_moving; base x, y, theta and each wheel's
is_mg_moving; head_pan/head_tilt pos, vel. Params read: the gripper's gripper_conversion, the
lift/arm motion.default.accel_m (braking), robot.params['tool'] (an error message). A primitive
moves only by queued commands (`move_to`/`move_by`/`translate_by`/`rotate_by`, then
`push_command()`) and by status reads, never a blocking wait (see motions.py); stopping is
`set_velocity(0, 0)` on the base and `move_to` of the current (braking) position elsewhere, never
`robot.stop()`, which shuts the robot down: only close() and a failed connect() call it.

Grasp telemetry comes from the gripper servo status (stretch_body units: `pos_pct` where 0 is the
fingertips touching, `effort` in pct load with negative = closing on something, `stalled`,
`stall_overload`, `gripper_conversion.aperture_m`) and the lift position, converted into the
Watchdog's normalised `Telemetry` with the numbers in the robot profile (robots/stretch3.yaml).
The optional wrist `load` channel is left None (not measured): the nearest stretch_body reading,
`robot.lift.motor.status['effort_pct']`, mixes the carried weight with the lift's own friction and
has no calibration to newtons, and the simulated lift does not model it, so the Watchdog decides a
Stretch grasp from the gripper telemetry alone.

Time: a `clock` with now()/sleep(). On hardware it is the wall clock and the tree's tick paces the
polls; the simulated Stretch passes a clock whose sleep advances the physics (one control period
per poll), so durations are sim seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Fault, GraspPose, Observation
from bt_grasp.drivers.stretch.faults import PHYSICAL_FAULTS, SOFTWARE_FAULTS, FaultStaging
from bt_grasp.drivers.stretch.guard import StretchGuardMixin, waypoint_target
from bt_grasp.drivers.stretch.head import StretchHeadMixin
from bt_grasp.drivers.stretch.motions import Run, StretchMotions, control_period_of
from bt_grasp.drivers.stretch.navigation import BasePrimitives
from bt_grasp.drivers.stretch.options import (
    GRIPPER,
    PLACE_HALF_M,
    Clock,
    StretchKinematics,
    StretchOptions,
    WallClock,
)
from bt_grasp.drivers.stretch.primitives import ArmPrimitives
from bt_grasp.drivers.stretch.sampling import TelemetrySampling
from bt_grasp.errors import BackendUnavailable
from bt_grasp.profile import RobotProfile
from bt_grasp.watchdog.telemetry import Phase

__all__ = ["GRIPPER", "PHYSICAL_FAULTS", "PLACE_HALF_M", "SOFTWARE_FAULTS", "Clock", "StretchDriver",
           "StretchKinematics", "StretchOptions", "WallClock"]


def _default_robot_factory() -> Any:
    """A real stretch_body Robot (import deferred: stretch_body is an optional extra)."""
    import stretch_body.robot as sb_robot  # type: ignore[import-not-found]

    return sb_robot.Robot()


class StretchDriver(ArmPrimitives, BasePrimitives, StretchMotions, TelemetrySampling, FaultStaging,
                    StretchHeadMixin, StretchGuardMixin):
    """Driver (+ Streaming, Receptacles, MobileBase, Head, GraspChecker, RealTime, FaultInjectable) for a Stretch with the RE2 'stretch_gripper' tool.

    robot_factory: zero-argument callable returning a stretch_body-like Robot (default: a real
    `stretch_body.robot.Robot()`); camera: an object with `read() -> (rgb, depth_m, K,
    annotations | None)` and optional `close()` (default: the head RealSense, opened on first
    observe); dry_run: connect and read telemetry only — no call that moves a joint is ever made;
    clock: see `Clock` (default wall time).
    """

    name = "stretch"

    def __init__(self, profile: RobotProfile, robot_factory: Callable[[], Any] | None = None,
                 camera: Any = None, dry_run: bool = False, clock: Clock | None = None) -> None:
        self.profile = profile
        self.opts = StretchOptions.from_profile(profile)
        self.kin = StretchKinematics(**(self.opts.kinematics or {}))
        self.robot_factory = robot_factory or _default_robot_factory
        self.camera = camera
        self.dry_run = dry_run
        self.clock: Clock = clock or WallClock()
        self.control_period = control_period_of(profile)
        self.robot: Any = None
        self.faults: list[Fault] = []
        self._active: list[Fault] = []
        self._cmd_pct = 0.0
        self.max_aperture = profile.gripper.max_aperture_m
        self.min_aperture = profile.gripper.min_aperture_m
        self._guard()  # driver_options.guard is checked now, not at the first motion

    # ------------------------------------------------------------------ connection
    def connect(self) -> None:
        """Build the robot, start it and check it is usable; else BackendUnavailable (one line)."""
        if self.robot is not None:
            return
        try:
            robot = self.robot_factory()
        except BackendUnavailable:
            raise
        except ImportError as exc:
            raise BackendUnavailable(
                f"stretch_body is not importable ({exc}); install it with pip install 'bt_grasp[stretch]'") from None
        except KeyError as exc:
            raise BackendUnavailable(
                f"stretch_body configuration missing {exc}: set HELLO_FLEET_PATH and HELLO_FLEET_ID "
                "to your robot's fleet directory (docs/stretch.md)") from None
        except SystemExit as exc:
            raise BackendUnavailable(
                f"stretch_body exited (code {exc.code}) while loading parameters: check the fleet files under "
                "$HELLO_FLEET_PATH/$HELLO_FLEET_ID (stretch_user_params.yaml, stretch_configuration_params.yaml)"
            ) from None
        problem = self._startup_problem(robot)
        if problem:
            try:
                robot.stop()
            except (Exception, SystemExit):  # noqa: BLE001 - already failing; report the first cause
                pass
            raise BackendUnavailable(f"Stretch unavailable: {problem}")
        self.robot = robot

    @staticmethod
    def _startup_problem(robot: Any) -> str | None:
        """Why this robot cannot be used, or None. Each reason names the fix."""
        try:
            if not robot.startup():
                return ("robot.startup() failed: is the robot on, its USB devices present, and no other "
                        "process holding it (stretch_free_robot_process.py)?")
            gripper = robot.end_of_arm.get_joint(GRIPPER)
            if gripper is None:
                return f"no '{GRIPPER}' on the end of arm (tool {getattr(robot, 'params', {}).get('tool')!r})"
            if not getattr(gripper, "hw_valid", False):
                return "the gripper servo is not responding (hw_valid false): check the wrist cable and power"
            lift_ok = getattr(robot.lift, "hw_valid", None)
            if lift_ok is None:
                lift_ok = getattr(robot.lift.motor, "hw_valid", False)
            if not lift_ok:
                return "the lift stepper is not responding (hw_valid false): check power and the runstop"
            if not robot.is_homed():
                return "robot is not homed: run stretch_robot_home.py, then retry"
        except SystemExit as exc:
            return f"stretch_body exited during startup (code {exc.code})"
        except KeyError as exc:
            return f"stretch_body status or parameter {exc} missing during startup"
        return None

    # ------------------------------------------------------------------ Driver API
    def reset(self, episode: int = 0, seed: int = 0, target: str | None = None) -> Observation:
        """Connect and go to the ready pose (lift up, arm in, gripper half open, head on the table).

        Injected faults are kept: they are meant for the next primitives, whenever they are staged.
        `target` (the goal object) matters only to simulators, which put it in the scene."""
        self.connect()
        if not self.dry_run:
            r = self.robot
            r.end_of_arm.move_to("wrist_yaw", 0.0)
            r.head.move_to("head_pan", self.opts.head_ready[0])
            r.head.move_to("head_tilt", self.opts.head_ready[1])
            self._cmd_pct = 30.0
            r.end_of_arm.move_to(GRIPPER, self._cmd_pct)
            t0 = self.clock.now()
            self._drain(self._move(Run("reset", t0, t0 + 60.0), Phase.APPROACH, lift=self.opts.ready_lift_m,
                                   arm=0.0))
            r.head.wait_until_at_setpoint(5.0)
            r.end_of_arm.wait_until_at_setpoint(5.0)
        return self.observe()

    def head_pose(self) -> tuple[float, float]:
        st = self.robot.head.status
        return float(st["head_pan"]["pos"]), float(st["head_tilt"]["pos"])

    def observe(self) -> Observation:
        """One RGB-D frame with T_cam_base from the head pan/tilt through the URDF chain."""
        self.connect()
        if self.camera is None:
            from bt_grasp.drivers.stretch.camera import RealSenseHeadCamera

            self.camera = RealSenseHeadCamera()
        from bt_grasp.drivers.stretch.camera import head_camera_pose, odometry_pose

        rgb, depth, K, annotations = self.camera.read()
        pan, tilt = self.head_pose()
        st = self.robot.base.status
        T = odometry_pose(float(st["x"]), float(st["y"]), float(st["theta"])) @ head_camera_pose(pan, tilt)
        obs = Observation(rgb=rgb, depth=depth, K=K, T_cam_base=T, clock=self.clock.now(), annotations=annotations)
        self._remember_scene(obs)
        return obs

    def feasible(self, waypoints: list[Any], targets: list[np.ndarray] | None = None) -> tuple[bool, str]:
        """Every waypoint reachable by lift, arm and a base shift along x (straight-out gripper), and
        collision-free with the path between waypoints (guard.py: the last observed scene except
        around `targets` and GraspPose waypoints, the robot's own body, the table top).

        A waypoint is a GraspPose, an xyz (or xyz + quaternion) array, or a 4x4 pose. The wrist yaw
        is always 0, so the fingers close along base x: a GraspPose whose closing axis (its x axis,
        projected on the floor) is more than max_closing_axis_deg off base x is infeasible, and a
        grasp planner's next candidate gets its turn. Nothing moves."""
        positions: list[np.ndarray] = []
        targets = list(targets or []) + [t for t in map(waypoint_target, waypoints) if t is not None]
        for i, w in enumerate(waypoints):
            p = _position(w)
            if p is None or not np.all(np.isfinite(p)):
                return False, f"infeasible: waypoint {i} is not a finite position"
            if isinstance(w, GraspPose):
                off = _closing_axis_off_x_deg(w.orientation)
                if off is None or off > self.opts.max_closing_axis_deg:
                    return False, (f"infeasible: closing axis {off if off is not None else float('nan'):.0f} deg "
                                   "off base x (the Stretch gripper closes along x)")
            dx, arm, lift = self.kin.joints_for(p)
            lift = max(lift, self.opts.table_height_m + self.opts.min_grasp_height_m - self.kin.grasp_z0)
            if not (self.kin.lift_range[0] <= lift <= self.kin.lift_range[1]):
                return False, f"infeasible: lift {lift:.2f} m out of range at waypoint {i}"
            if not (self.kin.arm_range[0] - 0.005 <= arm <= self.kin.arm_range[1] + 0.005):
                return False, f"infeasible: arm {arm:.2f} m out of range at waypoint {i}"
            if abs(dx) > self.opts.max_base_travel_m:
                return False, f"infeasible: base shift {dx:.2f} m beyond {self.opts.max_base_travel_m} m"
            positions.append(self.kin.grasp_centre(dx, arm, lift))
        return self._collision_free(positions, targets)

    # ------------------------------------------------------------------ stop / close
    def stop(self) -> None:
        """Halt every joint where it is: steppers re-targeted to their current position, base to zero
        velocity, head and wrist held; the gripper is left alone when it is squeezing something
        (re-commanding its position would drop the object), else held where it is."""
        r = self.robot
        if r is None or self.dry_run:
            return
        for joint in (r.lift, r.arm):
            joint.move_to(_braking_point(joint))
        r.base.set_velocity(0.0, 0.0)
        r.push_command()
        for joint in ("head_pan", "head_tilt"):
            r.head.move_to(joint, float(r.head.status[joint]["pos"]))
        yaw = r.end_of_arm.get_joint("wrist_yaw")
        if yaw is not None:
            r.end_of_arm.move_to("wrist_yaw", float(yaw.status["pos"]))
        g = self._gripper()
        if g is not None and not g.status["stalled"]:
            self._cmd_pct = float(g.status["pos_pct"])
            r.end_of_arm.move_to(GRIPPER, self._cmd_pct)

    def close(self) -> None:
        """Release the robot (stretch_body's stop(): threads down, ports closed) and the camera."""
        if self.camera is not None and hasattr(self.camera, "close"):
            self.camera.close()
        if self.robot is not None:
            self.robot.stop()
            self.robot = None


def _position(w: Any) -> np.ndarray | None:
    """The xyz of a waypoint given as GraspPose, xyz / xyz+quat array, or 4x4 matrix."""
    if isinstance(w, GraspPose):
        return np.asarray(w.position, dtype=float)[:3]
    a = np.asarray(w, dtype=float)
    if a.shape == (4, 4):
        return a[:3, 3]
    return a[:3] if a.ndim == 1 and a.shape[0] >= 3 else None


def _closing_axis_off_x_deg(quat: np.ndarray) -> float | None:
    """Angle between a gripper frame's x axis (closing direction), projected on the floor, and
    the base x line (either sign); None for a non-finite quaternion or a vertical closing axis."""
    q = np.asarray(quat, dtype=float)
    if q.shape != (4,) or not np.all(np.isfinite(q)) or np.linalg.norm(q) < 1e-9:
        return None
    x, y, z, w = q / np.linalg.norm(q)
    ax = np.array([1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w)])
    h = math.hypot(ax[0], ax[1])
    if h < 0.3:
        return None
    return math.degrees(math.acos(min(1.0, abs(ax[0]) / h)))


def _braking_point(joint: Any) -> float:
    """Where a prismatic joint moving at status['vel'] can stop at its default deceleration:
    re-targeting the current position instead would overshoot and come back."""
    pos, vel = float(joint.status["pos"]), float(joint.status.get("vel", 0.0))
    try:
        acc = float(joint.params["motion"]["default"]["accel_m"])
    except (KeyError, TypeError, AttributeError):
        return pos
    return pos + vel * abs(vel) / (2 * acc) if acc > 0 else pos


