"""The Stretch runs primitives across ticks: started, polled one control period at a time, cancelled.

On the simulated Stretch (one shared robot; each test resets the scene): a polled run gives the
blocking run's Execution, each poll advances at most one control period and records one sample,
and a cancel stops the robot where it is, returns the telemetry so far, and leaves the robot
ready for the next primitive.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stretch_urdf", reason="hello-robot-stretch-urdf not installed")

from bt_grasp.drivers.base import Fault, GraspPose  # noqa: E402
from bt_grasp.drivers.motion import HALTED, TIMEOUT, Motion, Streaming, start_motion  # noqa: E402
from bt_grasp.drivers.stretch.sim.factory import make_sim_stretch_driver  # noqa: E402
from bt_grasp.profile import load_profile  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402

SEED_WITH_CUBE = 3


@pytest.fixture(scope="module")
def profile():
    return load_profile("robots/stretch3.yaml")


@pytest.fixture(scope="module")
def drv(profile):
    d = make_sim_stretch_driver(profile)
    yield d
    d.close()


def _grasp_kwargs(d) -> dict:
    body = next(iter(d.world.objects))
    p = d.world.object_position(body)
    return {"pose": GraspPose(position=p, orientation=np.array([0, 0, 0, 1.0]), width=0.05),
            "width": 0.05, "force": 10.0}


def _poll(motion: Motion, n: int) -> None:
    for _ in range(n):
        assert motion.poll() is None, "the motion ended before the test could interrupt it"


def test_the_stretch_is_streaming_with_the_profiles_period(drv, profile) -> None:
    assert isinstance(drv, Streaming)
    assert drv.control_period == pytest.approx(getattr(profile, "control_period_s", 0.05))
    assert isinstance(start_motion(drv, "open_gripper"), Motion)


def test_polled_grasp_is_the_blocking_grasp(profile) -> None:
    """Two fresh simulated robots, same scene: one grasps blocking, the other is polled; the
    Executions are identical, and no poll advanced the clock by more than one control period."""
    runs = []
    for polled in (False, True):
        d = make_sim_stretch_driver(profile)
        try:
            d.reset(0, SEED_WITH_CUBE)
            if not polled:
                runs.append(d.grasp(**_grasp_kwargs(d)))
                continue
            motion = d.start("grasp", **_grasp_kwargs(d))
            steps, sizes, before = 0, [], 0.0
            while (ex := motion.poll()) is None:
                steps += 1
                sizes.append(motion.elapsed - before)
                before = motion.elapsed
                assert len(motion.telemetry()) >= steps  # one sample per poll (two at a phase change)
            runs.append(ex)
            assert max(sizes) <= d.control_period + 1e-9
            assert steps > 100  # a grasp takes seconds: it really ran across polls
        finally:
            d.close()
    blocking, polled_ex = runs
    assert blocking.fault is None and polled_ex.fault is None
    assert polled_ex.duration == blocking.duration and polled_ex.info == blocking.info
    for col, values in blocking.telemetry.to_dict().items():
        other = polled_ex.telemetry.to_dict()[col]
        if values is not None:
            assert np.array_equal(np.asarray(values), np.asarray(other), equal_nan=True), col


def test_cancel_during_nav_to_stops_the_base_at_once(drv) -> None:
    drv.reset(0, 0)
    motion = drv.start("nav_to", place=(0.6, 0.0))
    _poll(motion, 12)
    x_cancel = float(drv.robot.base.status["x"])
    assert x_cancel > 0.03  # it was driving
    ex = motion.cancel()
    assert ex.fault == HALTED and len(ex.telemetry) == 12  # one sample per poll
    assert ex.duration == pytest.approx(11 * drv.control_period)  # the first poll starts at 0
    assert motion.poll() is ex and motion.cancel() is ex  # ended for good
    drv.clock.sleep(drv.control_period)
    assert abs(float(drv.robot.base.status["x"]) - x_cancel) < 1e-6
    drv.clock.sleep(1.0)
    assert abs(float(drv.robot.base.status["x"]) - x_cancel) < 1e-6  # no pending move resumes
    back = drv.nav_to((0.0, 0.0))  # the next primitive works
    assert back.fault is None and abs(float(drv.robot.base.status["x"])) < 0.01


def test_cancel_during_lift_brakes_and_holds(drv) -> None:
    """The lift cannot stop dead at 0.1 m/s: it is re-targeted to its braking point at once,
    rests within the braking distance v²/2a of its motion profile's accel_m, and stays there."""
    drv.reset(0, 0)
    lift = drv.robot.lift
    motion = drv.start("lift", dz=-0.3)
    _poll(motion, 12)
    z0, v0 = float(lift.status["pos"]), float(lift.status["vel"])
    assert v0 < -0.08  # moving down at nearly full speed
    ex = motion.cancel(TIMEOUT)
    assert ex.fault == TIMEOUT and len(ex.telemetry) == 12
    drv.clock.sleep(1.5)
    z1 = float(lift.status["pos"])
    accel = lift.params["motion"]["default"]["accel_m"]
    assert abs(z1 - z0) <= v0 * v0 / (2 * accel) + 0.01
    drv.clock.sleep(drv.control_period)
    assert abs(float(lift.status["pos"]) - z1) < 1e-3  # at rest
    assert drv.lift(0.05).fault is None  # the next primitive works


