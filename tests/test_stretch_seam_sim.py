"""The simulated Stretch behind the seam: its guard sees the scene through its own camera (never
the simulator's bodies), refuses a grasp whose fingers would run into another object before
anything moves, still grasps an object with room around it; its head turns through `look`."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stretch_urdf", reason="hello-robot-stretch-urdf not installed")

from bt_grasp.drivers.base import GraspPose  # noqa: E402
from bt_grasp.drivers.capabilities import GraspChecker, Head  # noqa: E402

SEED = 3
UP = np.array([0.0, 0.0, 0.0, 1.0])



def _first(sim_stretch) -> tuple[int, np.ndarray]:
    body = next(iter(sim_stretch.world.objects))
    return body, sim_stretch.world.object_position(body)


def test_protocols(sim_stretch) -> None:
    assert isinstance(sim_stretch, Head) and isinstance(sim_stretch, GraspChecker)


def test_look_turns_the_head(sim_stretch) -> None:
    sim_stretch.reset(0, SEED)
    ex = sim_stretch.look(-1.2, tilt=-0.7)
    assert ex.fault is None and ex.duration > 0
    pan, tilt = sim_stretch.head_pose()
    assert pan == pytest.approx(-1.2, abs=0.03) and tilt == pytest.approx(-0.7, abs=0.03)
    sim_stretch.look(-1.5708, tilt=-0.8)


def test_an_object_is_an_obstacle_except_to_its_own_grasp(sim_stretch) -> None:
    sim_stretch.reset(0, SEED)
    _, p = _first(sim_stretch)
    ok, why = sim_stretch.feasible([p])  # a bare point aims at nothing
    assert not ok and why.startswith("infeasible: collision: ") and "perceived points" in why, why
    pose = GraspPose(position=p, orientation=UP, width=0.05)
    assert sim_stretch.feasible([pose]) == (True, "")
    assert sim_stretch.grasp_feasible(pose, 0.05) == (True, "")


def test_a_grasp_into_a_neighbour_is_refused_before_moving_and_succeeds_once_it_is_gone(sim_stretch) -> None:
    sim_stretch.reset(0, SEED)
    body, p = _first(sim_stretch)
    w = sim_stretch.world
    # a 14 cm tall box 10 cm nearer the robot than the target: under the sloping fingers
    wall = w._box((0.04, 0.015, 0.07), (float(p[0]), float(p[1]) + 0.10, 0.55 + 0.07), (0.2, 0.2, 0.2, 1.0))
    try:
        sim_stretch.observe()
        lift0 = float(sim_stretch.robot.lift.status["pos"])
        pose = GraspPose(position=p, orientation=UP, width=0.05)
        ok, why = sim_stretch.grasp_feasible(pose, 0.05)
        assert not ok and why.startswith("infeasible: collision: fingers"), why
        ex = sim_stretch.grasp(pose, 0.05, 10.0)
        assert ex.fault == why
        assert float(sim_stretch.robot.lift.status["pos"]) == pytest.approx(lift0, abs=1e-3)  # nothing moved
    finally:
        w.pb.removeBody(wall, physicsClientId=w.cid)
    sim_stretch.observe()
    ex = sim_stretch.grasp(GraspPose(position=p, orientation=UP, width=0.05), 0.05, 10.0)
    assert ex.fault is None and sim_stretch.held_object() == w.objects[body].spec.name


def test_a_place_across_a_tall_object_is_refused_and_the_object_kept(sim_stretch) -> None:
    sim_stretch.reset(0, SEED)
    body, p = _first(sim_stretch)
    w = sim_stretch.world
    assert sim_stretch.grasp(GraspPose(position=p, orientation=UP, width=0.05), 0.05, 10.0).fault is None
    name = w.objects[body].spec.name
    basket = np.asarray(sim_stretch.opts.places["basket"])
    mid = (sim_stretch._grasp_centre_now()[:2] + basket[:2]) / 2
    wall = w._box((0.03, 0.03, 0.09), (float(mid[0]), float(mid[1]), 0.55 + 0.09), (0.2, 0.2, 0.2, 1.0))
    try:
        sim_stretch.observe()
        ex = sim_stretch.place("basket")
        assert ex.fault is not None and ex.fault.startswith("infeasible: collision: "), ex.fault
        assert sim_stretch.held_object() == name
    finally:
        w.pb.removeBody(wall, physicsClientId=w.cid)
    sim_stretch.observe()
    assert sim_stretch.place("basket").fault is None and sim_stretch.object_in_basket(name)


def test_driving_away_forgets_the_scene(sim_stretch) -> None:
    sim_stretch.reset(0, SEED)
    _, p = _first(sim_stretch)
    assert not sim_stretch.feasible([p])[0]
    sim_stretch.nav_to((0.0, 0.0, 0.0))  # where it stands: nothing moves, but the frame is re-read
    assert sim_stretch.feasible([p]) == (True, "")


def test_the_guard_benchmark_runs_and_prints_its_figures() -> None:
    """tools/perf/stretch_guard.py, one seed per condition (no figure is asserted)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(root / "tools" / "perf" / "stretch_guard.py"), "--n", "1"],
                          capture_output=True, text=True, timeout=600, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for figure in ("open     guard on", "crowded  guard off", "neighbour knocked", "guard check per candidate (guard on)"):
        assert figure in proc.stdout, proc.stdout[-2000:]
