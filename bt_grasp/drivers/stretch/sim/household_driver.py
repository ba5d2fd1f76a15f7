"""The simulated Stretch driving through the household room: nav_to a receptacle, place on it,
open and close the cabinet drawer; everything else is the inherited StretchDriver.

What is simulated, and how (beyond what sim/household.py already says):
- Navigation: A* on the occupancy grid (bt_grasp/mobile/nav.py), executed through the inherited
  StretchDriver steps (turn, drive, turn per waypoint; one nav_to Motion for the whole path, polled
  one control period at a time like every primitive) on the kinematic base. On arrival the
  odometry is re-anchored at the standoff ("manipulation frame = base pose at arrival"), because
  the inherited grasp/place kinematics assume the target is expressed in the current base frame.
- The drawer is opened and closed by its joint motor, not pulled by the gripper (the Stretch
  has no drawer-pulling primitive in this driver); open/close check that the robot stands at the
  cabinet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.motion import MotionHalted
from bt_grasp.drivers.stretch.motions import Run, Steps
from bt_grasp.drivers.stretch.sim.body import SimStretchRobot
from bt_grasp.drivers.stretch.sim.driver import SimHeadCamera, SimStretchDriver
from bt_grasp.drivers.stretch.sim.household import HouseholdWorld
from bt_grasp.drivers.stretch.sim.room import DRAWER_TRAVEL_M, RECEPTACLES
from bt_grasp.mobile.nav import NavPlan, plan_to
from bt_grasp.profile import RobotProfile
from bt_grasp.watchdog.telemetry import Phase, Telemetry

DRAWER_TIME_S = 2.0  # open/close run the drawer joint this long, then check where it is


class HouseholdStretchDriver(SimStretchDriver):
    """The simulated Stretch in the household room: nav_to(receptacle name), place on a receptacle,
    open/close the drawer. Everything else is the inherited StretchDriver."""

    name = "stretch_sim_household"

    def __init__(self, profile: RobotProfile, world: HouseholdWorld, robot: SimStretchRobot,
                 camera: SimHeadCamera, dry_run: bool = False) -> None:
        super().__init__(profile, world, robot, camera, dry_run=dry_run)
        self.world: HouseholdWorld = world
        self.user: Any = None  # the simulated user `ask`/`listen` talk to (bt_grasp.mobile.user)
        # scenario harness hook: world -> user, called on every reset; default: a user who wants the task object
        self.user_factory: Callable[[HouseholdWorld], Any] | None = None
        self.last_plan: NavPlan | None = None
        self.nav_count = 0

    def reset(self, episode: int = 0, seed: int = 0, target: str | None = None):
        self.nav_count = 0
        obs = super().reset(episode, seed, target)
        if self.user_factory is not None:
            self.user = self.user_factory(self.world)
        else:
            from bt_grasp.mobile.user import SimulatedUser

            task = self.world.task or ""
            self.user = SimulatedUser(goal=f"Bring me the {task}", targets=frozenset({task}))
        return obs

    def receptacle_names(self) -> list[str]:
        return [r.name for r in RECEPTACLES]

    def receptacle_bodies(self) -> dict[str, int]:
        """Sim annotator: receptacle name -> PyBullet body id (instance id in the camera image)."""
        return dict(self.world.receptacle_bodies)

    def located_at(self) -> str | None:
        return self.world.at

    def nav_to(self, place: Any, timeout: float | None = None) -> Execution:
        """A receptacle name: plan (A* + standoff selection) and follow; else the inherited nav_to."""
        return self._blocking("nav_to", place=place, timeout=timeout)

    def _steps_nav_to(self, run: Run, place: Any, timeout: float | None = None) -> Steps[Any]:
        if not isinstance(place, str):
            return (yield from super()._steps_nav_to(run, place, timeout))
        w = self.world
        rec = w.receptacles.get(place)
        if rec is None:
            return Execution(Telemetry.empty(), 0.0, f"infeasible: unknown receptacle {place!r}")
        label = [r.name for r in RECEPTACLES].index(place) + 1
        wp = w.world_pose()
        plan = plan_to(w.grid, (float(wp[0]), float(wp[1])), place, rec.rect, label, rec.sides)
        self.last_plan = plan
        if plan is None:
            return Execution(Telemetry.empty(), 0.0, f"infeasible: no collision-free standoff for {place}")
        self.nav_count += 1
        run.info.update(receptacle=place, path_m=round(plan.length_m, 3),
                        waypoints=[[round(a, 3), round(b, 3)] for a, b in plan.waypoints],
                        standoff=[round(v, 3) for v in plan.goal])
        self._begin("nav_to", None)
        if self.dry_run:
            return (yield from self._dry_steps(run, Phase.HOLD))
        run.deadline = self._deadline(timeout)
        for k, (x, y) in enumerate(plan.waypoints[1:], start=1):
            ox, oy = w.to_odom(x, y)
            heading = plan.goal[2] - w.anchor[2] if k == len(plan.waypoints) - 1 else None
            yield from self._drive_to(run, ox, oy, heading)
        w.anchor_here()
        w.at = place
        self.robot.pull_status()
        return None

    def place(self, target: str, timeout: float | None = None) -> Execution:
        """A receptacle name: drop on its surface in front of the standoff (must be there)."""
        return self._blocking("place", target=target, timeout=timeout)

    def _steps_place(self, run: Run, target: str, timeout: float | None = None) -> Steps[Any]:
        if target in self.world.receptacles:
            if self.world.at != target:
                return Execution(Telemetry.empty(), 0.0, f"infeasible: not at {target} (at {self.world.at})")
            places = dict(self.opts.places or {})
            places[target] = [0.0, -0.66, self.world.receptacles[target].height + 0.01]
            self.opts.places = places
        return (yield from super()._steps_place(run, target, timeout))

    # Articulated
    def open(self, handle: Any, timeout: float | None = None) -> Execution:
        return self._blocking("open", handle=handle, timeout=timeout)

    def close_articulated(self, handle: Any, timeout: float | None = None) -> Execution:
        return self._blocking("close_articulated", handle=handle, timeout=timeout)

    def _steps_open(self, run: Run, handle: Any, timeout: float | None = None) -> Steps[Any]:
        return (yield from self._drawer(run, handle, DRAWER_TRAVEL_M))

    def _steps_close_articulated(self, run: Run, handle: Any, timeout: float | None = None) -> Steps[Any]:
        return (yield from self._drawer(run, handle, 0.0))

    def _drawer(self, run: Run, handle: Any, q: float) -> Steps[Any]:
        """Drive the drawer joint to q for DRAWER_TIME_S; a cancel holds it where it is."""
        if handle != "cabinet drawer":
            return Execution(Telemetry.empty(), 0.0, f"infeasible: unknown articulated handle {handle!r}")
        if self.world.at != "cabinet":
            return Execution(Telemetry.empty(), 0.0, "infeasible: not at the cabinet")
        self.world.set_drawer(q)
        try:
            yield from self._wait(run, Phase.HOLD, lambda: False, DRAWER_TIME_S)
        except MotionHalted:
            self.world.set_drawer(self.world.drawer_position())
            raise
        moved = abs(self.world.drawer_position() - q) < 0.02
        return Execution(Telemetry.from_samples(run.samples), self.clock.now() - run.t0,
                         None if moved else "blocked: drawer did not move",
                         {"drawer_m": round(self.world.drawer_position(), 3)})

    # GroundTruth extras
    def receptacle_of(self, name: str) -> str | None:
        return self.world.receptacle_of(name)


def make_household_driver(profile: RobotProfile, gui: bool = False, dry_run: bool = False,
                          seed: int = 0) -> HouseholdStretchDriver:
    """The simulated Stretch in the household room (driver_options.sim.scene: household)."""
    sim_opts = dict(profile.driver_options.get("sim") or {})
    world = HouseholdWorld(gui=gui, seed=seed, n_objects=int(sim_opts.get("n_objects", 4)))
    robot = SimStretchRobot(world=world)
    cam = profile.camera
    camera = SimHeadCamera(world, cam.width, cam.height, cam.fov_deg, cam.near, cam.far)
    return HouseholdStretchDriver(profile, world, robot, camera, dry_run=dry_run)