def test_cancel_during_grasp_holds_the_gripper(drv) -> None:
    drv.reset(0, SEED_WITH_CUBE)
    motion = drv.start("grasp", **_grasp_kwargs(drv))
    gripper = drv.robot.end_of_arm.get_joint("stretch_gripper")
    while (motion.telemetry().phase == Phase.CLOSE).sum() < 3:  # closing on the cube
        assert motion.poll() is None
    n = len(motion.telemetry())
    a0 = gripper.status["gripper_conversion"]["aperture_m"]
    ex = motion.cancel()
    assert ex.fault == HALTED and len(ex.telemetry) == n
    assert set(np.unique(ex.telemetry.phase)) == {Phase.APPROACH, Phase.CLOSE}
    drv.clock.sleep(drv.control_period)
    assert abs(gripper.status["gripper_conversion"]["aperture_m"] - a0) < 1e-3
    drv.clock.sleep(1.0)
    assert abs(gripper.status["gripper_conversion"]["aperture_m"] - a0) < 2e-3  # held, not closed on
    assert drv.open_gripper().fault is None and drv.lift(0.05).fault is None


def test_look_turns_the_head_and_a_cancel_holds_it(drv) -> None:
    drv.reset(0, 0)
    head = drv.robot.head.status
    ex = drv.start("look", pan=-0.5, tilt=-0.3)
    while (done := ex.poll()) is None:
        pass
    assert done.fault is None and done.info == {"primitive": "look", "pan": -0.5, "tilt": -0.3}
    assert head["head_pan"]["pos"] == pytest.approx(-0.5, abs=0.02)
    assert head["head_tilt"]["pos"] == pytest.approx(-0.3, abs=0.02)
    motion = drv.start("look", pan=1.0)  # a 1.5 rad turn: ~0.75 s at the servo's speed
    _poll(motion, 6)
    pan = float(head["head_pan"]["pos"])
    assert -0.4 < pan < 0.9  # half-way
    assert motion.cancel().fault == HALTED
    drv.clock.sleep(drv.control_period)
    assert abs(float(head["head_pan"]["pos"]) - pan) < 0.01  # stopped within the period
    drv.clock.sleep(1.0)
    assert abs(float(head["head_pan"]["pos"]) - pan) < 0.01  # and held there


def test_cancel_before_the_first_poll_moves_nothing(drv) -> None:
    drv.reset(0, 0)
    z = float(drv.robot.lift.status["pos"])
    motion = drv.start("lift", dz=0.1)
    ex = motion.cancel()
    assert ex.fault == HALTED and len(ex.telemetry) == 0
    drv.clock.sleep(0.5)
    assert abs(float(drv.robot.lift.status["pos"]) - z) < 1e-3


def test_faults_apply_to_polled_primitives(drv) -> None:
    drv.reset(0, 0)
    drv.inject(Fault("never_finish", primitive="lift"))
    motion = drv.start("lift", dz=0.05, timeout=2.0)
    polls = 0
    while (ex := motion.poll()) is None:
        polls += 1
    assert ex.fault == TIMEOUT and 2.0 <= ex.duration <= 2.0 + drv.control_period
    assert polls == pytest.approx(2.0 / drv.control_period, abs=1)
    drv.clear_faults()
    drv.inject(Fault("driver_exception", primitive="open_gripper"))
    with pytest.raises(RuntimeError, match="injected"):
        drv.start("open_gripper").poll()


