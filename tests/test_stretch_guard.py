"""The Stretch's collision guard: waypoints and the paths between them are refused when the gripper
or arm would pass through perceived points, the robot's own mast or base, or below the table top;
the object being grasped never blocks its own grasp. No simulator: synthetic depth images."""

from __future__ import annotations

import numpy as np
import pytest

from bt_grasp.drivers.base import GraspPose, Observation
from bt_grasp.drivers.stretch.driver import StretchDriver, StretchKinematics
from bt_grasp.drivers.stretch.guard import GuardOptions, StretchGuard
from bt_grasp.errors import UserError
from bt_grasp.profile import load_profile

TABLE = 0.55
K0 = StretchKinematics()
ORIGIN = (K0.grasp_x0, K0.grasp_y0, K0.grasp_z0)
DOWN = np.array([[1.0, 0, 0], [0, -1.0, 0], [0, 0, -1.0]])  # camera z along base -z, x along base x


def _top_down_view(boxes: list[tuple[np.ndarray, np.ndarray]], centre=(0.0, -0.7), height=1.4,
                   size=160) -> Observation:
    """Depth image of a camera `height` m above the floor looking straight down at a table
    (top at TABLE) with box-shaped objects on it (only their tops are seen, as from above)."""
    K = np.array([[size, 0, size / 2], [0, size, size / 2], [0, 0, 1.0]])
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = DOWN, [centre[0], centre[1], height]
    v, u = np.mgrid[0:size, 0:size].astype(float)
    ray = np.stack([(u - size / 2) / size, (v - size / 2) / size, np.ones_like(u)], axis=-1) @ DOWN.T
    depth = np.full(u.shape, height - TABLE)
    for lo, hi in sorted(boxes, key=lambda b: b[1][2]):  # taller boxes hide lower ones
        d = height - hi[2]
        xy = np.array(centre) + ray[..., :2] * d
        inside = np.all((xy >= lo[:2]) & (xy <= hi[:2]), axis=-1)
        depth[inside] = d
    return Observation(rgb=np.zeros((size, size, 3), np.uint8), depth=depth.astype(np.float32), K=K, T_cam_base=T)


def _block(centre_xy, half=0.03, height=0.10) -> tuple[np.ndarray, np.ndarray]:
    c = np.array([centre_xy[0], centre_xy[1], TABLE])
    return c - [half, half, 0.0], c + [half, half, height]


def _guard(boxes) -> StretchGuard:
    g = StretchGuard(ORIGIN, TABLE)
    g.set_scene(_top_down_view(boxes), g_now=None)
    return g


def test_the_table_top_is_support_not_an_obstacle() -> None:
    g = _guard([])
    assert len(g.scene.points) == 0
    assert g.check([np.array([0.0, -0.7, TABLE + 0.03])]) == (True, "")


def test_a_waypoint_through_a_box_of_perceived_points_is_refused() -> None:
    g = _guard([_block((0.0, -0.7))])
    ok, why = g.check([np.array([0.0, -0.7, TABLE + 0.05])])
    assert not ok
    assert why.startswith("infeasible: collision: ") and why.endswith("at waypoint 0"), why
    assert "perceived points" in why


def test_the_same_waypoint_is_accepted_with_the_points_moved_away() -> None:
    g = _guard([_block((0.25, -0.7))])
    assert len(g.scene.points) > 20  # the block is seen, just elsewhere
    assert g.check([np.array([0.0, -0.7, TABLE + 0.05])]) == (True, "")


def test_a_path_sweeping_through_points_is_refused_between_waypoints() -> None:
    g = _guard([_block((0.0, -0.7), height=0.15)])
    a, b = np.array([-0.2, -0.7, TABLE + 0.06]), np.array([0.2, -0.7, TABLE + 0.06])
    assert g.check([a])[0] and g.check([b])[0]
    ok, why = g.check([a, b])
    assert not ok and "between waypoints 0 and 1" in why, why


def test_the_target_does_not_block_its_own_grasp_but_a_neighbour_does() -> None:
    target = np.array([0.0, -0.75, TABLE + 0.05])
    alone = _guard([_block(target[:2])])
    assert alone.check([target], targets=[target]) == (True, "")
    # a tall neighbour 9 cm nearer the robot sits under the sloping fingers
    crowded = _guard([_block(target[:2]), _block((0.0, -0.66), half=0.02, height=0.12)])
    ok, why = crowded.check([target], targets=[target])
    assert not ok and "fingers" in why, why


def test_the_robots_own_links_and_what_it_holds_are_not_obstacles() -> None:
    g_now = np.array([0.0, -0.7, TABLE + 0.10])
    held = (g_now - [0.03, 0.03, 0.08], g_now + [0.03, 0.03, -0.04])  # object hanging in the fingers
    g = StretchGuard(ORIGIN, TABLE)
    assert g.set_scene(_top_down_view([held]), g_now=g_now) == 0
    assert StretchGuard(ORIGIN, TABLE).set_scene(_top_down_view([held]), g_now=None) > 0


