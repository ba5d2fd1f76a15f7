"""MujocoArm: the UR5e arm's MuJoCo world keeps the PyBullet arm's contract.

Grasps are judged by ground truth and by the Watchdog with the shipped thresholds, the camera
annotates the scene's objects, launches are recorded like the PyBullet arm's, whole episodes
run, and a seed gives the PyBullet arm's scene.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

os.environ.setdefault("MUJOCO_GL", "egl")  # headless, as the driver sets it; before mujoco is imported
pytest.importorskip("mujoco")
pytest.importorskip("airo_models")

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.base import Driver, Fault, GraspPose  # noqa: E402
from bt_grasp.drivers.capabilities import (  # noqa: E402
    FaultInjectable,
    GroundTruth,
    SimLabelling,
    Streaming,
)
from bt_grasp.drivers.pybullet_arm.params import DOWN  # noqa: E402
from bt_grasp.outcomes import Label  # noqa: E402
from bt_grasp.profile import load_profile  # noqa: E402
from bt_grasp.watchdog.classify import classify  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402
from bt_grasp.watchdog.thresholds import thresholds_from_profile  # noqa: E402

PROFILE = "ur5e_robotiq_mujoco"
BOX = ObjectSpec("red box", "box", "red", "medium", "box", (0.05, 0.05, 0.06), (0.9, 0.1, 0.1, 1), 0.15)
CENTRE = np.array([0.5, 0.0, 0.03])


@pytest.fixture(scope="module")
def mj_arm() -> Iterator[Any]:
    from bt_grasp.drivers.mujoco_arm import MujocoArm

    robot = MujocoArm(load_profile(PROFILE), image_size=128)
    yield robot
    robot.close()


def _label(tel: Any) -> Label:
    return classify(tel, thresholds_from_profile(load_profile(PROFILE))).label


def _grasp(arm: Any, pos: np.ndarray = CENTRE, width: float = 0.08, force: float = 60.0) -> Any:
    return arm.grasp(GraspPose(np.asarray(pos, float), DOWN, width), width, force)


def test_the_profile_selects_the_mujoco_driver_and_it_keeps_the_protocols(mj_arm: Any) -> None:
    from bt_grasp.world import make_driver

    assert load_profile(PROFILE).driver == "mujoco_arm"
    assert load_profile("ur5e_robotiq").driver == "pybullet_arm"  # PyBullet stays the default arm
    for protocol in (Driver, GroundTruth, FaultInjectable, Streaming, SimLabelling):
        assert isinstance(mj_arm, protocol)
    made = make_driver(load_profile(PROFILE), image_size=64)
    try:
        assert type(made).__name__ == "MujocoArm"
    finally:
        made.close()


def test_a_box_grasped_and_lifted_is_held_and_the_watchdog_says_success(mj_arm: Any) -> None:
    mj_arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    ex = _grasp(mj_arm)
    assert ex.fault is None and mj_arm.held_object() == "red box"
    tel = ex.telemetry
    assert set(np.unique(tel.phase)) == {p.value for p in Phase}
    hold = tel.phase == Phase.HOLD
    assert abs(np.median(tel.aperture_m[hold]) - 0.05) < 0.004  # the fingers stop at the box's width
    assert np.median(tel.effort[hold]) == pytest.approx(0.6, abs=0.05)  # 60 N of the profile's 100
    assert np.median(tel.load[hold]) == pytest.approx(6.87 + 0.15 * 9.81, abs=0.3)  # gripper + box
    assert _label(tel) is Label.SUCCESS
    lift = mj_arm.lift(0.15)
    assert lift.fault is None and mj_arm.held_object() == "red box"
    assert mj_arm.object_pose("red box")[0][2] > CENTRE[2] + 0.12
    assert mj_arm.launches() == []


def test_contacts_of_a_held_box_name_both_fingers_pushing_at_the_grip_force(mj_arm: Any) -> None:
    """What a launch is read with (tools/perf/launch_trace.py): every contact of one object."""
    mj_arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    resting = mj_arm.contacts_of("red box")
    assert resting and {what for what, _, _ in resting} == {"table"}
    assert sum(force for _, _, force in resting) == pytest.approx(0.15 * 9.81, rel=0.1)  # its weight
    assert _grasp(mj_arm).fault is None
    held = mj_arm.contacts_of("red box")
    fingers = [(depth, force) for what, depth, force in held if what == "finger"]
    assert {what for what, _, _ in held} == {"finger"}  # micro-lifted: off the table
    assert sum(force for _, force in fingers) == pytest.approx(2 * 60.0, rel=0.15)
    assert all(depth < 0.002 for depth, _ in fingers)
    assert mj_arm.contacts_of("no such object") == []


def test_an_observer_sees_every_physics_step_with_the_arms_readout(mj_arm: Any) -> None:
    """The same step-by-step read-out as the PyBullet arm's (tools/perf/launch_trace.py)."""
    mj_arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    seen: list[Any] = []
    remove = mj_arm.observe_steps(lambda world: seen.append((world is mj_arm.data, mj_arm.readout())))
    assert _grasp(mj_arm).fault is None
    remove()
    assert all(is_data for is_data, _ in seen)
    steps = [r.step for _, r in seen]
    assert steps == list(range(steps[0], steps[0] + len(steps)))
    hold = seen[-1][1]
    assert (hold.primitive, hold.phase) == ("grasp", "hold")
    assert hold.gap_m == pytest.approx(0.05, abs=0.004) and hold.effort > 0.5


