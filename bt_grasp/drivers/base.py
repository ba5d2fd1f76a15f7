"""The Driver protocol every robot backend implements, and the data crossing that seam.

Nodes never import a driver: they receive one through the compile-time context and use only
what is declared here and in drivers/capabilities.py (what a driver may also do), so the same
tree runs on PyBullet, a simulated Stretch and a real Stretch.
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
