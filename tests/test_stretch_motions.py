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
from bt_grasp.drivers.capabilities import Motion, Streaming  # noqa: E402
from bt_grasp.drivers.motion import HALTED, TIMEOUT, start_motion  # noqa: E402
from bt_grasp.drivers.stretch.sim.factory import make_sim_stretch_driver  # noqa: E402
from bt_grasp.profile import load_profile  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402

SEED_WITH_CUBE = 3



def _grasp_kwargs(d) -> dict:
    body = next(iter(d.world.objects))
    p = d.world.object_position(body)
    return {"pose": GraspPose(position=p, orientation=np.array([0, 0, 0, 1.0]), width=0.05),
            "width": 0.05, "force": 10.0}


def _poll(motion: Motion, n: int) -> None:
    for _ in range(n):
        assert motion.poll() is None, "the motion ended before the test could interrupt it"


def test_the_stretch_is_streaming_with_the_profiles_period(sim_stretch, stretch_profile) -> None:
    assert isinstance(sim_stretch, Streaming)
    assert sim_stretch.control_period == pytest.approx(getattr(stretch_profile, "control_period_s", 0.05))
    assert isinstance(start_motion(sim_stretch, "open_gripper"), Motion)


def test_polled_grasp_is_the_blocking_grasp(stretch_profile) -> None:
    """Two fresh simulated robots, same scene: one grasps blocking, the other is polled; the
    Executions are identical, and no poll advanced the clock by more than one control period."""
    runs = []
    for polled in (False, True):
        d = make_sim_stretch_driver(stretch_profile)
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


def test_cancel_during_nav_to_stops_the_base_at_once(sim_stretch) -> None:
    sim_stretch.reset(0, 0)
    motion = sim_stretch.start("nav_to", place=(0.6, 0.0))
    _poll(motion, 12)
    x_cancel = float(sim_stretch.robot.base.status["x"])
    assert x_cancel > 0.03  # it was driving
    ex = motion.cancel()
    assert ex.fault == HALTED and len(ex.telemetry) == 12  # one sample per poll
    assert ex.duration == pytest.approx(11 * sim_stretch.control_period)  # the first poll starts at 0
    assert motion.poll() is ex and motion.cancel() is ex  # ended for good
    sim_stretch.clock.sleep(sim_stretch.control_period)
    assert abs(float(sim_stretch.robot.base.status["x"]) - x_cancel) < 1e-6
    sim_stretch.clock.sleep(1.0)
    assert abs(float(sim_stretch.robot.base.status["x"]) - x_cancel) < 1e-6  # no pending move resumes
    back = sim_stretch.nav_to((0.0, 0.0))  # the next primitive works
    assert back.fault is None and abs(float(sim_stretch.robot.base.status["x"])) < 0.01


def test_cancel_during_lift_brakes_and_holds(sim_stretch) -> None:
    """The lift cannot stop dead at 0.1 m/s: it is re-targeted to its braking point at once,
    rests within the braking distance v²/2a of its motion profile's accel_m, and stays there."""
    sim_stretch.reset(0, 0)
    lift = sim_stretch.robot.lift
    motion = sim_stretch.start("lift", dz=-0.3)
    _poll(motion, 12)
    z0, v0 = float(lift.status["pos"]), float(lift.status["vel"])
    assert v0 < -0.08  # moving down at nearly full speed
    ex = motion.cancel(TIMEOUT)
    assert ex.fault == TIMEOUT and len(ex.telemetry) == 12
    sim_stretch.clock.sleep(1.5)
    z1 = float(lift.status["pos"])
    accel = lift.params["motion"]["default"]["accel_m"]
    assert abs(z1 - z0) <= v0 * v0 / (2 * accel) + 0.01
    sim_stretch.clock.sleep(sim_stretch.control_period)
    assert abs(float(lift.status["pos"]) - z1) < 1e-3  # at rest
    assert sim_stretch.lift(0.05).fault is None  # the next primitive works


def test_cancel_during_grasp_holds_the_gripper(sim_stretch) -> None:
    sim_stretch.reset(0, SEED_WITH_CUBE)
    motion = sim_stretch.start("grasp", **_grasp_kwargs(sim_stretch))
    gripper = sim_stretch.robot.end_of_arm.get_joint("stretch_gripper")
    while (motion.telemetry().phase == Phase.CLOSE).sum() < 3:  # closing on the cube
        assert motion.poll() is None
    n = len(motion.telemetry())
    a0 = gripper.status["gripper_conversion"]["aperture_m"]
    ex = motion.cancel()
    assert ex.fault == HALTED and len(ex.telemetry) == n
    assert set(np.unique(ex.telemetry.phase)) == {Phase.APPROACH, Phase.CLOSE}
    sim_stretch.clock.sleep(sim_stretch.control_period)
    assert abs(gripper.status["gripper_conversion"]["aperture_m"] - a0) < 1e-3
    sim_stretch.clock.sleep(1.0)
    assert abs(gripper.status["gripper_conversion"]["aperture_m"] - a0) < 2e-3  # held, not closed on
    assert sim_stretch.open_gripper().fault is None and sim_stretch.lift(0.05).fault is None


