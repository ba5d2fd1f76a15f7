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
    """A 6-DoF grasp in the base frame: fingertip centre position and gripper orientation.

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
    "infeasible: ik", "collision", "timeout", "driver_error: ...". info carries extras (pose used,
    object ids touched in simulation for ground truth, ...).
    """

    telemetry: Telemetry
    duration: float
    fault: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Driver(Protocol):
    """A manipulator with a parallel gripper and a camera."""

    name: str

    def reset(self, episode: int = 0, seed: int = 0) -> Observation: ...

    def observe(self) -> Observation: ...

    def grasp(self, pose: GraspPose, width: float, force: float, timeout: float | None = None) -> Execution:
        """Approach, close, settle and micro-lift; telemetry covers every phase."""
        ...

    def lift(self, dz: float, timeout: float | None = None) -> Execution: ...

    def place(self, target: str, timeout: float | None = None) -> Execution: ...

    def open_gripper(self, timeout: float | None = None) -> Execution: ...

    def push(self, start: np.ndarray, end: np.ndarray, height: float,
             timeout: float | None = None) -> Execution: ...

    def feasible(self, waypoints: list[np.ndarray]) -> tuple[bool, str]: ...

    # Optional: `grasp_feasible(pose, width) -> (ok, reason)` (GraspChecker), the checks grasp()
    # itself makes before moving; the grasp leaf prefers it to feasible() among candidates.

    def stop(self) -> None: ...

    def close(self) -> None: ...


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

    def nav_to(self, place: Any, timeout: float | None = None) -> Execution: ...

    def gaze_at(self, point: np.ndarray, timeout: float | None = None) -> Execution: ...


@runtime_checkable
class GraspChecker(Protocol):
    """A driver that can say, without moving, whether grasp() would refuse this pose: the leaf
    then skips a candidate the robot would reject, instead of spending an attempt on it."""

    def grasp_feasible(self, pose: GraspPose, width: float) -> tuple[bool, str]: ...


@runtime_checkable
class Head(Protocol):
    """A robot whose camera turns independently of its base (a pan/tilt head)."""

    def look(self, pan: float, tilt: float | None = None, timeout: float | None = None) -> Execution:
        """Turn the head to `pan` (and `tilt`, if given) radians; fault "timeout" if it did not
        get there in time. Observations taken afterwards see from the new direction."""
        ...


@runtime_checkable
class Located(Protocol):
    """A robot whose map says which receptacle it stands at (what nav_to last reached)."""

    def located_at(self) -> str | None: ...


@runtime_checkable
class ReceptacleAnnotator(Protocol):
    """Simulator-only: receptacle name -> instance id in `Observation.annotations["instance"]`.

    Like the annotations themselves, only the `sim` perception backend may use it."""

    def receptacle_bodies(self) -> dict[str, int]: ...


@runtime_checkable
class UserChannel(Protocol):
    """A robot that comes with the person it serves (in simulation, a simulated user): the object
    `ask` and `listen` talk to (see bt_grasp.mobile.user)."""

    user: Any


@runtime_checkable
class Articulated(Protocol):
    """A robot that can open and close articulated furniture (drawers, doors)."""

    def open(self, handle: Any, timeout: float | None = None) -> Execution: ...

    def close_articulated(self, handle: Any, timeout: float | None = None) -> Execution: ...


@runtime_checkable
class GroundTruth(Protocol):
    """Simulator-only: the world's true state, for labelling data and scoring benchmarks.

    Never used by nodes or perception (that would be an oracle); only by `watchdog record`,
    benchmark metrics and tests.
    """

    def held_object(self) -> str | None: ...

    def object_names(self) -> dict[int, str]: ...

    def object_in_basket(self, name: str) -> bool: ...


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
    def inject(self, fault: Fault) -> None: ...

    def clear_faults(self) -> None: ...
