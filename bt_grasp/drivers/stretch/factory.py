"""Choose the Stretch a profile asks for: the real robot through stretch_body, or the simulator.

Its own module so that the driver never imports the simulator (the simulator subclasses it).
"""

from __future__ import annotations

from bt_grasp.drivers.stretch.driver import StretchDriver
from bt_grasp.errors import UserError
from bt_grasp.profile import RobotProfile


def make_stretch_driver(profile: RobotProfile, dry_run: bool = False, gui: bool = False) -> StretchDriver:
    """The Stretch driver the profile selects: driver_options.backend 'sim' (default) or 'hardware'."""
    backend = profile.driver_options.get("backend", "sim")
    if backend == "hardware":
        return StretchDriver(profile, dry_run=dry_run)
    if backend == "sim":
        # imported here: a real robot's computer never loads the simulator
        from bt_grasp.drivers.stretch.sim.factory import make_sim_stretch_driver

        return make_sim_stretch_driver(profile, gui=gui, dry_run=dry_run)
    raise UserError(f"driver_options.backend must be 'sim' or 'hardware', not {backend!r}", file=profile.source)
