"""StretchDriver: the Driver protocol on a Hello Robot Stretch, through the stretch_body object model.

The driver never imports anything robot-specific at module import: `stretch_body` is imported in
`connect()` by the default robot factory, so bt_grasp installs and tests without it. Everything it
does to the robot goes through these stretch_body calls (and only these, so that
`sim.SimStretchRobot` can implement the same subset and the *same* class runs in simulation):

  robot.startup() / robot.stop() / robot.is_homed() / robot.push_command()
  robot.end_of_arm.get_joint('stretch_gripper').{status, hw_valid, pct_max_open}
  robot.end_of_arm.move_to('stretch_gripper' | 'wrist_yaw', x) / .wait_until_at_setpoint(timeout)
  robot.lift / robot.arm .move_to(x_m) .move_by(x_m) .status['pos'] .motor.status[...] .motor.hw_valid
  robot.base.translate_by(x_m) / rotate_by(x_r) / set_velocity(0, 0) / wait_while_is_moving(timeout)
  robot.head.move_to('head_pan' | 'head_tilt', rad) / .status / .wait_until_at_setpoint(timeout)

Grasp telemetry comes from the gripper servo status (stretch_body units: `pos_pct` where 0 is the
fingertips touching, `effort` in pct load with negative = closing on something, `stalled`,
`stall_overload`, `gripper_conversion.aperture_m`) and the lift position, converted into the
Watchdog's normalised `Telemetry` with the numbers in the robot profile (robots/stretch3.yaml).
The optional wrist `load` channel is left None (not measured): the nearest stretch_body reading,
`robot.lift.motor.status['effort_pct']`, mixes the carried weight with the lift's own friction and
has no calibration to newtons, and the simulated lift does not model it, so the Watchdog decides a
Stretch grasp from the gripper telemetry alone.

Time: a `clock` with now()/sleep() paces the polling loops. On hardware it is the wall clock; the
simulated Stretch passes a clock whose sleep advances the physics, so durations are sim seconds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from bt_grasp.drivers.base import FAULT_KINDS, Execution, Fault, GraspPose, Observation
from bt_grasp.errors import BackendUnavailable, UserError
from bt_grasp.profile import RobotProfile
from bt_grasp.watchdog.telemetry import Phase, Sample, Telemetry

GRIPPER = "stretch_gripper"
# Faults a real robot cannot stage: they need the simulator (SimStretchDriver implements them).
PHYSICAL_FAULTS = frozenset({"remove_target_on_close", "friction", "mass", "block_fingers", "block_lift",
                             "never_finish"})
# Faults the driver itself stages on any backend (software faults on the data path).
SOFTWARE_FAULTS = frozenset({"grasp_offset", "driver_exception", "nan_telemetry", "latency"})


class Clock(Protocol):
    """Time source of the polling loops (wall time on hardware, sim time in simulation)."""

    def now(self) -> float: ...

    def sleep(self, dt: float) -> None: ...


class WallClock:
    """Real time: what a real Stretch runs on."""

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
    poll_hz: float = 20.0
    primitive_timeout_s: float = 40.0
    settle_s: float = 0.3
    hold_s: float = 0.5
    dry_run_window_s: float = 0.5
    max_base_travel_m: float = 0.6
    max_closing_axis_deg: float = 25.0
    places: dict[str, list[float]] | None = None
    nav_places: dict[str, list[float]] | None = None  # name -> (x, y, theta) standoff in odometry
    kinematics: dict[str, Any] | None = None
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


def _default_robot_factory() -> Any:
    """A real stretch_body Robot (import deferred: stretch_body is an optional extra)."""
    import stretch_body.robot as sb_robot  # type: ignore[import-not-found]

    return sb_robot.Robot()


class _Timeout(Exception):
    """A primitive ran past its deadline (the driver stops the robot and reports 'timeout')."""


class StretchDriver:
    """Driver (+ MobileBase, FaultInjectable) for a Stretch with the RE2 'stretch_gripper' tool.

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
        self.robot: Any = None
        self.faults: list[Fault] = []
        self._active: list[Fault] = []
        self._cmd_pct = 0.0
        self.max_aperture = profile.gripper.max_aperture_m
        self.min_aperture = profile.gripper.min_aperture_m

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

    # ------------------------------------------------------------------ faults
    def inject(self, fault: Fault) -> None:
        """Stage a fault for the next matching primitive. Physical kinds need the simulator."""
        if fault.kind not in FAULT_KINDS:
            raise UserError(f"unknown fault kind {fault.kind!r} (known: {', '.join(FAULT_KINDS)})")
        if fault.kind in PHYSICAL_FAULTS and not self._simulated():
            raise BackendUnavailable(f"fault {fault.kind!r} needs the simulated Stretch (a real robot cannot stage it)")
        self.faults.append(fault)

    def clear_faults(self) -> None:
        self.faults.clear()
        self._active = []

    def _simulated(self) -> bool:
        return False

    def _apply_physical_faults(self, faults: list[Fault], target: np.ndarray | None) -> None:
        """Hook for the simulator; the real robot never gets here (inject refuses)."""

    def _end_physical_faults(self) -> None:
        """Hook for the simulator: obstructions of the finished primitive go away."""

    def _begin(self, primitive: str, target: np.ndarray | None = None) -> list[Fault]:
        """Connect, pick the faults for this primitive, stage them, raise the injected exception."""
        self.connect()
        active = [f for f in self.faults if f.primitive in (None, primitive)]
        for f in active:
            if f.once:
                self.faults.remove(f)
        self._active = active
        if any(f.kind == "driver_exception" for f in active):
            raise RuntimeError(f"injected driver exception in {primitive}")
        phys = [f for f in active if f.kind in PHYSICAL_FAULTS]
        if phys:
            self._apply_physical_faults(phys, target)
        return active

    def _finish(self, primitive: str, tel: Telemetry, t0: float, fault: str | None,
                info: dict[str, Any] | None = None) -> Execution:
        """Apply the data-path faults to the telemetry and package the Execution."""
        self._end_physical_faults()
        for f in self._active:
            if f.kind == "nan_telemetry" and len(tel):
                start = int(len(tel) * float(f.params.get("from_frac", 0.5)))
                for col in ("aperture_m", "aperture_norm", "effort", "velocity", "ee_height"):
                    getattr(tel, col)[start:] = np.nan
            elif f.kind == "latency" and len(tel):
                tel = _delay(tel, float(f.params.get("seconds", 0.1)))
        self._active = []
        return Execution(telemetry=tel, duration=self.clock.now() - t0, fault=fault,
                         info={"primitive": primitive, **(info or {})})

    # ------------------------------------------------------------------ status and telemetry
    def _gripper(self) -> Any:
        return self.robot.end_of_arm.get_joint(GRIPPER)

    def _pct_to_aperture(self, pct: float) -> float:
        gc = self._gripper().params.get("gripper_conversion", {})
        slope = (gc.get("open_aperture_m", 0.09) - gc.get("closed_aperture_m", 0.0)) / (
            gc.get("open_robotis", 70.0) - gc.get("closed_robotis", 0.0))
        return slope * (pct - gc.get("closed_robotis", 0.0)) + gc.get("closed_aperture_m", 0.0)

    def _aperture_to_pct(self, aperture: float) -> float:
        a1 = self._pct_to_aperture(1.0) - self._pct_to_aperture(0.0)
        return (aperture - self._pct_to_aperture(0.0)) / a1

    def _norm(self, aperture: float) -> float:
        span = max(1e-6, self.max_aperture - self.min_aperture)
        return float(np.clip((aperture - self.min_aperture) / span, 0.0, 1.0))

    def _sample(self, t0: float, phase: Phase, prev: Sample | None) -> Sample:
        st = self._gripper().status
        aperture = float(st["gripper_conversion"]["aperture_m"])
        t = self.clock.now() - t0
        vel = 0.0 if prev is None or t <= prev.t else (aperture - prev.aperture_m) / (t - prev.t)
        ee = float(self.robot.lift.status["pos"]) + self.kin.grasp_z0 - self.opts.table_height_m
        return Sample(t=t, aperture_m=aperture, aperture_norm=self._norm(aperture),
                      commanded_aperture=self._norm(self._pct_to_aperture(self._cmd_pct)),
                      effort=abs(float(st["effort"])) / 100.0, velocity=vel, ee_height=ee, phase=int(phase),
                      stalled=bool(st["stalled"]), overload=bool(st["stall_overload"]))

    def _record(self, samples: list[Sample], t0: float, phase: Phase, done: Callable[[], bool],
                max_s: float, deadline: float, min_s: float = 0.0) -> bool:
        """Poll status at poll_hz into samples until done() (after min_s) or max_s; False if max_s ran
        out. Raises _Timeout past the primitive's deadline."""
        dt = 1.0 / self.opts.poll_hz
        start = self.clock.now()
        while True:
            samples.append(self._sample(t0, phase, samples[-1] if samples else None))
            now = self.clock.now()
            if now - start >= min_s and done():
                return True
            if now >= deadline:
                raise _Timeout(phase.name)
            if now - start >= max_s:
                return False
            self.clock.sleep(min(dt, max(1e-3, deadline - now)))

    def _deadline(self, timeout: float | None) -> float:
        return self.clock.now() + (timeout if timeout is not None else self.opts.primitive_timeout_s)

    # ------------------------------------------------------------------ motion helpers
    def _move_steppers(self, samples: list[Sample], t0: float, phase: Phase, deadline: float,
                       lift: float | None = None, arm: float | None = None, base_dx: float | None = None,
                       max_s: float = 15.0) -> bool:
        """Queue lift/arm/base moves, push them together, record until they stop; True if arrived."""
        r = self.robot
        if lift is not None:
            r.lift.move_to(float(np.clip(lift, *self.kin.lift_range)))
        if arm is not None:
            r.arm.move_to(float(np.clip(arm, *self.kin.arm_range)))
        if base_dx is not None and abs(base_dx - float(r.base.status["x"])) > 1e-4:
            r.base.translate_by(base_dx - float(r.base.status["x"]))
        r.push_command()

        def stopped() -> bool:
            lm, am = r.lift.motor.status, r.arm.motor.status
            base_busy = any(w.status.get("is_mg_moving", False) for w in (r.base.left_wheel, r.base.right_wheel))
            return not (lm["is_mg_moving"] or am["is_mg_moving"] or base_busy)

        self._record(samples, t0, phase, stopped, max_s, deadline, min_s=0.1)
        ok = True
        if lift is not None:
            ok = ok and abs(r.lift.status["pos"] - np.clip(lift, *self.kin.lift_range)) < 0.01
        if arm is not None:
            ok = ok and abs(r.arm.status["pos"] - np.clip(arm, *self.kin.arm_range)) < 0.01
        return ok

    def _gripper_to(self, pct: float, samples: list[Sample], t0: float, phase: Phase, deadline: float,
                    max_s: float = 4.0) -> None:
        """Command the gripper and record until it reaches the command or stalls (0.3 s still)."""
        g = self._gripper()
        self._cmd_pct = float(np.clip(pct, -100.0, getattr(g, "pct_max_open", 50.0)))
        self.robot.end_of_arm.move_to(GRIPPER, self._cmd_pct)
        still_since: list[float | None] = [None]

        def settled() -> bool:
            st = g.status
            if abs(st["pos_pct"] - self._cmd_pct) < 1.5:
                return True
            if st["stalled"]:
                now = self.clock.now()
                still_since[0] = now if still_since[0] is None else still_since[0]
                return now - still_since[0] >= 0.3
            still_since[0] = None
            return False

        self._record(samples, t0, phase, settled, max_s, deadline, min_s=0.2)

    def _back_off(self) -> None:
        """Lower the squeeze after a grasp so the Dynamixel does not sit at stall current and overheat
        (stretch_body's sentry does a blunter version of this at stall_overload)."""
        g = self._gripper()
        st = g.status
        if st["stalled"] and abs(st["effort"]) > 0 and self._cmd_pct < st["pos_pct"]:
            self._cmd_pct = float(st["pos_pct"] - self.opts.hold_squeeze_pct)
            self.robot.end_of_arm.move_to(GRIPPER, self._cmd_pct)

    def _dry(self, primitive: str, phase: Phase) -> Execution:
        """Dry run: read telemetry for a short window, command nothing."""
        t0 = self.clock.now()
        samples: list[Sample] = []
        self._record(samples, t0, phase, lambda: False, self.opts.dry_run_window_s, t0 + 60.0)
        return Execution(Telemetry.from_samples(samples), self.clock.now() - t0, "dry_run: no motion commanded",
                         {"primitive": primitive})

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
            samples: list[Sample] = []
            t0 = self.clock.now()
            self._move_steppers(samples, t0, Phase.APPROACH, t0 + 60.0, lift=self.opts.ready_lift_m, arm=0.0)
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
        return Observation(rgb=rgb, depth=depth, K=K, T_cam_base=T, clock=self.clock.now(),
                           annotations=annotations)

    def feasible(self, waypoints: list[Any]) -> tuple[bool, str]:
        """Every waypoint reachable by lift, arm and a base shift along x (straight-out gripper).

        A waypoint is a GraspPose, an xyz (or xyz + quaternion) array, or a 4x4 pose. The wrist yaw
        is always 0, so the fingers close along base x: a GraspPose whose closing axis (its x axis,
        projected on the floor) is more than max_closing_axis_deg off base x is infeasible, and a
        grasp planner's next candidate gets its turn. Nothing moves."""
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
        return True, ""

    def grasp(self, pose: GraspPose, width: float, force: float, timeout: float | None = None) -> Execution:
        """Approach from above, close at close_pct, settle, micro-lift, hold; then back off.

        `force` is not used: the Stretch gripper is position-controlled, its squeeze is set by the
        profile's close_pct (effort grows with how far the command is past the object).
        """
        target = np.asarray(pose.position, dtype=float).copy()
        active = self._begin("grasp", target)
        if self.dry_run:
            return self._dry("grasp", Phase.CLOSE)
        for f in active:
            if f.kind == "grasp_offset":
                target[0] += float(f.params.get("offset_m", 0.05))
        # the fingertip pads reach ~2.5 cm below the grasp centre: keep them off the table
        target[2] = max(target[2], self.opts.table_height_m + self.opts.min_grasp_height_m)
        ok, why = self.feasible([target])
        t0 = self.clock.now()
        if not ok:
            return self._finish("grasp", Telemetry.empty(), t0, why)
        deadline = self._deadline(timeout)
        samples: list[Sample] = []
        dx, arm, lift = self.kin.joints_for(target)
        info: dict[str, Any] = {"target": target.tolist(), "joints": {"base_dx": dx, "arm": arm, "lift": lift}}
        try:
            open_pct = min(self._gripper().pct_max_open, self._aperture_to_pct(max(width, 0.0) + 0.03))
            self.robot.end_of_arm.move_to("wrist_yaw", 0.0)
            self._gripper_to(open_pct, samples, t0, Phase.APPROACH, deadline)
            up = lift + self.opts.approach_clearance_m
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, lift=max(up, self.robot.lift.status["pos"]))
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, arm=arm, base_dx=dx)
            reached = self._move_steppers(samples, t0, Phase.APPROACH, deadline, lift=lift)
            info["approach_reached"] = reached
            self._gripper_to(self.opts.close_pct, samples, t0, Phase.CLOSE, deadline)
            self._record(samples, t0, Phase.SETTLE, lambda: False, self.opts.settle_s, deadline)
            info["lift_before"] = float(self.robot.lift.status["pos"])
            self.robot.lift.move_by(self.opts.micro_lift_m)
            self.robot.push_command()
            self._record(samples, t0, Phase.MICRO_LIFT, lambda: not self.robot.lift.motor.status["is_mg_moving"],
                         3.0, deadline, min_s=0.1)
            self._record(samples, t0, Phase.HOLD, lambda: False, self.opts.hold_s, deadline)
            info["lift_after"] = float(self.robot.lift.status["pos"])
            info["pos_pct"] = float(self._gripper().status["pos_pct"])
            info["effort_pct"] = float(self._gripper().status["effort"])
            self._back_off()
            fault = None
        except _Timeout as exc:
            self.stop()
            fault, info["timeout_phase"] = "timeout", str(exc)
        tel = Telemetry.from_samples(samples)
        return self._finish("grasp", tel, t0, fault, info)

    def lift(self, dz: float, timeout: float | None = None) -> Execution:
        """Raise (or lower) the lift by dz metres, recording the gripper while it moves."""
        self._begin("lift", None)
        if self.dry_run:
            return self._dry("lift", Phase.HOLD)
        t0, deadline = self.clock.now(), self._deadline(timeout)
        samples: list[Sample] = []
        fault: str | None = None
        try:
            goal = self.robot.lift.status["pos"] + dz
            if not self._move_steppers(samples, t0, Phase.MICRO_LIFT, deadline, lift=goal):
                fault = "blocked: lift did not reach its goal"
            self._record(samples, t0, Phase.HOLD, lambda: False, 0.2, deadline)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("lift", Telemetry.from_samples(samples), t0, fault)

    def open_gripper(self, timeout: float | None = None) -> Execution:
        self._begin("open_gripper", None)
        if self.dry_run:
            return self._dry("open_gripper", Phase.HOLD)
        t0, deadline = self.clock.now(), self._deadline(timeout)
        samples: list[Sample] = []
        fault: str | None = None
        try:
            self._gripper_to(self._gripper().pct_max_open, samples, t0, Phase.HOLD, deadline)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("open_gripper", Telemetry.from_samples(samples), t0, fault)

    def place(self, target: str, timeout: float | None = None) -> Execution:
        """Carry to a named place (driver_options.places, base-frame point of the drop), release."""
        self._begin("place", None)
        if self.dry_run:
            return self._dry("place", Phase.HOLD)
        t0 = self.clock.now()
        places = self.opts.places or {}
        if target not in places:
            return self._finish("place", Telemetry.empty(), t0,
                                f"infeasible: unknown place {target!r} (known: {', '.join(places) or 'none'})")
        p = np.asarray(places[target], dtype=float)
        drop = p + np.array([0.0, 0.0, 0.12])
        ok, why = self.feasible([drop])
        if not ok:
            return self._finish("place", Telemetry.empty(), t0, why)
        deadline = self._deadline(timeout)
        samples: list[Sample] = []
        fault: str | None = None
        dx, arm, lift = self.kin.joints_for(drop)
        try:
            self._move_steppers(samples, t0, Phase.HOLD, deadline, lift=max(lift, self.robot.lift.status["pos"]))
            self._move_steppers(samples, t0, Phase.HOLD, deadline, arm=arm, base_dx=dx)
            self._move_steppers(samples, t0, Phase.HOLD, deadline, lift=lift)
            self._gripper_to(self._gripper().pct_max_open, samples, t0, Phase.HOLD, deadline)
            self._record(samples, t0, Phase.HOLD, lambda: False, 0.5, deadline)
            self._move_steppers(samples, t0, Phase.HOLD, deadline, arm=0.0)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("place", Telemetry.from_samples(samples), t0, fault, {"place": target})

    def place_region(self, target: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Box around a named place (driver_options.places): PLACE_HALF_M either side in x and y,
        from 5 cm below the drop point to 15 cm above it (Receptacles)."""
        places = self.opts.places or {}
        if target not in places:
            return None
        p = np.asarray(places[target], dtype=float)
        half = np.array([PLACE_HALF_M, PLACE_HALF_M, 0.0])
        return p - half - np.array([0.0, 0.0, 0.05]), p + half + np.array([0.0, 0.0, 0.15])

    def push(self, start: np.ndarray, end: np.ndarray, height: float, timeout: float | None = None) -> Execution:
        """Push with the closed fingertips from start to end (base-frame xy) with the grasp centre at
        base-frame z = `height` (kept min_grasp_height_m above the table), in 10 straight segments
        of base x + arm moves."""
        s_xy, e_xy = np.asarray(start, dtype=float)[:2], np.asarray(end, dtype=float)[:2]
        z = max(float(height), self.opts.table_height_m + self.opts.min_grasp_height_m)
        a, b = np.array([s_xy[0], s_xy[1], z]), np.array([e_xy[0], e_xy[1], z])
        self._begin("push", a)
        if self.dry_run:
            return self._dry("push", Phase.APPROACH)
        t0 = self.clock.now()
        ok, why = self.feasible([a, b, a + [0, 0, self.opts.approach_clearance_m]])
        if not ok:
            return self._finish("push", Telemetry.empty(), t0, why)
        deadline = self._deadline(timeout)
        samples: list[Sample] = []
        fault: str | None = None
        try:
            self._gripper_to(0.0, samples, t0, Phase.APPROACH, deadline)
            dx, arm, lift = self.kin.joints_for(a)
            self._move_steppers(samples, t0, Phase.APPROACH, deadline,
                                lift=max(lift + self.opts.approach_clearance_m, self.robot.lift.status["pos"]))
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, arm=arm, base_dx=dx)
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, lift=lift)
            for k in range(1, 11):
                dx, arm, _ = self.kin.joints_for(a + (b - a) * k / 10)
                self._move_steppers(samples, t0, Phase.APPROACH, deadline, arm=arm, base_dx=dx)
            self._move_steppers(samples, t0, Phase.APPROACH, deadline, lift=lift + self.opts.approach_clearance_m)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("push", Telemetry.from_samples(samples), t0, fault)

    # ------------------------------------------------------------------ MobileBase
    def nav_to(self, place: Any, timeout: float | None = None) -> Execution:
        """Drive to (x, y[, theta]) in the reset-time odometry frame: turn, drive, turn.

        A place name is looked up in driver_options.nav_places (standoff poses measured once on
        the robot's map), so trees can say nav_to(receptacle) on hardware too."""
        self._begin("nav_to", None)
        if self.dry_run:
            return self._dry("nav_to", Phase.HOLD)
        t0, deadline = self.clock.now(), self._deadline(timeout)
        if isinstance(place, str):
            named = self.opts.nav_places or {}
            if place not in named:
                return self._finish("nav_to", Telemetry.empty(), t0,
                                    f"infeasible: unknown place {place!r} "
                                    f"(driver_options.nav_places knows: {', '.join(named) or 'none'})")
            place = named[place]
        try:
            x, y = float(place[0]), float(place[1])
            theta = float(place[2]) if len(place) > 2 else None
        except (TypeError, ValueError, IndexError):
            return self._finish("nav_to", Telemetry.empty(), t0, f"infeasible: nav_to needs (x, y[, theta]), got {place!r}")
        st = self.robot.base.status
        cx, cy, cth = float(st["x"]), float(st["y"]), float(st["theta"])
        heading = math.atan2(y - cy, x - cx)
        steps = [("rotate", _wrap(heading - cth)), ("translate", math.hypot(x - cx, y - cy))]
        if theta is not None:
            steps.append(("rotate", _wrap(theta - heading)))
        samples: list[Sample] = []
        fault: str | None = None
        try:
            for kind, amount in steps:
                if abs(amount) < 1e-4:
                    continue
                if kind == "rotate":
                    self.robot.base.rotate_by(amount)
                else:
                    self.robot.base.translate_by(amount)
                self.robot.push_command()
                self._record(samples, t0, Phase.HOLD, lambda: not any(
                    w.status.get("is_mg_moving", False) for w in (self.robot.base.left_wheel,
                                                                  self.robot.base.right_wheel)),
                    60.0, deadline, min_s=0.1)
        except _Timeout:
            self.stop()
            fault = "timeout"
        return self._finish("nav_to", Telemetry.from_samples(samples), t0, fault)

    def gaze_at(self, point: np.ndarray, timeout: float | None = None) -> Execution:
        """Point the head camera at a base-frame point (pan about z, tilt down to it)."""
        self._begin("gaze_at", None)
        if self.dry_run:
            return self._dry("gaze_at", Phase.HOLD)
        from bt_grasp.drivers.stretch.camera import gaze_angles, odometry_pose

        t0 = self.clock.now()
        st = self.robot.base.status
        T_odom = odometry_pose(float(st["x"]), float(st["y"]), float(st["theta"]))
        p_base = np.linalg.inv(T_odom) @ np.append(np.asarray(point, dtype=float)[:3], 1.0)
        pan, tilt = gaze_angles(p_base[:3])
        self.robot.head.move_to("head_pan", pan)
        self.robot.head.move_to("head_tilt", tilt)
        arrived = self.robot.head.wait_until_at_setpoint(timeout if timeout is not None else 5.0)
        return self._finish("gaze_at", Telemetry.empty(), t0, None if arrived else "timeout",
                            {"pan": pan, "tilt": tilt})

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


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


def _delay(tel: Telemetry, seconds: float) -> Telemetry:
    """Telemetry as a sensor `seconds` late would report it (values shifted, timestamps kept)."""
    t = tel.t
    idx = np.searchsorted(t, t - seconds, side="right") - 1
    idx = np.clip(idx, 0, len(t) - 1)
    cols = tel.to_dict()
    for c in ("aperture_m", "aperture_norm", "effort", "velocity", "ee_height", "stalled", "overload"):
        cols[c] = cols[c][idx]
    return Telemetry(**cols)