def test_a_finger_that_loses_its_object_closes_no_faster_than_the_finger_speed(mj_arm: Any) -> None:
    """A 2F-85 closes at its set speed whatever the grip force, so an object that slips out of the
    grip is let go, not shot out. Here the held box is taken from between the fingers during a
    hold; the gap then closes at the finger speed (the servo without its drive damping, chasing a
    reference at the closed stop, sprang shut at 0.8 m/s)."""
    import mujoco

    from bt_grasp.drivers.pybullet_arm.contact import CONTACT

    mj_arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    assert _grasp(mj_arm).fault is None and mj_arm.held_object() == "red box"
    m, d = mj_arm.model, mj_arm.data
    body = next(iter(mj_arm.bodies))
    adr, dof = int(m.jnt_qposadr[m.body_jntadr[body]]), int(m.jnt_dofadr[m.body_jntadr[body]])
    d.qpos[adr:adr + 3] = (0.45, -0.2, 0.03)
    d.qvel[dof:dof + 6] = 0.0
    mujoco.mj_forward(m, d)
    tel = mj_arm.lift(0.10).telemetry
    gap, t = tel.aperture_m, tel.t
    assert gap[0] > 0.045 and gap[-1] < gap[0] - 0.02  # the fingers closed on the empty grip
    later = np.searchsorted(t, t + 0.05)  # the gap's fall over every 50 ms window
    ok = later < len(t)
    closing = (gap[ok] - gap[later[ok]]) / (t[later[ok]] - t[ok])
    assert closing.max() <= 2 * CONTACT.finger_speed_mps * 1.1


def test_a_grasp_on_nothing_is_empty(mj_arm: Any) -> None:
    mj_arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    ex = _grasp(mj_arm, pos=np.array([0.45, -0.2, 0.03]))
    assert ex.fault is None and mj_arm.held_object() is None
    assert ex.telemetry.aperture_m[ex.telemetry.phase == Phase.HOLD].max() < 0.002  # closed on air
    assert _label(ex.telemetry) is Label.EMPTY


def test_place_puts_the_held_box_in_the_basket(mj_arm: Any) -> None:
    mj_arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    assert _grasp(mj_arm).fault is None
    ex = mj_arm.place("basket")
    assert ex.fault is None and ex.info["in_basket"] is True
    assert mj_arm.held_object() is None and mj_arm.object_in_basket("red box")
    lower, upper = mj_arm.place_region("basket")
    assert np.all(lower[:2] < mj_arm.object_pose("red box")[0][:2]) and np.all(mj_arm.object_pose("red box")[0][:2] < upper[:2])


def test_injected_faults_change_what_the_grasp_meets(mj_arm: Any) -> None:
    """The simulator faults the Watchdog is tested with: the object vanishing while the fingers
    close reads EMPTY; a 5 kg object (mass fault) is still held, and the world stays stable."""
    mj_arm.clear_faults()
    mj_arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    mj_arm.inject(Fault("remove_target_on_close", primitive="grasp"))
    ex = _grasp(mj_arm)
    assert ex.info["removed"] == "red box" and mj_arm.object_names() == {}
    assert _label(ex.telemetry) is Label.EMPTY
    mj_arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    mj_arm.inject(Fault("mass", {"value": 5.0}, primitive="grasp"))
    ex = _grasp(mj_arm)
    assert mj_arm.held_object() == "red box"
    assert np.median(ex.telemetry.load[ex.telemetry.phase == Phase.HOLD]) == pytest.approx(6.87 + 5 * 9.81, abs=1.5)
    assert mj_arm.launches() == []


