"""The arm's speed-ups keep scenes and frames as they were and leave no files behind."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pybullet as pb
import pytest
from helpers import ROOT

pytest.importorskip("airo_models")

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.pybullet_arm import episodes, scene, speed  # noqa: E402
from bt_grasp.drivers.pybullet_arm.driver import DOWN, PyBulletArm  # noqa: E402
from bt_grasp.profile import load_profile  # noqa: E402
from bt_grasp.watchdog.telemetry import Phase  # noqa: E402

BOX = ObjectSpec("red box", "box", "red", "medium", "box", (0.05, 0.05, 0.06), (0.9, 0.1, 0.1, 1), 0.15)
CAN = ObjectSpec("blue can", "can", "blue", "medium", "cylinder", (0.028, 0.08), (0.1, 0.2, 0.9, 1), 0.12)


@pytest.fixture
def options():
    """Restore the speed switches after a test changes them."""
    old = speed.set_options()
    yield speed
    speed.set_options(**old)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("BT_GRASP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BT_GRASP_SCENE_CACHE", raising=False)
    return tmp_path / "cache"


def _objects() -> list[ObjectSpec]:
    return [o for o in scene.local_catalogue() if scene.fits_gripper(o)][:6]


def _same(a: episodes.EpisodeSpec, b: episodes.EpisodeSpec) -> bool:
    return (a.poses, a.target, a.visibilities, a.objects) == (b.poses, b.target, b.visibilities, b.objects)


def test_settle_stops_early_once_every_body_rests():
    c = pb.connect(pb.DIRECT)
    try:
        scene.configure(c)
        scene.add_table(c)
        bodies = [scene.spawn(c, BOX, (0.5, 0.0, 0.05)), scene.spawn(c, CAN, (0.6, 0.1, 0.1))]
        used = scene.settle(c, bodies, max_s=4.0)
        assert 0.3 < used < 4.0
        assert scene.at_rest(c, bodies)
    finally:
        pb.disconnect(c)


def test_shared_generation_client_gives_the_scene_of_a_fresh_client(options):
    options.set_options(shared_generator=False)
    fresh = episodes.generate_scene(5, n_objects=6, objects=_objects())
    options.set_options(shared_generator=True)
    first = episodes.generate_scene(5, n_objects=6, objects=_objects())
    again = episodes.generate_scene(5, n_objects=6, objects=_objects())
    assert _same(fresh, first) and _same(first, again)


def test_scene_cache_returns_the_generated_scene_and_is_keyed_by_arguments(options, cache_dir, monkeypatch):
    options.set_options(scene_cache=True)
    made = episodes.generate_scene(9, n_objects=6, objects=_objects())
    first = episodes.generate_episode(9, n_objects=6, objects=_objects())  # miss: generates and stores
    assert _same(made, first)
    assert len(list((cache_dir / "scenes").glob("*.pkl"))) == 1

    def no_generation(*args, **kwargs):
        raise AssertionError("a cached scene was generated again")

    monkeypatch.setattr(episodes, "generate_scene", no_generation)
    assert _same(episodes.generate_episode(9, n_objects=6, objects=_objects()), made)  # from disk
    with pytest.raises(AssertionError, match="generated again"):  # another seed is another key
        episodes.generate_episode(10, n_objects=6, objects=_objects())
    monkeypatch.setenv("BT_GRASP_SCENE_CACHE", "off")
    with pytest.raises(AssertionError, match="generated again"):
        episodes.generate_episode(9, n_objects=6, objects=_objects())


def test_a_damaged_cache_entry_is_regenerated(options, cache_dir):
    options.set_options(scene_cache=True)
    first = episodes.generate_episode(11, n_objects=5, objects=_objects())
    (entry,) = (cache_dir / "scenes").glob("*.pkl")
    entry.write_bytes(b"torn")
    assert _same(episodes.generate_episode(11, n_objects=5, objects=_objects()), first)
    assert entry.read_bytes() != b"torn"


def test_lean_robot_renders_the_same_frames(options):
    frames = []
    for lean in (False, True):
        options.set_options(lean_robot=lean)
        arm = PyBulletArm(load_profile("ur5e_robotiq"), image_size=128)
        try:
            arm.reset_scene([BOX, CAN], [(0.5, 0.0, 0.03), (0.58, 0.06, 0.04)])
            q, err, _ = arm.ik.solve(np.array([0.52, 0.02, 0.12]), DOWN)  # the arm above the objects
            assert err < 1e-3
            arm._set_arm_now(q)
            arm.clock += 1.0
            frames.append(arm.observe())
        finally:
            arm.close()
    full, lean = frames
    assert np.array_equal(full.rgb, lean.rgb) and np.array_equal(full.depth, lean.depth)
    assert np.array_equal(full.annotations["instance"], lean.annotations["instance"])


def test_resting_objects_sleep_until_the_gripper_touches_them(options):
    options.set_options(sleep_resting=True)
    arm = PyBulletArm(load_profile("ur5e_robotiq"), image_size=128)
    try:
        arm.reset_scene([BOX], [(0.5, 0.0, 0.03)], target="red box")
        arm._begin(None, Phase.APPROACH)
        for _ in arm._wait(0.5):  # physics steps with nothing commanded
            pass
        (body,) = arm.bodies
        lin, ang = pb.getBaseVelocity(body, physicsClientId=arm.client)
        pose = pb.getBasePositionAndOrientation(body, physicsClientId=arm.client)
        assert lin == (0.0, 0.0, 0.0) and ang == (0.0, 0.0, 0.0)   # asleep: zeroed and not integrated
        for _ in arm._wait(0.3):
            pass
        assert pb.getBasePositionAndOrientation(body, physicsClientId=arm.client) == pose
        from bt_grasp.drivers.base import GraspPose

        done = arm.grasp(GraspPose(np.array([0.5, 0.0, 0.03]), DOWN, 0.08), 0.08, 60.0)
        assert done.fault is None and done.info["held"] == "red box"  # contact woke it
    finally:
        arm.close()


SCRIPT = textwrap.dedent("""
    from bt_grasp.bench.objects import ObjectSpec
    from bt_grasp.drivers.pybullet_arm.driver import PyBulletArm
    from bt_grasp.profile import load_profile
    arm = PyBulletArm(load_profile("ur5e_robotiq"), image_size=64)
    box = ObjectSpec("red box", "box", "red", "medium", "box", (0.05, 0.05, 0.06), (0.9, 0.1, 0.1, 1), 0.15)
    arm.reset_scene([box], [(0.5, 0.0, 0.03)])
    raise RuntimeError("boom")  # an error mid-run, the driver never closed
