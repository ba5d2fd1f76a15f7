"""The Driver protocols every robot backend implements, and the data crossing that seam.

Nodes never import a driver: they receive one through the compile-time context and use only
what is declared here, so the same tree runs on PyBullet, a simulated Stretch and a real Stretch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from bt_grasp.watchdog.telemetry import Telemetry


@dataclass
class Observation:
    """One RGB-D frame with its geometry. `annotations` is filled only by simulators.

    rgb: HxWx3 uint8; depth: HxW float32 metres (0 where unknown); K: 3x3 intrinsics;
    T_cam_base: 4x4 pose of the camera (OpenCV convention: x right, y down, z forward) in the
    robot base frame; clock: the driver's time in seconds when the frame was taken.
    annotations: simulator ground truth for the `sim` perception backend (the simulator's
    "annotator"): {"instance": HxW int32 body ids, "objects": {body_id: {name, colour, ...}}}.
    """

    rgb: np.ndarray
    depth: np.ndarray
    K: np.ndarray
    T_cam_base: np.ndarray
    clock: float = 0.0
    annotations: dict[str, Any] | None = None


@dataclass
class GraspPose:
    """A 6-DoF grasp in the base frame: the grasp point and the gripper orientation.

    position is the grasp point between the finger pads, where the driver puts its grasp frame
    (the simulated arm's TCP); the fingertips may reach beyond it along the approach (the arm's by
    15 mm, TCP_FROM_TIP_M; the Stretch's pads by ~2.5 cm), and a driver raises the position so the
    tips stay off the table. The shipped planner (perception/grasps.py) ends its finger model at
    the grasp point, and the driver's own check sees the rest.

    orientation is a quaternion (x, y, z, w) of the gripper frame whose z axis is the approach
    direction and x axis the closing direction; width is the planned opening in metres.
    """

    position: np.ndarray
    orientation: np.ndarray
    width: float
    score: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Execution:
    """What a primitive did: its telemetry, how long it took (sim or wall seconds), any fault.

    fault is None on a completed motion, else a short machine-readable reason such as
    "infeasible: ik", "collision: table at waypoint 2", "timeout", "halted" (see Driver and the
    constants below). info carries extras (pose used,
    object ids touched in simulation for ground truth, ...).
    """

    telemetry: Telemetry
    duration: float
    fault: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


# Execution.fault strings every driver shares. A fault is None on success, else one of these or a
# string starting with one of these prefixes followed by ": " and a human-readable detail.
HALTED = "halted"    # the tree preempted the motion (Motion.cancel's default)
TIMEOUT = "timeout"  # the motion was stopped at its deadline (`timeout` seconds)
INFEASIBLE = "infeasible"  # refused before moving: "infeasible: ik", "infeasible: unknown place 'x'", ...
COLLISION = "collision"    # stopped on contact: "collision: table at waypoint 2", ...
BLOCKED = "blocked"        # commanded but did not get there: "blocked: lift did not reach its goal"
DRY_RUN = "dry_run: no motion commanded"  # a driver opened with dry_run=True never moves


@runtime_checkable
class Driver(Protocol):
    """A manipulator with a parallel gripper and a camera.

    Frames and units: positions in metres and orientations as (x, y, z, w) quaternions, both in
    the robot base frame; times in seconds of the driver's clock (simulated or wall); `timeout`
    None means no deadline. A primitive never raises for a refused or failed motion: it returns
    an Execution whose `fault` says why ("infeasible: ...", "collision: ...", "blocked: ...",
    "timeout", "halted"). It raises only on a driver bug or lost connection (RuntimeError; the
    `driver_exception` fault kind simulates it).
    """

    name: str  # recorded in the trace header ("pybullet_arm", "stretch", ...)

    def reset(self, episode: int = 0, seed: int = 0) -> Observation:
        """Start episode `episode`: a simulator rebuilds its scene from `seed` (simulators also
        accept `target=` to place that object in view), a robot just re-reads its state. Returns
        the first frame."""
        ...

    def observe(self) -> Observation:
        """One RGB-D frame now, with the camera pose in the base frame (see Observation)."""
        ...

    def grasp(self, pose: GraspPose, width: float, force: float, timeout: float | None = None) -> Execution:
        """Open to `width` metres, approach `pose` (base frame), close with `force` newtons
        (a simulator's motor force; a Stretch maps it to a gripper effort), settle and micro-lift;
        telemetry covers every phase. Faults: "infeasible: <why>" (no IK, collision at the
        pre-grasp or descent, closing axis off), "collision: <what> at <where>", "timeout",
        "halted"."""
        ...

    def lift(self, dz: float, timeout: float | None = None) -> Execution:
        """Raise the gripper `dz` metres along base z. Faults: "infeasible: <why>",
        "blocked: lift did not reach its goal" (the Stretch; the simulated arm leaves a blocked
        lift to its telemetry and `info["blocked_at_m"]`), "timeout", "halted"."""
        ...

    def place(self, target: str, timeout: float | None = None) -> Execution:
        """Carry what is held over the receptacle named `target` and open the gripper. Faults:
        "infeasible: unknown place ..." (a name the robot does not know), "infeasible: <why>",
        "collision: ...", "timeout", "halted"."""
        ...

    def open_gripper(self, timeout: float | None = None) -> Execution:
        """Open the gripper fully where it is. Faults: "timeout", "halted"."""
        ...

    def push(self, start: np.ndarray, end: np.ndarray, height: float,
             timeout: float | None = None) -> Execution:
        """Push along the straight line `start` -> `end` (xy, metres, base frame) with the closed
        fingertips `height` metres above the surface. Faults: "infeasible: <why>",
        "collision: <what> at the push start" (or "<n> cm above the push start": the way down is
        checked too), "timeout", "halted"."""
        ...

    def feasible(self, waypoints: list[np.ndarray]) -> tuple[bool, str]:
        """Could the gripper reach these poses (each xyz, or xyz + quaternion xyzw, base frame)
        without moving? (True, "") or (False, reason), e.g. "collision: table at waypoint 1",
        "infeasible: waypoint 0 is not a finite position"."""
        ...

    def stop(self) -> None:
        """Stop every motion now and hold the robot where it is (safe to call at any time)."""
        ...

    def close(self) -> None:
        """Release the robot, camera and simulator; the driver is not used afterwards."""
        ...


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


FaultKind = str
"""One of FAULT_KINDS; simulators implement them all, real drivers only `driver_exception` etc."""

FAULT_KINDS: tuple[str, ...] = (
    "remove_target_on_close",  # the object under the gripper vanishes while the fingers close
    "grasp_offset",            # the grasp pose is shifted by params["offset_m"] (default 0.05)
    "friction",                # object lateral friction set to params["value"]
    "mass",                    # object mass set to params["value"] (kg)
    "block_fingers",           # the fingers jam part-way (params["at_norm"]) and do not grip
    "block_lift",              # the arm cannot rise: the lift stops after params["after_m"]
    "driver_exception",        # the primitive raises RuntimeError (a driver bug / comms loss)
    "never_finish",            # the motion never completes: runs until its timeout
    "nan_telemetry",           # telemetry values become NaN from params["from_frac"] of the stream
    "latency",                 # telemetry delayed by params["seconds"]
)


@dataclass
class Fault:
    """A fault a simulated driver injects into its next primitive calls (tests, data recording)."""

    kind: FaultKind
    params: dict[str, Any] = field(default_factory=dict)
    primitive: str | None = None  # apply only to this primitive ("grasp", "lift", ...); None = any
    once: bool = True  # consumed by the first primitive it applies to


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