def test_look_turns_the_head_and_a_cancel_holds_it(sim_stretch) -> None:
    sim_stretch.reset(0, 0)
    head = sim_stretch.robot.head.status
    ex = sim_stretch.start("look", pan=-0.5, tilt=-0.3)
    while (done := ex.poll()) is None:
        pass
    assert done.fault is None and done.info == {"primitive": "look", "pan": -0.5, "tilt": -0.3}
    assert head["head_pan"]["pos"] == pytest.approx(-0.5, abs=0.02)
    assert head["head_tilt"]["pos"] == pytest.approx(-0.3, abs=0.02)
    motion = sim_stretch.start("look", pan=1.0)  # a 1.5 rad turn: ~0.75 s at the servo's speed
    _poll(motion, 6)
    pan = float(head["head_pan"]["pos"])
    assert -0.4 < pan < 0.9  # half-way
    assert motion.cancel().fault == HALTED
    sim_stretch.clock.sleep(sim_stretch.control_period)
    assert abs(float(head["head_pan"]["pos"]) - pan) < 0.01  # stopped within the period
    sim_stretch.clock.sleep(1.0)
    assert abs(float(head["head_pan"]["pos"]) - pan) < 0.01  # and held there


def test_cancel_before_the_first_poll_moves_nothing(sim_stretch) -> None:
    sim_stretch.reset(0, 0)
    z = float(sim_stretch.robot.lift.status["pos"])
    motion = sim_stretch.start("lift", dz=0.1)
    ex = motion.cancel()
    assert ex.fault == HALTED and len(ex.telemetry) == 0
    sim_stretch.clock.sleep(0.5)
    assert abs(float(sim_stretch.robot.lift.status["pos"]) - z) < 1e-3


def test_faults_apply_to_polled_primitives(sim_stretch) -> None:
    sim_stretch.reset(0, 0)
    sim_stretch.inject(Fault("never_finish", primitive="lift"))
    motion = sim_stretch.start("lift", dz=0.05, timeout=2.0)
    polls = 0
    while (ex := motion.poll()) is None:
        polls += 1
    assert ex.fault == TIMEOUT and 2.0 <= ex.duration <= 2.0 + sim_stretch.control_period
    assert polls == pytest.approx(2.0 / sim_stretch.control_period, abs=1)
    sim_stretch.clear_faults()
    sim_stretch.inject(Fault("driver_exception", primitive="open_gripper"))
    with pytest.raises(RuntimeError, match="injected"):
        sim_stretch.start("open_gripper").poll()


def test_an_error_while_moving_stops_the_robot_and_is_raised(sim_stretch, monkeypatch) -> None:
    sim_stretch.reset(0, 0)
    motion = sim_stretch.start("nav_to", place=(0.6, 0.0))
    _poll(motion, 10)
    x = float(sim_stretch.robot.base.status["x"])

    def broken(*args, **kwargs):
        raise OSError("status read failed")

    monkeypatch.setattr(sim_stretch, "_sample", broken)
    with pytest.raises(OSError, match="status read failed"):
        motion.poll()
    monkeypatch.undo()
    sim_stretch.clock.sleep(0.5)
    assert abs(float(sim_stretch.robot.base.status["x"]) - x) < 0.01  # stopped, not driving on


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


def test_on_hardware_time_a_poll_never_sleeps(sim_stretch) -> None:
    sim_stretch.reset(0, 0)
    sim_clock, sim_stretch.clock = sim_stretch.clock, _WallLikeClock(sim_stretch.clock)
    try:
        motion = sim_stretch.start("lift", dz=0.05)
        _poll(motion, 5)
        assert sim_stretch.clock.sleeps == 0 and len(motion.telemetry()) == 5
        assert motion.cancel().fault == HALTED
    finally:
        sim_stretch.clock = sim_clock


def test_the_sim_implements_every_hardware_call_the_driver_lists(sim_stretch) -> None:
    """driver.py's docstring lists every stretch_body call the driver makes; SimStretchRobot has
    each (so the same driver class runs in simulation), down to the gripper joint's attributes."""
    import re

    import bt_grasp.drivers.stretch.driver as module

    sim_stretch.connect()
    listed = set(re.findall(r"\brobot(?:\.\w+)+", module.__doc__ or ""))
    assert {"robot.base.set_velocity", "robot.push_command", "robot.lift.move_to"} <= listed
    for path in sorted(listed):
        obj = sim_stretch.robot
        for name in path.split(".")[1:]:
            assert hasattr(obj, name), f"SimStretchRobot lacks {path}"
            obj = getattr(obj, name)
    joint_line = next(line for line in module.__doc__.splitlines() if "get_joint(" in line and "->" in line)
    for joint in ("stretch_gripper", "wrist_yaw"):
        j = sim_stretch.robot.end_of_arm.get_joint(joint)
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
