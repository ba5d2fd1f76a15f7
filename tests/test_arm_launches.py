"""Launches are measured, not explained away: an object the simulator throws (faster than 1 m/s
sideways or upwards, not held) is recorded with its body, speed, phase and primitive; a fall, a
carried object and a quiet grasp are not launches."""

from __future__ import annotations

import math

import numpy as np
import pybullet as pb
import pytest

pytest.importorskip("airo_models")

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.base import GraspPose  # noqa: E402
from bt_grasp.drivers.motion import run_to_end  # noqa: E402
from bt_grasp.drivers.pybullet_arm.control import steps_for_turn  # noqa: E402
from bt_grasp.drivers.pybullet_arm.driver import DOWN  # noqa: E402
from bt_grasp.drivers.pybullet_arm.ik import Q_UPPER, wrapped_near  # noqa: E402
from bt_grasp.drivers.pybullet_arm.launches import LaunchWatch, launch_speed  # noqa: E402
from bt_grasp.drivers.pybullet_arm.scene import TIMESTEP  # noqa: E402

BOX = ObjectSpec("red box", "box", "red", "medium", "box", (0.05, 0.05, 0.06), (0.9, 0.1, 0.1, 1), 0.15)
CUBE = ObjectSpec("blue cube", "box", "blue", "small", "box", (0.03, 0.03, 0.03), (0.1, 0.1, 0.9, 1), 0.05)
TALL = ObjectSpec("green bar", "box", "green", "large", "box", (0.04, 0.04, 0.12), (0.1, 0.9, 0.1, 1), 0.2)
CENTRE = np.array([0.5, 0.0, 0.03])


ARM_IMAGE_SIZE = 64  # the arm fixture's camera (tests/conftest.py)


def test_only_sideways_or_upward_speed_counts():
    assert launch_speed((0.0, 0.0, -3.0)) == 0.0          # falling
    assert launch_speed((0.6, 0.8, -3.0)) == pytest.approx(1.0)
    assert launch_speed((0.0, 0.0, 2.0)) == 2.0           # thrown up


class _Scripted(LaunchWatch):
    """The rule alone: each check reads the next scripted speed of body 1."""

    def __init__(self, speeds: list[float]) -> None:
        super().__init__()
        self.speeds = iter(speeds)

    def velocity(self, world, body):
        return (next(self.speeds), 0.0, 0.0)


def _watch(speeds: list[float], held: list[set[int]]) -> _Scripted:
    watch = _Scripted(speeds)
    spec = ObjectSpec("bar", "box", "red", "small", "box", (0.02, 0.02, 0.08), (1, 0, 0, 1), 0.05)
    for i, grip in enumerate(held):
        watch.check(None, {1: spec}, grip, clock=i / 30, phase="hold", primitive="grasp")
    return watch


def test_a_held_object_jumping_within_the_grip_is_a_grip_jump_not_a_launch():
    """Held, then one check fast touching one finger, then held again: it never left the gripper."""
    watch = _watch([0.0, 1.5, 0.0, 0.0], [{1}, set(), {1}, {1}])
    assert watch.launches == [] and [(j.body, j.speed) for j in watch.grip_jumps] == [("bar", 1.5)]


def test_an_object_thrown_out_of_the_grip_is_a_launch():
    """Held, then fast and still out of the grip a check later, or slow but not held: thrown."""
    for speeds, held in (([0.0, 1.5, 1.2, 0.0], [{1}, set(), set(), set()]),
                         ([0.0, 1.5, 0.0], [{1}, set(), set()])):
        watch = _watch(speeds, held)
        assert [(x.body, x.speed) for x in watch.launches] == [("bar", 1.5)] and watch.grip_jumps == []


def test_a_neighbour_thrown_into_the_grip_is_a_launch():
    """Not held before it flew: landing between the fingers does not make it a jump within the grip."""
    watch = _watch([0.0, 1.9, 0.0], [set(), set(), {1}])
    assert [x.body for x in watch.launches] == ["bar"] and watch.grip_jumps == []


