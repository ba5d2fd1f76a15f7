"""Low-level control of the arm and gripper, and the steps primitives are made of.

A primitive's body is a generator: every physics step (`_tick`: telemetry when due, deadline and
stop()) is followed by one `yield`, so motions.py can pause it between any two steps and group
the steps into control periods. Helpers here (`_wait`, `_move_line`, `_stall_forever`) are such
generators; bodies chain them with `yield from`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from typing import Any, NamedTuple

import numpy as np
import pybullet as pb

from bt_grasp.drivers.base import Execution, Fault
from bt_grasp.drivers.pybullet_arm import scene
from bt_grasp.drivers.pybullet_arm.contact import CONTACT
from bt_grasp.drivers.pybullet_arm.gripper import FINGER_TRAVEL_M, STROKE_M
from bt_grasp.drivers.pybullet_arm.ik import HOME_Q
from bt_grasp.drivers.pybullet_arm.launches import CHECK_EVERY
from bt_grasp.drivers.pybullet_arm.params import (
    ARM_FORCES,
    NEVER_FINISH_CAP_S,
    REST_EVERY,
    UNWIND_RPS,
)
from bt_grasp.drivers.pybullet_arm.recorder import Recorder, with_latency, with_nan
from bt_grasp.drivers.pybullet_arm.speed import OPTIONS
from bt_grasp.watchdog.telemetry import Phase, Telemetry


def clamp(x: float, lo: float, hi: float) -> float:
    """float(np.clip(x, lo, hi)) for one float, signed zeros and NaN alike, without numpy's
    per-call overhead (this runs several times per physics step)."""
    return min(max(x, lo), hi)


def slerp(q0: np.ndarray, q1: np.ndarray, t: float) -> np.ndarray:
    """The unit quaternion a fraction t of the shorter way from q0 to q1 (x, y, z, w)."""
    q0 = np.asarray(q0, float) / np.linalg.norm(q0)
    q1 = np.asarray(q1, float) / np.linalg.norm(q1)
    dot = float(np.dot(q0, q1))
    if dot < 0.0:
        q1, dot = -q1, -dot
    if dot > 0.9995:  # nearly equal: a normalised straight blend
        q = q0 + t * (q1 - q0)
        return q / np.linalg.norm(q)
    theta = math.acos(dot)
    return (math.sin((1 - t) * theta) * q0 + math.sin(t * theta) * q1) / math.sin(theta)


class _Abort(Exception):
    """Internal: ends a running primitive with a fault string (timeout, stopped)."""

    def __init__(self, fault: str) -> None:
        super().__init__(fault)
        self.fault = fault


Steps = Generator[None, None, None]  # a primitive body: yields once after every physics step


class Planned(NamedTuple):
    """A primitive that passed its checks: its first telemetry phase, its body (given the faults
    taken for this call) and the info dict the body fills in."""

    phase: Phase
    body: Callable[[list[Fault]], Steps]
    info: dict[str, Any]


class ArmReadout(NamedTuple):
    """The arm at one physics step, for reading a run step by step (tools/perf/launch_trace.py)."""

    clock: float        # the driver's clock (s)
    step: int           # physics steps since the world was reset
    primitive: str      # the primitive running ("" before the first)
    phase: str          # its motion phase (approach, close, settle, ...)
    gap_m: float        # the finger gap now
    reference_m: float  # the gap the finger servos chase (moved at the finger speed; control.py)
    effort: float       # mean finger force / the gripper's max force
    tcp_z: float        # the tool point's height (m)


def steps_for_turn(dq: np.ndarray, steps_per_way: int, max_turn: float) -> int:
    """Physics steps for one IK step of a line: the tcp speed's (steps_per_way), more where a joint
    would turn faster than max_turn per step (CONTACT.joint_speed_rps), and a turn of more than
    half a turn (a joint going the far way round its limit) at UNWIND_RPS (params.py)."""
    turn = float(np.max(np.abs(dq)))
    n = max(steps_per_way, math.ceil(turn / max_turn))
    if turn > math.pi:
        n = max(n, math.ceil(turn / (UNWIND_RPS * scene.TIMESTEP)))
    return n


class ControlMixin:
    """Joint and finger commands, state read-back, and the step loops primitives are made of."""

    # Provided by the host class PyBulletArm (driver.py) and its other mixins.
    gap_cmd: float  # finger gap commanded and its rate-limited reference (metres; WorldMixin)
    gap_ref: float
    grip_force: float
    places_started: int
    _fingers_frozen: bool
    _gap_floor: float
    q_cmd: Any
    _sleep_resting: Any
    _steps: Any
    arm_j: Any
    client: Any
    clock: Any
    finger_j: Any
    ik: Any
    max_force: Any
    robot: Any
    tcp_link: Any
    telemetry_period: Any
    wrist: Any
    bodies: Any
    launch_watch: Any
    _in_grip: Any
    _primitive: str = ""
    _phase: Phase = Phase.APPROACH  # until a primitive sets its own
    _step_observers: tuple[Callable[[Any], None], ...] = ()

    def _reset_commands(self) -> None:
        """A new world's per-episode command state, whatever the engine: the arm held at HOME_Q,
        the fingers commanded open at a fifth of the force, the step count and place's drop-spot
        counter (BASKET_DROP_SPOTS) at zero."""
        self.q_cmd = HOME_Q.copy()
        self.gap_cmd = self.gap_ref = STROKE_M
        self._fingers_frozen = False
        self._gap_floor = 0.0
        self.places_started = 0
        self.grip_force = 0.2 * self.max_force
        self._hold_arm(self.q_cmd)
        self._command_fingers(STROKE_M, self.grip_force)
        self._steps = 0

    def _hold_arm(self, q: np.ndarray) -> None:
        pb.setJointMotorControlArray(self.robot, self.arm_j, pb.POSITION_CONTROL, targetPositions=list(q),
                                     forces=list(ARM_FORCES), positionGains=[0.3] * 6,
                                     physicsClientId=self.client)

    def _command_fingers(self, gap: float, force: float) -> None:
        """Set the finger goal; _tick moves the position reference toward it at the finger speed.

        A moving reference instead of pybullet's maxVelocity: with maxVelocity the motor never
        reaches its force limit against an object (measured ~47 N of 80 N), with the reference it
        saturates at `force` when blocked and relaxes to ~0 at the closed stop when empty.
        """
        self.gap_cmd = float(np.clip(gap, 0.0, STROKE_M))
        self.grip_force = float(force)
        self._apply_fingers()

    def _apply_fingers(self) -> None:
        q = clamp(self.gap_ref / 2, 0.0, FINGER_TRAVEL_M)
        targets = [q] * len(self.finger_j)
        lead = CONTACT.finger_lead_m
        if lead < math.inf:  # contact.py: a closing finger's target at most `lead` past where it is
            now = pb.getJointStates(self.robot, self.finger_j, physicsClientId=self.client)
            targets = [max(q, min(s[0] - lead, FINGER_TRAVEL_M)) for s in now]
        for j, target in zip(self.finger_j, targets, strict=True):
            pb.setJointMotorControl2(self.robot, j, pb.POSITION_CONTROL, targetPosition=target,
                                     force=self.grip_force, positionGain=0.2, physicsClientId=self.client)

    def _advance_fingers(self) -> None:
        if self._fingers_frozen:
            return
        step = 2 * CONTACT.finger_speed_mps * scene.TIMESTEP
        d = self.gap_cmd - self.gap_ref
        self.gap_ref = max(self.gap_ref + clamp(d, -step, step), min(self._gap_floor, self.gap_ref))
        self._apply_fingers()

    def _finger_state(self) -> tuple[float, float]:
        """(gap in metres, mean |motor force| / max force)."""
        st = pb.getJointStates(self.robot, self.finger_j, physicsClientId=self.client)
        gap = sum(s[0] for s in st)
        effort = sum(abs(s[3]) for s in st) / len(st) / self.max_force  # the mean, as np.mean sums it
        return float(gap), effort

    def tcp_pose(self) -> tuple[np.ndarray, np.ndarray]:
        st = pb.getLinkState(self.robot, self.tcp_link, computeForwardKinematics=True,
                             physicsClientId=self.client)
        return np.array(st[4]), np.array(st[5])

    def _q(self) -> np.ndarray:
        return np.array([s[0] for s in pb.getJointStates(self.robot, self.arm_j, physicsClientId=self.client)])

    # ------------------------------------------------------------------ primitive runtime
    def readout(self) -> ArmReadout:
        """Where the arm and gripper are now, and what they are doing."""
        gap, effort = self._finger_state()
        return ArmReadout(self.clock, self._steps, self._primitive, self._phase.name.lower(), gap, self.gap_ref,
                          effort, float(self.tcp_pose()[0][2]))

    def observe_steps(self, observer: Callable[[Any], None]) -> Callable[[], None]:
        """Call observer(world) after every physics step from now on, before the step's launch
        check and telemetry (world: the engine's handle, what launch_watch.velocity reads). Returns
        the call that removes it. For reading a run; an observer reads the physics, never sets it."""
        self._step_observers = (*self._step_observers, observer)

        def remove() -> None:
            self._step_observers = tuple(o for o in self._step_observers if o is not observer)

        return remove

    def _begin(self, timeout: float | None, phase: Phase) -> None:
        self._t0 = self.clock
        self._deadline = None if timeout is None else self.clock + float(timeout)
        self._rec = Recorder(self.clock, self.telemetry_period, STROKE_M)
        self._phase = phase
        self._stop = False
        self._fingers_frozen = False
        self._gap_floor = 0.0  # block_fingers: the finger reference cannot close past this gap

    def _tick(self) -> None:
        """One physics step: record telemetry when due, enforce timeout and stop()."""
        self._advance_fingers()
        pb.stepSimulation(physicsClientId=self.client)
        self.clock += scene.TIMESTEP
        self._steps += 1
        if OPTIONS.sleep_resting and self._steps % REST_EVERY == 0:
            self._sleep_resting()
        self._after_step(self.client)

    def _after_step(self, world: Any) -> None:
        """What every physics step ends with, whatever the engine: the launch check every
        CHECK_EVERY steps (`world`: what LaunchWatch.check reads velocities from), telemetry when
        due, then stop() and the timeout. Observers (observe_steps) see the step first."""
        for observe in self._step_observers:
            observe(world)
        if self._steps % CHECK_EVERY == 0:
            self.launch_watch.check(world, self.bodies, self._in_grip(), self.clock,
                                    self._phase.name.lower(), self._primitive)
        if self._rec.due(self.clock):
            gap, effort = self._finger_state()
            z = float(self.tcp_pose()[0][2])
            self._rec.add(self.clock, gap, self.gap_cmd / STROKE_M, effort, z, self._phase,
                          load=self.wrist.read())
        if self._stop:
            raise _Abort("stopped")
        if self._deadline is not None and self.clock >= self._deadline - 1e-9:
            raise _Abort("timeout")

    def _finger_speed(self) -> float:
        """Mean |finger joint speed| (m/s)."""
        return float(np.mean([abs(s[1]) for s in pb.getJointStates(self.robot, self.finger_j,
                                                                    physicsClientId=self.client)]))

    def _wait(self, seconds: float, before_step: Callable[[int], None] | None = None) -> Steps:
        """Hold still for `seconds`; before_step(i), if given, runs before step i (e.g. a ramp)."""
        for i in range(max(1, round(seconds / scene.TIMESTEP))):
            if before_step is not None:
                before_step(i)
            self._tick()
            yield

    def _stall_forever(self) -> Steps:
        """never_finish: hold everything where it is until the timeout (or the cap) ends it."""
        q = self._q()
        self._hold_arm(q)
        self.gap_ref = self._finger_state()[0]
        self._fingers_frozen = True
        self._apply_fingers()
        if self._deadline is None:
            self._deadline = self._t0 + NEVER_FINISH_CAP_S
        while True:
            self._tick()
            yield

    def _solve(self, pos: np.ndarray, orn: np.ndarray, seed_q: np.ndarray | None = None,
               iters: int = 20) -> tuple[np.ndarray, float, float]:
        return self.ik.solve(np.asarray(pos, float), np.asarray(orn, float), seed_q=seed_q, iters=iters)

    def _move_line(self, pos: np.ndarray, orn: np.ndarray, speed: float, phase: Phase,
                   stop_after_m: float | None = None, turn: bool = False,
                   until: Callable[[], bool] | None = None) -> Steps:
        """Straight line of the tcp to (pos, orn); joint targets interpolated between 1 cm IK points.

        The orientation is `orn` from the first IK point on, unless `turn`: then it turns from the
        current one to `orn` evenly along the line (contact.py, turn_in_transit).
        stop_after_m (block_lift): the arm stops progressing after that distance but the command
        runs its nominal time, as when a lift is blocked.
        until (a guarded move): checked after every step; once true the arm stops where it is.
        """
        self._phase = phase
        start, orn0 = self.tcp_pose()
        dist = float(np.linalg.norm(pos - start))
        n_way = max(1, math.ceil(dist / 0.01))
        q_prev = self.q_cmd.copy()
        steps_per_way = max(1, round(dist / n_way / speed / scene.TIMESTEP))
        max_turn = CONTACT.joint_speed_rps * scene.TIMESTEP  # rad per step (inf: the tcp speed alone)
        travelled = 0.0
        frozen = False
        for k in range(1, n_way + 1):
            p = start + (pos - start) * k / n_way
            travelled = dist * k / n_way
            if stop_after_m is not None and travelled > stop_after_m:
                frozen = True
            if not frozen:
                q_next, _, _ = self._solve(p, slerp(orn0, orn, k / n_way) if turn else orn, seed_q=q_prev, iters=6)
            else:
                q_next = q_prev
            n_steps = steps_for_turn(q_next - q_prev, steps_per_way, max_turn)
            for s in range(1, n_steps + 1):
                self.q_cmd = q_prev + (q_next - q_prev) * s / n_steps
                self._hold_arm(self.q_cmd)
                self._tick()
                yield
                if until is not None and until():
                    self.q_cmd = self._q()
                    self._hold_arm(self.q_cmd)
                    return
            q_prev = q_next
        # converge at the end point
        for _ in range(120):
            if np.max(np.abs(self._q() - self.q_cmd)) < 2e-3:
                break
            self._tick()
            yield

    def _faulted(self, tel: Telemetry, faults: list[Fault]) -> Telemetry:
        """Telemetry as the injected telemetry faults (NaN, latency) make it look."""
        for f in faults:
            if f.kind == "nan_telemetry":
                tel = with_nan(tel, float(f.params.get("from_frac", 0.5)))
            elif f.kind == "latency":
                tel = with_latency(tel, float(f.params.get("seconds", 0.1)))
        return tel

    def _execution(self, fault: str | None, info: dict[str, Any], faults: list[Fault]) -> Execution:
        return Execution(telemetry=self._faulted(self._rec.telemetry(), faults),
                         duration=self.clock - self._t0, fault=fault, info=info)