def test_watchdog_record_labels_grasps_from_mujoco_s_contacts(tmp_path: Any) -> None:
    """`bt-grasp watchdog record` on this arm: one attempt per induced outcome, each labelled
    from MuJoCo's contacts, pad forces and masses, which agree with what was commanded."""
    from bt_grasp.watchdog.cli import main
    from bt_grasp.watchdog.dataset import load_dataset

    assert main(["watchdog", "record", "--robot", PROFILE, "--n", "6", "--seed", "11", "-o", str(tmp_path), "-q"]) == 0
    got = load_dataset(tmp_path)
    assert len(got) == 6 and {t.meta["intent"] for t in got} == set(Label)
    assert sum(t.label.value == t.meta["intent"] for t in got) >= 5
    for t in got:
        truth = t.meta["truth"]
        assert t.meta["robot"] == PROFILE and truth["ticks"] > 100
        if t.label is Label.EMPTY:
            assert truth["contact_s"] < 0.1
        if t.label is Label.SLIP:
            assert truth["contact_s"] >= 0.1 and not truth["held_after_grasp"]
        if truth["held_after_grasp"]:  # the pads press with the commanded force on the mass set
            assert truth["pad_force_frac"] == pytest.approx(t.meta["force_frac"], abs=0.03)
            assert truth["safety_factor"] > 2.0
            fault = t.meta["fault"] or {}
            if fault.get("kind") == "mass":
                assert truth["held_mass"] == pytest.approx(fault["params"]["value"])


def test_an_object_thrown_is_recorded_as_a_launch(mj_arm: Any) -> None:
    """The benchmark's launch rule (launches.py): not held, faster than 1 m/s sideways or up."""
    mj_arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    body = next(iter(mj_arm.bodies))
    m = mj_arm.model
    dof = int(m.jnt_dofadr[m.body_jntadr[body]])
    mj_arm.data.qvel[dof:dof + 3] = (2.0, 0.0, 0.0)
    mj_arm.open_gripper()
    launches = mj_arm.launches()
    assert [(x["body"], x["primitive"]) for x in launches] == [("red box", "open_gripper")]
    assert 1.0 < launches[0]["speed"] <= 2.0


def test_the_camera_sees_the_scene_objects_with_metric_depth(mj_arm: Any) -> None:
    obs = mj_arm.reset(episode=0, seed=40)
    inst, depth = obs.annotations["instance"], obs.depth
    seen = {int(b) for b in np.unique(inst)} & set(mj_arm.bodies)
    target = next(b for b, s in mj_arm.bodies.items() if s.name == mj_arm.task())
    assert target in seen and len(seen) >= 10  # a pile of 15: most are in view from above
    assert obs.annotations["table_id"] in set(np.unique(inst).tolist())
    for b in seen:  # objects lie on the table, 0.85 m below the camera, at most ~15 cm tall
        d = depth[inst == b]
        assert 0.65 < float(np.median(d)) < 0.85
    table = depth[inst == obs.annotations["table_id"]]
    assert float(np.median(table)) == pytest.approx(0.85, abs=0.01)
    assert obs.rgb.shape == (128, 128, 3) and obs.rgb.dtype == np.uint8 and obs.rgb.std() > 10
    assert np.allclose(obs.K, load_profile(PROFILE).camera.K() * [[0.25], [0.25], [1]])


def test_a_seed_gives_the_pybullet_arms_scene(mj_arm: Any) -> None:
    """Same generated scene (objects, poses, target); after settling, every object, meshes whose
    centre of mass is off their link frame included, is within 1 cm of its generated pose and of
    where the PyBullet arm has it."""
    from bt_grasp.drivers.pybullet_arm.driver import PyBulletArm

    pb_arm = PyBulletArm(load_profile("ur5e_robotiq"), image_size=64)
    try:
        pb_arm.reset(episode=1, seed=41)
        mj_arm.reset(episode=1, seed=41)
        assert mj_arm.task() == pb_arm.task()
        assert [o.name for o in mj_arm.spec.objects] == [o.name for o in pb_arm.spec.objects]
        assert mj_arm.spec.poses == pb_arm.spec.poses
        assert sorted(mj_arm.object_names().values()) == sorted(pb_arm.object_names().values())
        for spec in mj_arm.spec.objects:
            here = mj_arm.object_pose(spec.name)[0]
            assert np.linalg.norm(here - np.array(mj_arm.spec.pose_of(spec.name)[0])) < 0.01, spec.name
            assert np.linalg.norm(here - pb_arm.object_pose(spec.name)[0]) < 0.01, spec.name
    finally:
        pb_arm.close()


def test_a_generated_scene_rests_when_the_episode_begins(mj_arm: Any) -> None:
    """Poses PyBullet settled can slump in MuJoCo (here a box fell off its pile at 1.2 m/s a tenth
    of a second into the episode, and counted as the method's launch): reset steps until rest."""
    import mujoco

    mj_arm.reset(episode=17, seed=0)
    m, d = mj_arm.model, mj_arm.data
    fastest = 0.0
    for _ in range(120):  # half a second, the arm holding at home
        mujoco.mj_step(m, d)
        for b in mj_arm.bodies:
            dof = int(m.jnt_dofadr[m.body_jntadr[b]])
            fastest = max(fastest, float(np.linalg.norm(d.qvel[dof:dof + 3])))
    assert fastest < 0.05


def test_a_clutter_episode_ends_in_a_decision() -> None:
    from bt_grasp.api import run

    result = run("clutter", robot=PROFILE, seed=40, image_size=128)
    assert result.decision.value in ("FINALIZE", "WAIT_CLARIFY"), result.reason