def test_what_stands_above_the_robots_base_is_the_robot() -> None:
    mast = (np.array([-0.089, 0.113, TABLE]), np.array([-0.045, 0.157, 1.0]))
    view = _top_down_view([mast], centre=(0.0, 0.0))
    ready = np.array([-0.021, -0.35, 0.876])
    assert StretchGuard(ORIGIN, TABLE).set_scene(view, g_now=ready) == 0
    assert StretchGuard(ORIGIN, TABLE).set_scene(view, g_now=None) > 0


def test_a_gripper_path_through_the_mast_is_refused() -> None:
    g = StretchGuard(ORIGIN, TABLE)
    out, behind = np.array([0.0, -0.40, 0.9]), np.array([0.0, 0.35, 0.9])  # mast at y 0.113..0.157
    assert g.check([out])[0] and g.check([behind])[0]
    ok, why = g.check([out, behind])
    assert not ok and "robot's mast" in why and "between waypoints 0 and 1" in why, why


def test_the_wrist_cannot_be_lowered_into_the_base() -> None:
    g = StretchGuard(ORIGIN, table_height=None)  # no table: a floor-level reach
    ok, why = g.check([np.array([-0.021, -0.35, 0.10])])
    assert not ok and "robot's base at waypoint 0" in why, why
    assert g.check([np.array([-0.021, -0.35, 0.40])]) == (True, "")


def test_fingertips_below_the_table_top_are_refused() -> None:
    g = StretchGuard(ORIGIN, TABLE)
    ok, why = g.check([np.array([0.0, -0.7, TABLE])])
    assert not ok and why == "infeasible: collision: fingertips below the table top at waypoint 0"


def test_the_guard_never_traps_the_robot_where_it_stands() -> None:
    """From a start the model calls a collision (wrist in the base), moving up is allowed and
    moving further down is not."""
    g = StretchGuard(ORIGIN, table_height=None)
    low = np.array([-0.021, -0.35, 0.10])
    assert g.check([low + [0, 0, 0.3]], start=low) == (True, "")
    ok, why = g.check([low - [0, 0, 0.05]], start=low)
    assert not ok and "robot's base at waypoint 0" in why, why


def test_a_disabled_guard_and_unknown_options() -> None:
    g = StretchGuard(ORIGIN, TABLE, GuardOptions(enabled=False))
    assert g.check([np.array([0.0, 0.13, 0.9])]) == (True, "")
    with pytest.raises(UserError, match="unknown driver_options.guard keys: radius"):
        GuardOptions.from_dict({"radius": 1.0})


# -- through the driver (no robot connected: feasible() moves nothing and needs none) ----------

@pytest.fixture()
def profile():
    return load_profile("robots/stretch3.yaml")


def test_feasible_refuses_a_retraction_into_the_mast_that_the_joint_ranges_allow(profile) -> None:
    """A profile whose arm range lets the gripper retract behind the mast (a wrong calibration):
    the joint-range check passes, the body model does not."""
    profile.driver_options = {**profile.driver_options,
                              "kinematics": {"arm_range": [-0.75, 0.52]}, "max_base_travel_m": 0.6}
    drv = StretchDriver(profile)
    out, behind = np.array([0.0, -0.45, 0.9]), np.array([0.0, 0.32, 0.9])
    assert drv.feasible([out]) == (True, "") and drv.feasible([behind]) == (True, "")
    ok, why = drv.feasible([out, behind])
    assert not ok and why.startswith("infeasible: collision: ") and "mast" in why, why


def test_feasible_and_grasp_feasible_use_the_last_scene(profile) -> None:
    drv = StretchDriver(profile)
    target = np.array([0.0, -0.75, TABLE + 0.05])
    drv._guard().set_scene(_top_down_view([_block(target[:2]), _block((0.0, -0.66), 0.02, 0.12)]), None)
    pose = GraspPose(position=target, orientation=np.array([0.0, 0.0, 0.0, 1.0]), width=0.05)
    ok, why = drv.grasp_feasible(pose, 0.05)
    assert not ok and why.startswith("infeasible: collision: fingers"), why
    drv._guard().set_scene(_top_down_view([_block(target[:2])]), None)
    assert drv.grasp_feasible(pose, 0.05) == (True, "")
    ok, why = drv.feasible([target])  # a bare point aims at nothing: the block is in the way
    assert not ok and "perceived points" in why


def test_a_misspelt_guard_option_is_the_profiles_error(profile) -> None:
    profile.driver_options = {**profile.driver_options, "guard": {"min_pts": 2}}
    with pytest.raises(UserError, match="min_pts") as info:
        StretchDriver(profile)
    assert "stretch3.yaml" in str(info.value)


def test_guard_options_come_from_the_profile(profile) -> None:
    profile.driver_options = {**profile.driver_options, "guard": {"enabled": False}}
    drv = StretchDriver(profile)
    drv._guard().set_scene(_top_down_view([_block((0.0, -0.75))]), None)
    assert drv.feasible([np.array([0.0, -0.75, TABLE + 0.05])]) == (True, "")