""")


def test_a_run_leaves_no_temp_folders_even_after_an_exception(tmp_path):
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "BT_GRASP_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                              timeout=300, cwd=ROOT)
        assert "RuntimeError: boom" in proc.stderr, proc.stderr[-2000:]
        assert list(tmp.iterdir()) == []
    urdfs = sorted(p.name for p in (cache / "urdf").iterdir())
    assert len(urdfs) == 2 and all(n.endswith(".urdf") for n in urdfs)  # lean arm + ghost, reused


@pytest.mark.parametrize("modes, texts", [
    (["legacy", "warm"], ["| legacy | 1 |", "| warm | 1 |", "speed-up warm vs legacy", "same decision"]),
    (["warm", "mujoco"], ["| warm | 1 |", "| mujoco | 1 |", "speed-up mujoco vs warm", "mujoco: median"]),
])
def test_episode_speed_bench_runs_and_prints_its_figures(modes: list[str], texts: list[str]) -> None:
    if "mujoco" in modes:  # the MuJoCo arm against the shipped one: needs the mujoco extra
        pytest.importorskip("mujoco")
        pytest.importorskip("airo_models")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "perf" / "episode_speed.py"), "--episodes", "1",
                           "--image-size", "128", "--modes", *modes],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for text in texts:
        assert text in proc.stdout, proc.stdout[-2000:]
