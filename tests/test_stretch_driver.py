"""StretchDriver without a robot: start-up checks on fake stretch_body objects, dry run, faults."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bt_grasp.drivers.base import Fault, GraspPose
from bt_grasp.drivers.stretch.driver import StretchDriver
from bt_grasp.drivers.stretch.factory import make_stretch_driver
from bt_grasp.errors import BackendUnavailable, UserError
from bt_grasp.profile import load_profile


@pytest.fixture(scope="module")
def profile():
    return load_profile("robots/stretch3.yaml")


class _Joint:
    def __init__(self, hw_valid: bool = True) -> None:
        self.hw_valid = hw_valid
        self.params: dict[str, Any] = {}
        self.status: dict[str, Any] = {"pos_pct": 0.0, "effort": 0.0, "stalled": True, "stall_overload": False,
                                       "gripper_conversion": {"aperture_m": 0.0}, "pos": 0.0}


class _EndOfArm:
    def __init__(self, gripper: _Joint | None) -> None:
        self.gripper = gripper

    def get_joint(self, name: str) -> _Joint | None:
        return self.gripper if name == "stretch_gripper" else None


class _Motor:
    def __init__(self, hw_valid: bool) -> None:
        self.hw_valid = hw_valid


class _Lift:
    def __init__(self, hw_valid: bool) -> None:
        self.motor = _Motor(hw_valid)  # a real PrismaticJoint keeps hw_valid on its stepper
        self.status = {"pos": 0.5}


class FakeRobot:
    """Just enough of stretch_body.robot.Robot for the start-up checks."""

    def __init__(self, startup_ok: bool = True, homed: bool = True, gripper_ok: bool = True,
                 lift_ok: bool = True, has_gripper: bool = True) -> None:
        self._startup_ok, self._homed = startup_ok, homed
        self.end_of_arm = _EndOfArm(_Joint(gripper_ok) if has_gripper else None)
        self.lift = _Lift(lift_ok)
        self.params = {"tool": "tool_none"}
        self.stopped = False

    def startup(self) -> bool:
        return self._startup_ok

    def is_homed(self) -> bool:
        return self._homed

    def stop(self) -> None:
        self.stopped = True


def _raise(exc: BaseException):
    def factory() -> Any:
        raise exc
    return factory


@pytest.mark.parametrize("factory,needle", [
    (lambda: FakeRobot(startup_ok=False), "startup() failed"),
    (lambda: FakeRobot(homed=False), "not homed"),
    (lambda: FakeRobot(gripper_ok=False), "gripper servo"),
    (lambda: FakeRobot(lift_ok=False), "lift stepper"),
    (lambda: FakeRobot(has_gripper=False), "no 'stretch_gripper'"),
    (_raise(SystemExit(1)), "exited"),
    (_raise(KeyError("HELLO_FLEET_PATH")), "HELLO_FLEET_PATH"),
    (_raise(ImportError("No module named 'stretch_body'")), "stretch_body is not importable"),
], ids=["startup-false", "not-homed", "gripper-invalid", "lift-invalid", "no-gripper", "sys-exit",
        "no-fleet-path", "no-stretch-body"])
def test_startup_failures_are_one_line(profile, factory, needle) -> None:
    robots: list[FakeRobot] = []

    def tracked() -> Any:
        r = factory()
        robots.append(r)
        return r

    drv = StretchDriver(profile, robot_factory=tracked)
    with pytest.raises(BackendUnavailable) as info:
        drv.connect()
    msg = str(info.value)
    assert needle in msg
    assert "\n" not in msg and len(msg) < 250
    assert all(r.stopped for r in robots), "a robot that failed its checks must be stopped"
    assert drv.robot is None


def test_default_factory_without_fleet_path_is_backend_unavailable(profile, monkeypatch) -> None:
    """The real default factory: stretch_body missing, or present without HELLO_FLEET_PATH, both
    become one-line BackendUnavailable (never a traceback or a SystemExit)."""
    monkeypatch.delenv("HELLO_FLEET_PATH", raising=False)
    monkeypatch.delenv("HELLO_FLEET_ID", raising=False)
    drv = StretchDriver(profile)
    with pytest.raises(BackendUnavailable) as info:
        drv.connect()
    assert "\n" not in str(info.value)


def test_physical_faults_refused_on_hardware(profile) -> None:
    drv = StretchDriver(profile, robot_factory=FakeRobot)
    with pytest.raises(BackendUnavailable, match="simulated"):
        drv.inject(Fault("block_lift"))
    drv.inject(Fault("driver_exception"))  # software faults work anywhere
    with pytest.raises(UserError):
        drv.inject(Fault("no_such_fault"))


def test_unknown_driver_option_is_user_error(profile) -> None:
    bad = profile.model_copy(update={"driver_options": {**profile.driver_options, "clos_pct": -5}})
    with pytest.raises(UserError, match="clos_pct"):
        StretchDriver(bad)
    with pytest.raises(UserError, match="backend"):
        make_stretch_driver(profile.model_copy(update={"driver_options": {"backend": "moon"}}))


MOTION = {"end_of_arm": ("move_to", "move_by", "pose"), "head": ("move_to", "move_by", "pose"),
          "lift": ("move_to", "move_by"), "arm": ("move_to", "move_by"),
          "base": ("translate_by", "rotate_by", "set_velocity"), "robot": ("push_command", "home")}


def test_dry_run_never_commands_motion(profile) -> None:
    """Dry run on the simulated Stretch with every motion call booby-trapped: each primitive only
    reads telemetry (non-empty, from the servo status) and reports it did not move."""
    drv = make_stretch_driver(profile, dry_run=True)
    try:
        drv.connect()
        robot = drv.robot
        calls: list[str] = []

        def trap(name: str):
            def f(*a: Any, **k: Any) -> None:
                calls.append(name)
                raise AssertionError(f"dry run commanded {name}")
            return f

        for part, methods in MOTION.items():
            obj = robot if part == "robot" else getattr(robot, part)
            for m in methods:
                setattr(obj, m, trap(f"{part}.{m}"))
        for joint in robot.end_of_arm.motors.values():
            for m in ("move_to", "move_by"):
                setattr(joint, m, trap(f"{joint.name}.{m}"))
        obs = drv.reset()
        assert obs.rgb.ndim == 3
        pose = GraspPose(position=np.array([0.0, -0.65, 0.58]), orientation=np.array([0, 0, 0, 1.0]), width=0.04)
        for ex in (drv.grasp(pose, 0.04, 10.0), drv.lift(0.05), drv.open_gripper(), drv.place("basket"),
                   drv.push(np.array([0.0, -0.6, 0.56]), np.array([0.1, -0.6, 0.56]), 0.02),
                   drv.nav_to((0.1, 0.0)), drv.gaze_at(np.array([0.0, -0.7, 0.55]))):
            assert ex.fault and ex.fault.startswith("dry_run")
            assert len(ex.telemetry) > 0
        drv.stop()
        assert calls == []
    finally:
        drv.close()
