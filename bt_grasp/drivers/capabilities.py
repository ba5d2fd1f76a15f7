"""What a driver may do besides the Driver protocol: the optional capabilities.

Each is a runtime-checkable protocol; the code that uses one tests `isinstance(driver, X)` and
falls back when the driver lacks it, so a user's driver needs only the members its tree uses.
Each docstring says which code uses the capability.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from bt_grasp.drivers.base import HALTED, Execution, Fault, GraspPose
from bt_grasp.watchdog.telemetry import Telemetry


@runtime_checkable
class Motion(Protocol):
    """One running primitive (see bt_grasp.drivers.motion for the implementations)."""

    primitive: str

    def poll(self) -> Execution | None:
        """Advance at most one control period; None while running, the Execution once ended
        (every later poll returns the same Execution)."""
        ...

    def cancel(self, fault: str = HALTED) -> Execution:
        """Stop now and leave the robot safe (arm held where it is, gripper not left half-way
        through a command); the Execution so far, with `fault` ("halted" or "timeout").
        Cancelling an ended motion returns its Execution unchanged."""
        ...

    def telemetry(self) -> Telemetry:
        """The telemetry recorded so far (what a streaming Watchdog classifies while it runs)."""
        ...

    @property
    def elapsed(self) -> float:
        """Seconds the motion has run so far (simulated seconds in simulation, wall on hardware)."""
        ...


@runtime_checkable
class Streaming(Protocol):
    """A driver that runs primitives across ticks (bt_grasp.drivers.motion.start_motion uses it;
    a driver without it is called blockingly, one primitive per tick)."""

    control_period: float  # seconds one poll advances a simulated motion (the robot profile sets it)

    def start(self, primitive: str, /, **kwargs: Any) -> Motion:
        """Start `primitive` ("grasp", "lift", "place", "open_gripper", "push", and for mobile
        robots "nav_to", "gaze_at", "look", "open", "close_articulated") with the keyword
        arguments of the blocking method of that name; returns at once. A motion still running
        is cancelled ("halted") first. The Motion's Execution carries the same faults as the
        blocking method."""
        ...


@runtime_checkable
class TaskSource(Protocol):
    """Simulator-only: the object this episode's scene was built around, which becomes the goal
    when neither the command line nor the tree gives one."""

    def task(self) -> str | None:
        """The target object's name ("red mug"), or None when the scene has no task."""
        ...


