"""The unchanged StretchDriver on the simulated Stretch: grasps, empty grasps, faults, ground truth.

One simulated robot is shared by the module (building it loads the URDF meshes, ~1.5 s); each test
resets the scene. Labels are checked with the Watchdog classifier when it is importable, and the
raw telemetry is always checked against the profile's thresholds.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stretch_urdf", reason="hello-robot-stretch-urdf not installed")

from bt_grasp.drivers.base import Driver, Fault, FaultInjectable, GraspPose, GroundTruth, MobileBase  # noqa: E402
from bt_grasp.drivers.stretch.camera import head_camera_pose  # noqa: E402
from bt_grasp.drivers.stretch.sim.factory import make_sim_stretch_driver  # noqa: E402
from bt_grasp.profile import load_profile  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402
from bt_grasp.watchdog.thresholds import thresholds_from_profile  # noqa: E402

SEED_WITH_CUBE = 3  # scene seed whose first object is a 4.5 cm cube (any graspable object works)


@pytest.fixture(scope="module")
def profile():
    return load_profile("robots/stretch3.yaml")


@pytest.fixture(scope="module")
def drv(profile):
    d = make_sim_stretch_driver(profile)
    yield d
    d.close()


def _label(tel, profile) -> str | None:
    try:
        from bt_grasp.watchdog.classify import classify
    except ImportError:
        return None
    return classify(tel, thresholds_from_profile(profile)).label.value


def _grasp_first(drv, seed: int = SEED_WITH_CUBE, **kw):
    drv.reset(0, seed)
    body = next(iter(drv.world.objects))
    p = drv.world.object_position(body)
    ex = drv.grasp(GraspPose(position=p, orientation=np.array([0, 0, 0, 1.0]), width=0.05), 0.05, 10.0, **kw)
    return ex, drv.world.objects[body].spec.name


def _clear_table(drv) -> None:
    w = drv.world
    for b in list(w.objects):
        w.pb.removeBody(b, physicsClientId=w.cid)
        del w.objects[b]


def test_protocols(drv) -> None:
    assert isinstance(drv, Driver) and isinstance(drv, MobileBase)
    assert isinstance(drv, GroundTruth) and isinstance(drv, FaultInjectable)


def test_grasp_holds_object(drv, profile) -> None:
    ex, name = _grasp_first(drv)
    th = thresholds_from_profile(profile)
    assert ex.fault is None
    assert drv.held_object() == name
    tel = ex.telemetry
    assert set(np.unique(tel.phase)) == {int(p) for p in Phase}
    hold = tel.phase == Phase.HOLD
    assert tel.aperture_norm[hold].min() > th.closed_eps  # stopped on the object, not at the stop
    assert tel.effort[hold].mean() >= th.hold_effort_min
    rise = tel.ee_height[hold].mean() - tel.ee_height[tel.phase == Phase.SETTLE].mean()
    assert th.micro_lift_min_m <= rise <= th.micro_lift_max_m
    assert _label(tel, profile) in (None, "SUCCESS")
    # backed off after the grasp: lower effort, object still held
    drv.clock.sleep(1.0)
    g = drv.robot.end_of_arm.get_joint("stretch_gripper").status
    assert abs(g["effort"]) < 100 * tel.effort[hold].mean()
    assert drv.held_object() == name
    # ... and it goes into the basket
    place = drv.place("basket")
    assert place.fault is None
    assert drv.object_in_basket(name)


def test_empty_grasp_looks_empty(drv, profile) -> None:
    drv.reset(0, 0)
    _clear_table(drv)
    ex = drv.grasp(GraspPose(position=np.array([0.0, -0.7, 0.57]), orientation=np.array([0, 0, 0, 1.0]),
                             width=0.05), 0.05, 10.0)
    th = thresholds_from_profile(profile)
    tel = ex.telemetry
    end_close = tel.phase == Phase.SETTLE
    assert tel.aperture_norm[end_close].max() <= th.closed_eps  # at the closed stop (pos_pct ~ 0)
    assert tel.effort[end_close].mean() <= th.empty_effort_max
    assert drv.held_object() is None
    assert _label(tel, profile) in (None, "EMPTY")


def test_observation_geometry_and_annotations(drv) -> None:
    obs = drv.reset(0, 1)
    assert obs.rgb.dtype == np.uint8 and obs.depth.dtype == np.float32
    ann = obs.annotations
    assert ann is not None and set(ann["objects"]) == set(drv.world.objects)
    visible = set(np.unique(ann["instance"])) & set(drv.world.objects)
    assert visible, "objects on the table must be in view of the head camera"
    # the driver's kinematic chain agrees with the simulator's camera link
    T_sim = drv.camera.pose_world()
    np.testing.assert_allclose(obs.T_cam_base, T_sim, atol=2e-3)
    # back-projecting an object's pixels lands on the object (DESIGN back-projection formula)
    b = next(iter(visible))
    v, u = np.argwhere(ann["instance"] == b).mean(axis=0).round().astype(int)
    d = obs.depth[v, u]
    P = obs.T_cam_base @ np.append(d * np.linalg.inv(obs.K) @ [u, v, 1.0], 1.0)
    assert np.linalg.norm(P[:3] - drv.world.object_position(b)) < 0.05


@pytest.mark.parametrize("pan,tilt", [(-1.5708, -0.8), (0.0, 0.0), (-0.7, -0.3), (0.9, 0.4)])
def test_head_chain_matches_urdf(drv, pan, tilt) -> None:
    w = drv.world
    for name, q in (("joint_head_pan", pan), ("joint_head_tilt", tilt)):
        w.pb.resetJointState(w.robot, w.joint[name], q, physicsClientId=w.cid)
    T_world = drv.camera.pose_world()  # base at the origin after reset
    np.testing.assert_allclose(head_camera_pose(pan, tilt), T_world, atol=2e-3)
    drv.reset(0, 0)


def test_gaze_at_centres_point(drv) -> None:
    drv.reset(0, 0)
    target = np.array([0.1, -0.7, 0.56])
    ex = drv.gaze_at(target)
    assert ex.fault is None
    obs = drv.observe()
    p = np.linalg.inv(obs.T_cam_base) @ np.append(target, 1.0)
    assert np.hypot(p[0], p[1]) / p[2] < 0.03  # on the optical axis


def test_fault_remove_target_on_close(drv, profile) -> None:
    drv.inject(Fault("remove_target_on_close", primitive="grasp"))
    ex, _ = _grasp_first(drv)
    assert drv.held_object() is None
    th = thresholds_from_profile(profile)
    assert ex.telemetry.aperture_norm[ex.telemetry.phase == Phase.HOLD].max() <= th.closed_eps


def test_fault_block_lift_and_never_finish(drv, profile) -> None:
    drv.inject(Fault("block_lift", {"after_m": 0.0}, primitive="grasp"))
    ex, _ = _grasp_first(drv)
    tel = ex.telemetry
    rise = tel.ee_height[tel.phase == Phase.HOLD].max() - tel.ee_height[tel.phase == Phase.SETTLE].mean()
    assert rise < thresholds_from_profile(profile).micro_lift_min_m
    drv.inject(Fault("never_finish", primitive="lift"))
    t0 = drv.clock.now()
    ex = drv.lift(0.05, timeout=5.0)
    assert ex.fault == "timeout"
    assert 5.0 <= ex.duration <= 5.5 and drv.clock.now() - t0 <= 5.5


def test_fault_block_fingers(drv) -> None:
    drv.inject(Fault("block_fingers", {"at_norm": 0.5}))
    drv.reset(0, 0)
    _clear_table(drv)
    drv.inject(Fault("block_fingers", {"at_norm": 0.5}))
    ex = drv.grasp(GraspPose(position=np.array([0.0, -0.7, 0.57]), orientation=np.array([0, 0, 0, 1.0]),
                             width=0.05), 0.05, 10.0)
    settle = ex.telemetry.aperture_norm[ex.telemetry.phase == Phase.SETTLE]
    assert 0.4 <= settle.mean() <= 0.6


def test_fault_mass_and_friction_apply_to_target(drv) -> None:
    drv.reset(0, SEED_WITH_CUBE)
    body = next(iter(drv.world.objects))
    drv.inject(Fault("mass", {"value": 3.0}, primitive="grasp"))
    drv.inject(Fault("friction", {"value": 0.05}, primitive="grasp"))
    p = drv.world.object_position(body)
    drv.grasp(GraspPose(position=p, orientation=np.array([0, 0, 0, 1.0]), width=0.05), 0.05, 10.0)
    info = drv.world.pb.getDynamicsInfo(body, -1, physicsClientId=drv.world.cid)
    assert info[0] == pytest.approx(3.0) and info[1] == pytest.approx(0.05)
    assert drv.held_object() is None  # 3 kg on 5 % friction does not come up
    drv.clear_faults()
    info = drv.world.pb.getDynamicsInfo(body, -1, physicsClientId=drv.world.cid)
    assert info[0] != pytest.approx(3.0)


def test_software_faults(drv) -> None:
    drv.reset(0, 0)
    drv.inject(Fault("driver_exception", primitive="lift"))
    with pytest.raises(RuntimeError, match="injected"):
        drv.lift(0.02)
    drv.inject(Fault("nan_telemetry", {"from_frac": 0.5}))
    ex = drv.open_gripper()
    n = len(ex.telemetry)
    assert n > 2 and np.isnan(ex.telemetry.effort[n // 2 + 1:]).all() and np.isfinite(ex.telemetry.effort[0])


def test_stop_halts_lift(drv) -> None:
    drv.reset(0, 0)
    r = drv.robot
    r.lift.move_to(0.3)
    r.push_command()
    drv.clock.sleep(1.0)
    z_stop = r.lift.status["pos"]
    assert z_stop < 0.8  # it was moving
    drv.stop()
    drv.clock.sleep(1.5)
    z1 = r.lift.status["pos"]
    drv.clock.sleep(1.0)
    assert abs(r.lift.status["pos"] - z1) < 0.002  # halted ...
    assert abs(z1 - z_stop) < 0.04  # ... within braking distance (v²/2a = 3 cm) of where stop() was called


def test_push_moves_object(drv) -> None:
    drv.reset(0, SEED_WITH_CUBE)
    body = next(iter(drv.world.objects))
    p0 = drv.world.object_position(body)
    start = p0 + np.array([-0.08, 0.0, 0.0])
    ex = drv.push(start, start + np.array([0.15, 0.0, 0.0]), 0.58)  # height: base-frame z
    assert ex.fault is None
    assert drv.world.object_position(body)[0] - p0[0] > 0.03


def test_infeasible_grasp_reports_without_moving(drv) -> None:
    drv.reset(0, 0)
    pose = GraspPose(position=np.array([0.0, 0.5, 0.6]), orientation=np.array([0, 0, 0, 1.0]), width=0.05)
    assert drv.feasible([pose])[0] is False
    assert drv.feasible([np.eye(4)])[0] is False and drv.feasible([np.array([0.0, -0.6, 0.6, 0, 0, 0, 1])])[0]
    ex = drv.grasp(pose, 0.05, 10.0)
    assert ex.fault and ex.fault.startswith("infeasible")


def test_reset_puts_target_in_scene(drv) -> None:
    from bt_grasp.drivers.stretch.sim.scene import object_pool

    wanted = object_pool()[-1].name
    drv.reset(0, 5, target=wanted)
    assert wanted in drv.object_names().values()
    assert drv.task() == wanted


@pytest.mark.parametrize("backend", ["sim", "geometric"])
def test_perception_to_grasp_seam(drv, profile, backend) -> None:
    """What the grasp leaf does: survey, locate the task object, plan grasps, take the first one the
    Stretch calls feasible (closing along base x), grasp — with the shared perception code."""
    perception = pytest.importorskip("bt_grasp.perception.backends")
    from bt_grasp.perception.grasps import plan_grasps

    per = perception.make_perceiver(backend)
    obs = drv.reset(0, 2)
    scene = per.survey(obs)
    located = per.locate(obs, drv.task(), scene)
    assert located is not None
    pose = next(c for c in plan_grasps(obs, located)[:8] if drv.feasible([c])[0])
    ex = drv.grasp(pose, pose.width, 10.0)
    assert ex.fault is None
    assert drv.held_object() == drv.task()
    assert _label(ex.telemetry, profile) in (None, "SUCCESS")


def test_clutter_tree_episode_on_sim_stretch(drv, profile, tmp_path) -> None:
    """trees/clutter.yaml end to end on the simulated Stretch through the runner (the world is
    assembled here as bt_grasp.world would: driver, sim perceiver, planners, classifier)."""
    try:
        from types import SimpleNamespace

        from bt_grasp.episode import build_context, goal_blackboard
        from bt_grasp.outcomes import Decision
        from bt_grasp.perception.backends import make_perceiver
        from bt_grasp.perception.grasps import plan_grasps
        from bt_grasp.perception.push import plan_push
        from bt_grasp.runner import Runner
        from bt_grasp.spec.loader import load_tree
        from bt_grasp.watchdog.classify import classify
    except ImportError as exc:
        pytest.skip(f"runner stack not importable: {exc}")
    th = thresholds_from_profile(profile)
    world = SimpleNamespace(
        driver=drv, perceiver=make_perceiver("sim"), profile=profile,
        services={"plan_grasps": plan_grasps, "plan_push": plan_push, "classify": lambda t: classify(t, th),
                  "semantic_verifier": lambda ctx: (drv.held_object() == drv.task(), "sim ground truth")})
    spec = load_tree("trees/clutter.yaml")
    drv.reset(episode=0, seed=2, target=goal_blackboard(None, spec.goal, None).get("goal.object"))
    ctx = build_context(spec, world, goal_blackboard(None, spec.goal, drv.task()))
    trace = tmp_path / "stretch.jsonl"
    result = Runner(spec, ctx, trace_path=str(trace), header_extra={"robot": profile.name}).run()
    assert result.decision in (Decision.FINALIZE, Decision.WAIT_CLARIFY)
    assert result.decision == Decision.FINALIZE and drv.object_in_basket(drv.task())
    lines = trace.read_text().splitlines()
    assert len(lines) >= 2


def test_nav_to_a_named_place_uses_the_profiles_nav_places(profile) -> None:
    named = profile.model_copy(deep=True)
    named.driver_options["nav_places"] = {"kitchen_table": [0.2, 0.0, 0.0]}
    d = make_sim_stretch_driver(named)
    try:
        d.reset(episode=0, seed=0)
        x0 = float(d.robot.base.status["x"])
        ok = d.nav_to("kitchen_table", timeout=60.0)
        assert ok.fault is None, ok.fault
        assert abs(float(d.robot.base.status["x"]) - x0 - 0.2) < 0.03
        unknown = d.nav_to("garage", timeout=60.0)
        assert unknown.fault.startswith("infeasible: unknown place 'garage'")
        assert "kitchen_table" in unknown.fault
    finally:
        d.close()