def test_a_joint_going_round_its_limit_turns_at_a_ur5e_wrists_speed():
    """IK answers in [-pi, pi); a joint takes the equivalent nearest where it is, inside its limits.
    A wrist the carry has turned to its limit (+2 pi) and asked a little further must go the far way
    round, a full turn between two IK points: at 180 deg/s, not at the joint cap (0.06 s), which
    flings what is held. Ordinary steps keep the tcp speed's timing."""
    seed = np.array([0.5, -1.8, 2.2, -2.5, -1.6, 2 * np.pi - 0.005])
    asked = seed.copy()
    asked[5] = 0.010  # the IK's wrapped answer: 0.015 rad past the seed, beyond the limit
    q = wrapped_near(asked, seed)
    assert q[5] == pytest.approx(0.010) and q[5] <= Q_UPPER[5]
    turn = q - seed
    assert steps_for_turn(turn, 6, math.inf) * TIMESTEP == pytest.approx(abs(turn[5]) / math.pi, abs=0.01)
    assert steps_for_turn(np.full(6, 0.01), 6, math.inf) == 6
    asked[5], seed[5] = -3.10, 3.10  # crossing +-pi inside the limits: the near equivalent
    assert wrapped_near(asked, seed)[5] == pytest.approx(2 * np.pi - 3.10)


def test_a_quiet_grasp_and_lift_throw_nothing(arm):
    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    run_to_end(arm.start("grasp", pose=GraspPose(CENTRE, DOWN, 0.08), width=0.08, force=60.0))
    run_to_end(arm.start("lift", dz=0.15))
    assert arm.held_object() == "red box"
    assert arm.launches() == []


def test_an_object_dropped_from_the_grip_falls_without_counting(arm):
    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    run_to_end(arm.start("grasp", pose=GraspPose(CENTRE, DOWN, 0.08), width=0.08, force=60.0))
    run_to_end(arm.start("lift", dz=0.3))
    run_to_end(arm.start("open_gripper"))
    assert arm.held_object() is None
    assert arm.launches() == []


def test_a_body_thrown_during_a_primitive_is_recorded_once_at_its_peak(arm):
    """The watch measures, whatever threw the body: here a cube given 2.5 m/s sideways while a
    lift runs (in the benchmark, a finger's penetration correction does it)."""
    arm.reset_scene([BOX, CUBE], [tuple(CENTRE), (0.35, 0.25, 0.015)], target="red box")
    motion = arm.start("lift", dz=0.1)
    cube = next(b for b, s in arm.bodies.items() if s.name == "blue cube")
    pb.resetBaseVelocity(cube, (2.5, 0.0, 0.3), (0, 0, 0), physicsClientId=arm.client)
    run_to_end(motion)
    thrown = arm.launches()
    assert [(t["body"], t["primitive"]) for t in thrown] == [("blue cube", "lift")]
    assert 1.0 < thrown[0]["speed"] <= 2.5 + 1e-6 and thrown[0]["phase"] == "micro_lift"
    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    assert arm.launches() == []  # a new episode starts with none


def test_one_flight_across_two_primitive_calls_is_one_launch(arm):
    arm.reset_scene([BOX, CUBE], [tuple(CENTRE), (0.35, 0.25, 0.015)], target="red box")
    motion = arm.start("open_gripper")
    cube = next(b for b, s in arm.bodies.items() if s.name == "blue cube")
    pb.resetBaseVelocity(cube, (0.5, 0.0, 8.0), (0, 0, 0), physicsClientId=arm.client)  # up for ~0.7 s
    run_to_end(motion)
    run_to_end(arm.start("lift", dz=0.05))
    thrown = arm.launches()
    assert len(thrown) == 1 and thrown[0]["primitive"] == "open_gripper"
    assert 7.0 < thrown[0]["speed"] <= 8.0  # sampled at 30 Hz: gravity has slowed it a little