@runtime_checkable
class Receptacles(Protocol):
    """A robot that knows where its receptacles are: calibrated fixtures it places into.

    The region is robot knowledge (like the camera extrinsics), not simulator ground truth, so a
    tree may test perceived points against it to confirm a delivery by observation.
    """

    def place_region(self, target: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(lower, upper) corners of the receptacle's box in the base frame (metres); None if
        the name is unknown."""
        ...


@runtime_checkable
class MobileBase(Protocol):
    """A robot that can move its base and point its camera."""

    def nav_to(self, place: Any, timeout: float | None = None) -> Execution:
        """Drive to `place`: (x, y[, theta]) in the odometry frame (metres, radians), or a
        receptacle name on a robot whose map has one. Faults: "infeasible: nav_to needs
        (x, y[, theta]), got ...", "infeasible: unknown receptacle ...", "infeasible: no
        collision-free standoff for ...", "timeout", "halted"."""
        ...

    def gaze_at(self, point: np.ndarray, timeout: float | None = None) -> Execution:
        """Turn the head (and, past its pan range, the base) so the camera centres `point`
        (xyz metres, base frame). Faults: "timeout", "halted"."""
        ...


@runtime_checkable
class GraspChecker(Protocol):
    """A driver that can say, without moving, whether grasp() would refuse this pose: the leaf
    then skips a candidate the robot would reject, instead of spending an attempt on it, and
    prefers this to Driver.feasible among candidates."""

    def grasp_feasible(self, pose: GraspPose, width: float) -> tuple[bool, str]:
        """The checks grasp(pose, width) makes before moving (IK, pre-grasp and descent clear of
        the table and other objects): (True, "") or (False, reason), e.g. "ik" (the arm: what
        grasp() reports as "infeasible: ik") or "collision: table at waypoint 1" (the Stretch)."""
        ...


@runtime_checkable
class Head(Protocol):
    """A robot whose camera turns independently of its base (a pan/tilt head)."""

    def look(self, pan: float, tilt: float | None = None, timeout: float | None = None) -> Execution:
        """Turn the head to `pan` (and `tilt`, if given) radians; fault "timeout" if it did not
        get there in time. Observations taken afterwards see from the new direction."""
        ...


@runtime_checkable
class AtReceptacle(Protocol):
    """A robot whose map says which receptacle it stands at (what nav_to last reached)."""

    def located_at(self) -> str | None:
        """The receptacle name the base stands at, or None (between receptacles, or no map)."""
        ...


@runtime_checkable
class ReceptacleAnnotator(Protocol):
    """Simulator-only: receptacle name -> instance id in `Observation.annotations["instance"]`.

    Like the annotations themselves, only the `sim` perception backend may use it."""

    def receptacle_bodies(self) -> dict[str, int]:
        """Receptacle name -> its instance id in the frame's instance image."""
        ...


@runtime_checkable
class UserChannel(Protocol):
    """A robot that comes with the person it serves (in simulation, a simulated user): the object
    `ask` and `listen` talk to (see bt_grasp.mobile.user)."""

    user: Any


@runtime_checkable
class ReportsTcp(Protocol):
    """Reports the gripper's pose: the Foxglove and ROS 2 bag recorders draw it (bt_grasp.observe)."""

    def tcp_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(position xyz in metres, quaternion xyzw), base frame."""
        ...


@runtime_checkable
class MeshTextures(Protocol):
    """Says whether objects are drawn with their meshes' textures; False (each object in its own
    colour) makes world.perceiver_options drop texture words from the vocabulary. Absent: True."""

    draws_mesh_textures: bool


@runtime_checkable
class ThreadBound(Protocol):
    """`thread_bound` True: the driver's resources belong to the thread that made it (an EGL
    context), so call_limit.limiter_for calls it inline, with no wall-clock limit. Absent: False."""

    thread_bound: bool


@runtime_checkable
class RealTime(Protocol):
    """`realtime` True: motions take wall time (a real robot), so episode.episode_clock runs the
    episode on a wall clock (the driver's `clock`, a TimeSource, when it has one). Absent: False."""

    realtime: bool


@runtime_checkable
class TimeSource(Protocol):
    """A driver's `clock` (episode.episode_clock reads a real-time driver's time from it)."""

    def now(self) -> float: ...

    def sleep(self, dt: float) -> None: ...


@runtime_checkable
class Articulated(Protocol):
    """A robot that can open and close articulated furniture (drawers, doors)."""

    def open(self, handle: Any, timeout: float | None = None) -> Execution:
        """Open the furniture `handle` names. Faults: "infeasible: unknown articulated handle
        ...", "infeasible: not at the cabinet", "blocked: drawer did not move", "timeout",
        "halted"."""
        ...

    def close_articulated(self, handle: Any, timeout: float | None = None) -> Execution:
        """Close it again; the same faults as open()."""
        ...


@runtime_checkable
class GroundTruth(Protocol):
    """Simulator-only: the world's true state, for labelling data and scoring benchmarks.

    Never used by nodes or perception (that would be an oracle); only by `watchdog record`,
    benchmark metrics and tests.
    """

    def held_object(self) -> str | None:
        """The name of the object between the fingers, or None."""
        ...

    def object_names(self) -> dict[int, str]:
        """Simulator body id -> object name, for every object in the scene."""
        ...

    def object_in_basket(self, name: str) -> bool:
        """Does object `name` rest inside the placing receptacle?"""
        ...


@runtime_checkable
class SimLabelling(Protocol):
    """Simulator-only physics facts `watchdog record` labels attempts with (hardware has none).

    One surface per engine, so the labelling rules (watchdog/ground_truth.py) are written once.
    Bodies are the ids of `object_names()`; fingers are in a fixed order.
    """

    def finger_touches(self) -> list[set[int]]:
        """For each finger, the bodies it touches now."""
        ...

    def finger_gap_m(self) -> float:
        """The true gap between the fingers (m)."""
        ...

    def finger_normal_n(self, body: int) -> list[float]:
        """For each finger, the normal force (N) between its pad and `body`."""
        ...

    def body_mass_friction(self, body: int) -> tuple[float, float]:
        """(mass in kg, friction coefficient between the finger pads and `body`)."""
        ...

    def set_body_mass(self, body: int, kg: float) -> None:
        """Make `body` this heavy (a recorded scenario's load)."""
        ...

    def step_holding(self, seconds: float) -> None:
        """Step the physics with the arm and fingers holding their commands, without telemetry."""
        ...


@runtime_checkable
class FaultInjectable(Protocol):
    """A (simulated) driver that can be told to fail its next primitives (tests, data recording)."""

    def inject(self, fault: Fault) -> None:
        """Stage `fault` (kind one of FAULT_KINDS) for the next primitive it applies to; a kind
        this driver cannot stage raises an error (bt_grasp.errors.UserError on the Stretch)."""
        ...

    def clear_faults(self) -> None:
        """Drop every staged fault."""
        ...
