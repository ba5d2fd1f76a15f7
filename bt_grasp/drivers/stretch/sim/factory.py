"""Build the simulated Stretch a profile describes: the tabletop scene or the household one."""

from __future__ import annotations

from bt_grasp.drivers.stretch.sim.body import SimStretchRobot
from bt_grasp.drivers.stretch.sim.driver import SimHeadCamera, SimStretchDriver
from bt_grasp.drivers.stretch.sim.stretch_world import StretchWorld
from bt_grasp.profile import RobotProfile


def make_sim_stretch_driver(profile: RobotProfile, gui: bool = False, dry_run: bool = False,
                            seed: int = 0) -> SimStretchDriver:
    """A StretchDriver running the simulated Stretch of robots/stretch3.yaml (or any Stretch profile).

    driver_options.sim may set n_objects (default 3).
    """
    sim_opts = dict(profile.driver_options.get("sim") or {})
    if sim_opts.get("scene") == "household":
        # imported here: the household room (and its planner) costs start-up time on every other scene
        from bt_grasp.drivers.stretch.sim.household_driver import make_household_driver

        return make_household_driver(profile, gui=gui, dry_run=dry_run, seed=seed)
    world = StretchWorld(gui=gui, seed=seed, n_objects=int(sim_opts.get("n_objects", 3)))
    robot = SimStretchRobot(world=world)
    cam = profile.camera
    camera = SimHeadCamera(world, cam.width, cam.height, cam.fov_deg, cam.near, cam.far)
    return SimStretchDriver(profile, world, robot, camera, dry_run=dry_run)