def test_a_grasp_leaves_the_spot_it_starts_among_slowly_and_without_turning(arm):
    """A grasp starting where the last one ended (open_gripper leaves the fingers among the
    objects) rises its first DEPART_M at contact.py's depart_mps, keeping the gripper's
    orientation, and only then turns to the new grasp's and speeds up: a finger dragged up fast
    or swung through a neighbour throws it."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact
    from bt_grasp.drivers.pybullet_arm.params import DEPART_M

    cube_at = np.array([0.5, 0.12, 0.015])
    arm.reset_scene([BOX, CUBE], [tuple(CENTRE), tuple(cube_at)], target="blue cube")
    run_to_end(arm.start("grasp", pose=GraspPose(CENTRE, DOWN, 0.08), width=0.08, force=60.0))
    run_to_end(arm.start("open_gripper"))
    z0, orn0 = arm.tcp_pose()[0][2], arm.tcp_pose()[1]
    turned = np.array(pb.getQuaternionFromEuler([np.pi, 0.0, np.pi / 2]))
    set_contact(depart_mps=0.15)
    try:
        motion = arm.start("grasp", pose=GraspPose(cube_at, turned, 0.05), width=0.05, force=40.0)
        samples = []  # (sim clock, tcp z, |cos| of the turn from the start orientation)
        while motion.poll() is None:
            p, o = arm.tcp_pose()
            samples.append((arm.clock, float(p[2]), abs(float(np.dot(o, orn0)))))
            if p[2] > z0 + DEPART_M + 0.04:
                motion.cancel()
                break
    finally:
        reset_contact()
    slow = [s for s in samples if s[1] < z0 + DEPART_M - 0.005]
    speeds = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(slow, slow[1:], strict=False)]
    assert len(slow) > 5 and max(speeds) < 0.15 * 1.2
    assert min(s[2] for s in slow) > 0.999  # not turned while among the objects
    fast = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(samples, samples[1:], strict=False)
            if a[1] > z0 + DEPART_M + 0.005]
    assert fast and max(fast) > 0.4  # free transit once clear
    assert arm.launches() == []


def test_the_transit_to_a_pre_grasp_crosses_above_the_table_and_comes_straight_down(arm):
    """From above the basket to a pre-grasp 10 cm over the table, the tcp stays at SAFE_Z or above
    until it is over the pre-grasp, so nothing standing in between is struck at transit speed.
    The former diagonal line (level_transit False) was below SAFE_Z half-way across."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact
    from bt_grasp.drivers.pybullet_arm.params import SAFE_Z

    def lowest_while_far(level: bool) -> float:
        arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
        run_to_end(arm.start("grasp", pose=GraspPose(CENTRE, DOWN, 0.08), width=0.08, force=60.0))
        run_to_end(arm.start("place"))
        set_contact(level_transit=level)
        try:
            motion = arm.start("grasp", pose=GraspPose(CENTRE, DOWN, 0.08), width=0.08, force=60.0)
            far = []  # tcp heights more than 2 cm sideways from the grasp
            while motion.poll() is None:
                p = arm.tcp_pose()[0]
                if np.linalg.norm(p[:2] - CENTRE[:2]) > 0.02:
                    far.append(float(p[2]))
                elif p[2] < CENTRE[2] + 0.05:
                    motion.cancel()
                    break
        finally:
            reset_contact()
        return min(far)

    assert lowest_while_far(level=True) > SAFE_Z - 0.005
    assert lowest_while_far(level=False) < SAFE_Z - 0.05


def _turned(orn: np.ndarray, yaw: float) -> np.ndarray:
    """`orn` turned by `yaw` about its own z (approach) axis."""
    return np.array(pb.multiplyTransforms((0, 0, 0), orn, (0, 0, 0), pb.getQuaternionFromEuler([0, 0, yaw]))[1])


def test_a_grasp_half_a_turn_away_is_taken_the_nearer_way_round(arm):
    """Mirror-image fingers: a grasp turned a half turn is the same grasp, so with symmetric_yaw the
    plan (shipped) takes the one nearer the gripper's orientation (the wrist turns at most a
    quarter turn) and keeps the approach axis; without it the plan is the pose asked for."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact

    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    now = arm.tcp_pose()[1]
    asked = _turned(now, np.radians(160))
    plan = arm._grasp_plan(GraspPose(CENTRE, asked, 0.08), 0.08, [])
    try:
        set_contact(symmetric_yaw=False)
        as_asked = arm._grasp_plan(GraspPose(CENTRE, asked, 0.08), 0.08, [])
    finally:
        reset_contact()
    R = np.array(pb.getMatrixFromQuaternion(plan["orn"])).reshape(3, 3)
    Ra = np.array(pb.getMatrixFromQuaternion(asked)).reshape(3, 3)
    assert abs(float(np.dot(plan["orn"], now))) > np.cos(np.radians(45))  # within a quarter turn
    assert np.allclose(R[:, 2], Ra[:, 2], atol=1e-6) and np.allclose(R[:, 0], -Ra[:, 0], atol=1e-6)
    assert np.allclose(as_asked["orn"], asked / np.linalg.norm(asked))


def test_joint_targets_turn_no_faster_than_the_joint_speed(arm):
    """A transit that turns the wrist at its first IK point: with joint_speed_rps the joint targets
    take as long as the limit needs; without it they jump there in the tcp speed's few steps."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact

    def fastest_target(limit: float) -> float:
        arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
        pose = GraspPose(CENTRE + np.array([0.0, 0.15, 0.0]), _turned(arm.tcp_pose()[1], np.radians(150)), 0.05)
        set_contact(joint_speed_rps=limit, symmetric_yaw=False)  # the 150 deg turn, not -30 deg
        try:
            motion = arm.start("grasp", pose=pose, width=0.05, force=40.0)
            q, t, fastest = arm.q_cmd.copy(), arm.clock, 0.0
            while motion.poll() is None and arm.clock < 1.5:
                if arm.clock > t:
                    fastest = max(fastest, float(np.max(np.abs(arm.q_cmd - q))) / (arm.clock - t))
                q, t = arm.q_cmd.copy(), arm.clock
            motion.cancel()
        finally:
            reset_contact()
        return fastest

    assert fastest_target(3.14) <= 3.14 * 1.01
    assert fastest_target(float("inf")) > 6.0