def test_an_error_while_moving_stops_the_robot_and_is_raised(drv, monkeypatch) -> None:
    drv.reset(0, 0)
    motion = drv.start("nav_to", place=(0.6, 0.0))
    _poll(motion, 10)
    x = float(drv.robot.base.status["x"])

    def broken(*args, **kwargs):
        raise OSError("status read failed")

    monkeypatch.setattr(drv, "_sample", broken)
    with pytest.raises(OSError, match="status read failed"):
        motion.poll()
    monkeypatch.undo()
    drv.clock.sleep(0.5)
    assert abs(float(drv.robot.base.status["x"]) - x) < 0.01  # stopped, not driving on


class _WallLikeClock:
    """The sim clock dressed as hardware time: a poll must not sleep (the tree's tick paces it)."""

    simulated = False

    def __init__(self, clock) -> None:
        self._clock, self.sleeps = clock, 0

    def now(self) -> float:
        return self._clock.now()

    def sleep(self, dt: float) -> None:
        self.sleeps += 1
        self._clock.sleep(dt)


def test_on_hardware_time_a_poll_never_sleeps(drv) -> None:
    drv.reset(0, 0)
    sim_clock, drv.clock = drv.clock, _WallLikeClock(drv.clock)
    try:
        motion = drv.start("lift", dz=0.05)
        _poll(motion, 5)
        assert drv.clock.sleeps == 0 and len(motion.telemetry()) == 5
        assert motion.cancel().fault == HALTED
    finally:
        drv.clock = sim_clock


def test_the_sim_implements_every_hardware_call_the_driver_lists(drv) -> None:
    """driver.py's docstring lists every stretch_body call the driver makes; SimStretchRobot has
    each (so the same driver class runs in simulation), down to the gripper joint's attributes."""
    import re

    import bt_grasp.drivers.stretch.driver as module

    drv.connect()
    listed = set(re.findall(r"\brobot(?:\.\w+)+", module.__doc__ or ""))
    assert {"robot.base.set_velocity", "robot.push_command", "robot.lift.move_to"} <= listed
    for path in sorted(listed):
        obj = drv.robot
        for name in path.split(".")[1:]:
            assert hasattr(obj, name), f"SimStretchRobot lacks {path}"
            obj = getattr(obj, name)
    joint_line = next(line for line in module.__doc__.splitlines() if "get_joint(" in line and "->" in line)
    for joint in ("stretch_gripper", "wrist_yaw"):
        j = drv.robot.end_of_arm.get_joint(joint)
        for attr in re.findall(r"\.(\w+)", joint_line.split("->")[1]):
            assert attr == "pct_max_open" and joint == "wrist_yaw" or hasattr(j, attr), (joint, attr)


def test_household_nav_and_drawer_stream_and_cancel() -> None:
    """The household room's planned nav_to and its drawer run across polls too: a cancelled
    drive leaves the robot where it stopped (not 'at' the receptacle), a cancelled drawer stays
    where it was, and the next primitives work."""
    from bt_grasp.drivers.stretch.sim.household_driver import make_household_driver

    d = make_household_driver(load_profile("robots/stretch3_household.yaml"))
    try:
        d.reset(seed=1)
        w = d.world
        motion = d.start("nav_to", place="cabinet")
        _poll(motion, 40)
        pose = w.world_pose().copy()
        ex = motion.cancel()
        assert ex.fault == HALTED and ex.info["receptacle"] == "cabinet"
        assert len(ex.telemetry) >= 40 and ex.duration == pytest.approx(39 * d.control_period)
        d.clock.sleep(0.5)
        assert np.allclose(w.world_pose(), pose, atol=1e-6) and d.located_at() is None
        assert d.nav_to("cabinet").fault is None and d.located_at() == "cabinet"
        motion = d.start("open", handle="cabinet drawer")
        _poll(motion, 10)
        q = w.drawer_position()
        assert 0.02 < q < 0.2  # half-way out
        assert motion.cancel().fault == HALTED
        d.clock.sleep(1.0)
        assert abs(w.drawer_position() - q) < 0.01
        assert d.open("cabinet drawer").fault is None and w.drawer_position() > 0.2
    finally:
        d.close()
