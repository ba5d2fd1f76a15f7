"""The unchanged StretchDriver on the simulated Stretch: grasps, empty grasps, faults, ground truth.

One simulated robot is shared by the module (building it loads the URDF meshes, ~1.5 s); each test
resets the scene. Labels are checked with the Watchdog classifier when it is importable, and the
raw telemetry is always checked against the profile's thresholds.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stretch_urdf", reason="hello-robot-stretch-urdf not installed")

from bt_grasp.drivers.base import Driver, Fault, GraspPose  # noqa: E402
from bt_grasp.drivers.capabilities import FaultInjectable, GroundTruth, MobileBase  # noqa: E402
from bt_grasp.drivers.stretch.camera import head_camera_pose  # noqa: E402
from bt_grasp.drivers.stretch.sim.factory import make_sim_stretch_driver  # noqa: E402
from bt_grasp.services import Services  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402
from bt_grasp.watchdog.thresholds import thresholds_from_profile  # noqa: E402

SEED_WITH_CUBE = 3  # scene seed whose first object is a 4.5 cm cube (any graspable object works)



def _label(tel, stretch_profile) -> str | None:
    try:
        from bt_grasp.watchdog.classify import classify
    except ImportError:
        return None
    return classify(tel, thresholds_from_profile(stretch_profile)).label.value


def _grasp_first(sim_stretch, seed: int = SEED_WITH_CUBE, **kw):
    sim_stretch.reset(0, seed)
    body = next(iter(sim_stretch.world.objects))
    p = sim_stretch.world.object_position(body)
    ex = sim_stretch.grasp(GraspPose(position=p, orientation=np.array([0, 0, 0, 1.0]), width=0.05), 0.05, 10.0, **kw)
    return ex, sim_stretch.world.objects[body].spec.name


def _clear_table(sim_stretch) -> None:
    w = sim_stretch.world
    for b in list(w.objects):
        w.pb.removeBody(b, physicsClientId=w.cid)
        del w.objects[b]


def test_protocols(sim_stretch) -> None:
    assert isinstance(sim_stretch, Driver) and isinstance(sim_stretch, MobileBase)
    assert isinstance(sim_stretch, GroundTruth) and isinstance(sim_stretch, FaultInjectable)


def test_grasp_holds_object(sim_stretch, stretch_profile) -> None:
    ex, name = _grasp_first(sim_stretch)
    th = thresholds_from_profile(stretch_profile)
    assert ex.fault is None
    assert sim_stretch.held_object() == name
    tel = ex.telemetry
    assert set(np.unique(tel.phase)) == {int(p) for p in Phase}
    hold = tel.phase == Phase.HOLD
    assert tel.aperture_norm[hold].min() > th.closed_eps  # stopped on the object, not at the stop
    assert tel.effort[hold].mean() >= th.hold_effort_min
    rise = tel.ee_height[hold].mean() - tel.ee_height[tel.phase == Phase.SETTLE].mean()
    assert th.micro_lift_min_m <= rise <= th.micro_lift_max_m
    assert _label(tel, stretch_profile) in (None, "SUCCESS")
    # backed off after the grasp: lower effort, object still held
    sim_stretch.clock.sleep(1.0)
    g = sim_stretch.robot.end_of_arm.get_joint("stretch_gripper").status
    assert abs(g["effort"]) < 100 * tel.effort[hold].mean()
    assert sim_stretch.held_object() == name
    # ... and it goes into the basket
    place = sim_stretch.place("basket")
    assert place.fault is None
    assert sim_stretch.object_in_basket(name)


def test_empty_grasp_looks_empty(sim_stretch, stretch_profile) -> None:
    sim_stretch.reset(0, 0)
    _clear_table(sim_stretch)
    ex = sim_stretch.grasp(GraspPose(position=np.array([0.0, -0.7, 0.57]), orientation=np.array([0, 0, 0, 1.0]),
                             width=0.05), 0.05, 10.0)
    th = thresholds_from_profile(stretch_profile)
    tel = ex.telemetry
    end_close = tel.phase == Phase.SETTLE
    assert tel.aperture_norm[end_close].max() <= th.closed_eps  # at the closed stop (pos_pct ~ 0)
    assert tel.effort[end_close].mean() <= th.empty_effort_max
    assert sim_stretch.held_object() is None
    assert _label(tel, stretch_profile) in (None, "EMPTY")


def test_observation_geometry_and_annotations(sim_stretch) -> None:
    obs = sim_stretch.reset(0, 1)
    assert obs.rgb.dtype == np.uint8 and obs.depth.dtype == np.float32
    ann = obs.annotations
    assert ann is not None and set(ann["objects"]) == set(sim_stretch.world.objects)
    visible = set(np.unique(ann["instance"])) & set(sim_stretch.world.objects)
    assert visible, "objects on the table must be in view of the head camera"
    # the driver's kinematic chain agrees with the simulator's camera link
    T_sim = sim_stretch.camera.pose_world()
    np.testing.assert_allclose(obs.T_cam_base, T_sim, atol=2e-3)
    # back-projecting an object's pixels lands on the object (pinhole: P = T_cam_base · [d·K⁻¹·(u, v, 1), 1])
    b = next(iter(visible))
    v, u = np.argwhere(ann["instance"] == b).mean(axis=0).round().astype(int)
    d = obs.depth[v, u]
    P = obs.T_cam_base @ np.append(d * np.linalg.inv(obs.K) @ [u, v, 1.0], 1.0)
    assert np.linalg.norm(P[:3] - sim_stretch.world.object_position(b)) < 0.05


@pytest.mark.parametrize("pan,tilt", [(-1.5708, -0.8), (0.0, 0.0), (-0.7, -0.3), (0.9, 0.4)])
def test_head_chain_matches_urdf(sim_stretch, pan, tilt) -> None:
    w = sim_stretch.world
    for name, q in (("joint_head_pan", pan), ("joint_head_tilt", tilt)):
        w.pb.resetJointState(w.robot, w.joint[name], q, physicsClientId=w.cid)
    T_world = sim_stretch.camera.pose_world()  # base at the origin after reset
    np.testing.assert_allclose(head_camera_pose(pan, tilt), T_world, atol=2e-3)
    sim_stretch.reset(0, 0)


def test_gaze_at_centres_point(sim_stretch) -> None:
    sim_stretch.reset(0, 0)
    target = np.array([0.1, -0.7, 0.56])
    ex = sim_stretch.gaze_at(target)
    assert ex.fault is None
    obs = sim_stretch.observe()
    p = np.linalg.inv(obs.T_cam_base) @ np.append(target, 1.0)
    assert np.hypot(p[0], p[1]) / p[2] < 0.03  # on the optical axis


def test_fault_remove_target_on_close(sim_stretch, stretch_profile) -> None:
    sim_stretch.inject(Fault("remove_target_on_close", primitive="grasp"))
    ex, _ = _grasp_first(sim_stretch)
    assert sim_stretch.held_object() is None
    th = thresholds_from_profile(stretch_profile)
    assert ex.telemetry.aperture_norm[ex.telemetry.phase == Phase.HOLD].max() <= th.closed_eps
    # the removed object is parked out of reach and stays there: it does not fall without end
    sim_stretch.lift(0.05)
    w = sim_stretch.world
    heights = [float(w.object_position(b)[2]) for b in w.objects]
    assert min(heights) > -0.1, heights


def test_fault_block_lift_and_never_finish(sim_stretch, stretch_profile) -> None:
    sim_stretch.inject(Fault("block_lift", {"after_m": 0.0}, primitive="grasp"))
    ex, _ = _grasp_first(sim_stretch)
    tel = ex.telemetry
    rise = tel.ee_height[tel.phase == Phase.HOLD].max() - tel.ee_height[tel.phase == Phase.SETTLE].mean()
    assert rise < thresholds_from_profile(stretch_profile).micro_lift_min_m
    sim_stretch.inject(Fault("never_finish", primitive="lift"))
    t0 = sim_stretch.clock.now()
    ex = sim_stretch.lift(0.05, timeout=5.0)
    assert ex.fault == "timeout"
    assert 5.0 <= ex.duration <= 5.5 and sim_stretch.clock.now() - t0 <= 5.5


def test_fault_block_fingers(sim_stretch) -> None:
    sim_stretch.inject(Fault("block_fingers", {"at_norm": 0.5}))
    sim_stretch.reset(0, 0)
    _clear_table(sim_stretch)
    sim_stretch.inject(Fault("block_fingers", {"at_norm": 0.5}))
    ex = sim_stretch.grasp(GraspPose(position=np.array([0.0, -0.7, 0.57]), orientation=np.array([0, 0, 0, 1.0]),
                             width=0.05), 0.05, 10.0)
    settle = ex.telemetry.aperture_norm[ex.telemetry.phase == Phase.SETTLE]
    assert 0.4 <= settle.mean() <= 0.6


def test_fault_mass_and_friction_apply_to_target(sim_stretch) -> None:
    sim_stretch.reset(0, SEED_WITH_CUBE)
    body = next(iter(sim_stretch.world.objects))
    sim_stretch.inject(Fault("mass", {"value": 3.0}, primitive="grasp"))
    sim_stretch.inject(Fault("friction", {"value": 0.05}, primitive="grasp"))
    p = sim_stretch.world.object_position(body)
    sim_stretch.grasp(GraspPose(position=p, orientation=np.array([0, 0, 0, 1.0]), width=0.05), 0.05, 10.0)
    info = sim_stretch.world.pb.getDynamicsInfo(body, -1, physicsClientId=sim_stretch.world.cid)
    assert info[0] == pytest.approx(3.0) and info[1] == pytest.approx(0.05)
    assert sim_stretch.held_object() is None  # 3 kg on 5 % friction does not come up
    sim_stretch.clear_faults()
    info = sim_stretch.world.pb.getDynamicsInfo(body, -1, physicsClientId=sim_stretch.world.cid)
    assert info[0] != pytest.approx(3.0)


def test_software_faults(sim_stretch) -> None:
    sim_stretch.reset(0, 0)
    sim_stretch.inject(Fault("driver_exception", primitive="lift"))
    with pytest.raises(RuntimeError, match="injected"):
        sim_stretch.lift(0.02)
    sim_stretch.inject(Fault("nan_telemetry", {"from_frac": 0.5}))
    ex = sim_stretch.open_gripper()
    n = len(ex.telemetry)
    assert n > 2 and np.isnan(ex.telemetry.effort[n // 2 + 1:]).all() and np.isfinite(ex.telemetry.effort[0])


def test_stop_halts_lift(sim_stretch) -> None:
    sim_stretch.reset(0, 0)
    r = sim_stretch.robot
    r.lift.move_to(0.3)
    r.push_command()
    sim_stretch.clock.sleep(1.0)
    z_stop = r.lift.status["pos"]
    assert z_stop < 0.8  # it was moving
    sim_stretch.stop()
    sim_stretch.clock.sleep(1.5)
    z1 = r.lift.status["pos"]
    sim_stretch.clock.sleep(1.0)
    assert abs(r.lift.status["pos"] - z1) < 0.002  # halted ...
    assert abs(z1 - z_stop) < 0.04  # ... within braking distance (v²/2a = 3 cm) of where stop() was called


def test_push_moves_object(sim_stretch) -> None:
    sim_stretch.reset(0, SEED_WITH_CUBE)
    body = next(iter(sim_stretch.world.objects))
    p0 = sim_stretch.world.object_position(body)
    start = p0 + np.array([-0.08, 0.0, 0.0])
    ex = sim_stretch.push(start, start + np.array([0.15, 0.0, 0.0]), 0.58)  # height: base-frame z
    assert ex.fault is None
    assert sim_stretch.world.object_position(body)[0] - p0[0] > 0.03


def test_infeasible_grasp_reports_without_moving(sim_stretch) -> None:
    sim_stretch.reset(0, 0)
    pose = GraspPose(position=np.array([0.0, 0.5, 0.6]), orientation=np.array([0, 0, 0, 1.0]), width=0.05)
    assert sim_stretch.feasible([pose])[0] is False
    assert sim_stretch.feasible([np.eye(4)])[0] is False and sim_stretch.feasible([np.array([0.0, -0.6, 0.6, 0, 0, 0, 1])])[0]
    ex = sim_stretch.grasp(pose, 0.05, 10.0)
    assert ex.fault and ex.fault.startswith("infeasible")


def test_reset_puts_target_in_scene(sim_stretch) -> None:
    from bt_grasp.drivers.stretch.sim.scene import object_pool

    wanted = object_pool()[-1].name
    sim_stretch.reset(0, 5, target=wanted)
    assert wanted in sim_stretch.object_names().values()
    assert sim_stretch.task() == wanted


@pytest.mark.parametrize("backend", ["sim", "geometric"])
def test_perception_to_grasp_seam(sim_stretch, stretch_profile, backend) -> None:
    """What the grasp leaf does: survey, locate the task object, plan grasps, take the first one the
    Stretch calls feasible (closing along base x), grasp — with the shared perception code."""
    perception = pytest.importorskip("bt_grasp.perception.backends")
    from bt_grasp.perception.grasps import plan_grasps

    per = perception.make_perceiver(backend)
    obs = sim_stretch.reset(0, 2)
    scene = per.survey(obs)
    located = per.locate(obs, sim_stretch.task(), scene)
    assert located is not None
    pose = next(c for c in plan_grasps(obs, located)[:8] if sim_stretch.feasible([c])[0])
    ex = sim_stretch.grasp(pose, pose.width, 10.0)
    assert ex.fault is None
    assert sim_stretch.held_object() == sim_stretch.task()
    assert _label(ex.telemetry, stretch_profile) in (None, "SUCCESS")


def test_clutter_tree_episode_on_sim_stretch(sim_stretch, stretch_profile, tmp_path) -> None:
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
    th = thresholds_from_profile(stretch_profile)
    world = SimpleNamespace(
        driver=sim_stretch, perceiver=make_perceiver("sim"), profile=stretch_profile,
        services=Services(plan_grasps=plan_grasps, plan_push=plan_push, classify=lambda t: classify(t, th),
                          semantic_verifier=lambda ctx: (sim_stretch.held_object() == sim_stretch.task(),
                                                         "sim ground truth")))
    spec = load_tree("trees/clutter.yaml")
    sim_stretch.reset(episode=0, seed=2, target=goal_blackboard(None, spec.goal, None).get("goal.object"))
    ctx = build_context(spec, world, goal_blackboard(None, spec.goal, sim_stretch.task()))
    trace = tmp_path / "stretch.jsonl"
    result = Runner(spec, ctx, trace_path=str(trace), header_extra={"robot": stretch_profile.name}).run()
    assert result.decision in (Decision.FINALIZE, Decision.WAIT_CLARIFY)
    assert result.decision == Decision.FINALIZE and sim_stretch.object_in_basket(sim_stretch.task())
    lines = trace.read_text().splitlines()
    assert len(lines) >= 2


def test_nav_to_a_named_place_uses_the_profiles_nav_places(stretch_profile) -> None:
    named = stretch_profile.model_copy(deep=True)
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