def test_a_guarded_place_lowers_until_the_held_object_rests_then_opens(arm):
    """With release_z_m below the carry height, place lowers into the basket as a guarded move: the
    wrist load sensor stops it where the held object stands on the floor (well above the release
    floor for a tall object held high), and the object is delivered without being thrown."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact
    from bt_grasp.drivers.pybullet_arm.primitives import RELEASE_FLOOR_Z

    arm.reset_scene([TALL], [(0.5, 0.0, 0.06)], target="green bar")
    run_to_end(arm.start("grasp", pose=GraspPose(np.array([0.5, 0.0, 0.09]), DOWN, 0.06), width=0.06,
                         force=60.0))
    run_to_end(arm.start("lift", dz=0.15))
    assert arm.held_object() == "green bar"
    set_contact(release_z_m=0.0)
    try:
        motion = arm.start("place")
        lowest = np.inf
        while motion.poll() is None:
            lowest = min(lowest, float(arm.tcp_pose()[0][2]))
        done = motion.poll()
    finally:
        reset_contact()
    assert done.info["in_basket"] and arm.launches() == []
    assert RELEASE_FLOOR_Z + 0.03 < lowest < 0.15  # the bar's foot stopped it, 9 cm below the tcp


def test_place_lowers_onto_the_basket_pile_as_a_guarded_move(arm):
    """Everything delivered is released over one spot, so the basket's pile grows under it. The
    lowering from the carry height to the release height is guarded: it stops where what the
    gripper holds meets the pile's top, instead of driving it into the pile (a straight line did,
    and the solver threw what the pile held)."""
    from bt_grasp.drivers.pybullet_arm.scene import BASKET_DROP_XY

    tower = ObjectSpec("grey tower", "box", "grey", "large", "box", (0.05, 0.05, 0.18), (0.5, 0.5, 0.5, 1), 0.3)
    arm.reset_scene([TALL, tower], [(0.5, 0.0, 0.06), (*BASKET_DROP_XY, 0.0075 + 0.09)], target="green bar")
    run_to_end(arm.start("grasp", pose=GraspPose(np.array([0.5, 0.0, 0.09]), DOWN, 0.06), width=0.06,
                         force=60.0))
    run_to_end(arm.start("lift", dz=0.15))
    assert arm.held_object() == "green bar"
    motion = arm.start("place")
    lowest = np.inf
    while motion.poll() is None:
        lowest = min(lowest, float(arm.tcp_pose()[0][2]))
    assert lowest > 0.265  # the bar's foot, 9 cm below the tcp, stood on the tower's top (0.19 m)
    assert arm.launches() == []


def test_successive_places_release_over_successive_spots_of_the_basket(arm):
    """An episode's deliveries are spread over the basket's side the camera sees instead of piled
    over one spot; a new episode starts again at the first spot."""
    from bt_grasp.drivers.pybullet_arm.scene import BASKET_DROP_SPOTS

    def released_over() -> list[tuple[float, float]]:
        spots = []
        for _ in range(len(BASKET_DROP_SPOTS) + 1):
            assert run_to_end(arm.start("place")).fault is None
            spots.append(tuple(np.round(arm.tcp_pose()[0][:2], 2)))  # place rises straight up
        return spots

    arm.reset_scene([CUBE], [(0.35, 0.25, 0.015)], target="blue cube")
    assert released_over() == [*BASKET_DROP_SPOTS, BASKET_DROP_SPOTS[0]]
    arm.reset_scene([CUBE], [(0.35, 0.25, 0.015)], target="blue cube")
    assert released_over()[0] == BASKET_DROP_SPOTS[0]


def test_rigid_objects_leave_a_penetration_without_gaining_speed(arm):
    """With rigid_objects, a cube 8 mm into the table is pushed out by split impulse, not given
    Bullet's ERP x depth / dt upwards (about 0.15 m/s at 8 mm) as a multibody is."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact

    def speed_out_of_table(rigid: bool) -> float:
        set_contact(rigid_objects=rigid)
        try:
            arm.reset_scene([CUBE], [(0.35, 0.25, 0.015)], target="blue cube")
            cube = next(iter(arm.bodies))
            _, orn = pb.getBasePositionAndOrientation(cube, physicsClientId=arm.client)
            pb.resetBasePositionAndOrientation(cube, (0.35, 0.25, 0.015 - 0.008), orn, physicsClientId=arm.client)
            pb.resetBaseVelocity(cube, (0, 0, 0), (0, 0, 0), physicsClientId=arm.client)
            pb.stepSimulation(physicsClientId=arm.client)
            return float(pb.getBaseVelocity(cube, physicsClientId=arm.client)[0][2])
        finally:
            reset_contact()

    assert speed_out_of_table(rigid=False) > 0.1
    assert abs(speed_out_of_table(rigid=True)) < 0.02


def _wedged_place(arm, retreat_z_m: float) -> tuple[dict, float]:
    """Grasp a tall bar near its top and lift it, weld it to the tcp link (an object wedged between
    the fingers, which opening does not free), place it; returns place's info and the bar's
    lowest point."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact

    arm.reset_scene([TALL], [(0.5, 0.0, 0.06)], target="green bar")
    run_to_end(arm.start("grasp", pose=GraspPose(np.array([0.5, 0.0, 0.09]), DOWN, 0.06), width=0.06,
                         force=60.0))
    run_to_end(arm.start("lift", dz=0.15))
    bar = next(iter(arm.bodies))
    assert arm.held_object() == "green bar"
    tcp = pb.getLinkState(arm.robot, arm.tcp_link, physicsClientId=arm.client)
    rel = pb.multiplyTransforms(*pb.invertTransform(tcp[4], tcp[5]),
                                *pb.getBasePositionAndOrientation(bar, physicsClientId=arm.client))
    pb.createConstraint(arm.robot, arm.tcp_link, bar, -1, pb.JOINT_FIXED, [0, 0, 0], rel[0], [0, 0, 0],
                        rel[1], physicsClientId=arm.client)
    set_contact(retreat_z_m=retreat_z_m)
    try:
        done = run_to_end(arm.start("place"))
    finally:
        reset_contact()
    return done.info, float(pb.getAABB(bar, -1, physicsClientId=arm.client)[0][2])


def test_place_feels_a_wedged_object_and_rises_with_it_out_of_the_basket_region(arm):
    """When the wrist still carries the object's weight after the gripper opened, place rises to
    retreat_z_m: the wedged object comes along, clear of the basket's region (the 20 cm above it),
    where the camera would otherwise see it as delivered. Staying where it opened (retreat_z_m 0)
    leaves it inside that region."""
    top = arm.place_region("basket")[1][2]
    weight = TALL.mass * 9.81
    info, lowest = _wedged_place(arm, retreat_z_m=0.0)
    assert not info["in_basket"] and lowest < top
    assert info["load_after_release_n"] == pytest.approx(weight, abs=0.1)
    info, lowest = _wedged_place(arm, retreat_z_m=0.40)
    assert not info["in_basket"] and lowest > top
    assert arm.tcp_pose()[0][2] == pytest.approx(0.40, abs=0.01)


def test_a_free_release_reads_the_empty_gripper_and_still_rises_clear_of_the_basket(arm):
    """The wrist reads the empty gripper's weight once the object has dropped; place rises all
    the same, so the next primitive neither narrows the fingers nor moves sideways among what the
    basket holds. The former place (rise_after_release False) ended where it opened."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact

    for rise, tcp_z in ((True, 0.40), (False, 0.25)):
        arm.reset_scene([TALL], [(0.5, 0.0, 0.06)], target="green bar")
        run_to_end(arm.start("grasp", pose=GraspPose(np.array([0.5, 0.0, 0.09]), DOWN, 0.06), width=0.06,
                             force=60.0))
        set_contact(rise_after_release=rise)
        try:
            done = run_to_end(arm.start("place"))
        finally:
            reset_contact()
        assert done.info["in_basket"]
        assert abs(done.info["load_after_release_n"]) < 0.05
        assert arm.tcp_pose()[0][2] == pytest.approx(tcp_z, abs=0.01)
