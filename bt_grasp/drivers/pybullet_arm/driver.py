"""PyBulletArm: a UR5e with an 85 mm parallel gripper over a cluttered table, headless by default.

Implements the Driver, GroundTruth and FaultInjectable protocols of bt_grasp.drivers.base.
Motions are Cartesian straight lines sampled every centimetre, solved by iterated IK on a private
kinematic copy (ik.py) and tracked with joint position control at 240 Hz. Simplifications: the
gripper is prismatic (gripper.py explains why), the arm's joint motors are stronger than a real
UR5e's so tracking lag stays small, and transit moves are straight lines without a planner (the
approach is collision-checked instead; the robot starts from a home pose above the workspace).

Telemetry `load` (wrist load, N) comes from a force-torque sensor on the tool0 -> gripper_palm joint
(`pybullet.enableJointForceTorqueSensor` + `getJointState(...)[2]`, see wrist.py); on a UR5e it is
the tool-flange F/T reading (RTDE `actual_TCP_force`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pybullet as pb

from bt_grasp.drivers.base import Execution, Fault, GraspPose, Observation
from bt_grasp.drivers.pybullet_arm import scene
from bt_grasp.drivers.pybullet_arm.camera import Camera, Lighting
from bt_grasp.drivers.pybullet_arm.episodes import (
    EpisodeSpec,
    close_generator,
    episode_seed,
    generate_episode,
)
from bt_grasp.drivers.pybullet_arm.faults import FaultBook
from bt_grasp.drivers.pybullet_arm.gripper import (
    FINGER_FRICTION,
    FINGER_SPEED_MPS,
    FINGER_TRAVEL_M,
    GEOMETRY,
    STROKE_M,
    TCP_FROM_TIP_M,
    arm_urdf_path,
    ghost_urdf_path,
)
from bt_grasp.drivers.pybullet_arm.ik import HOME_Q, IkSolver, joint_indices
from bt_grasp.drivers.pybullet_arm.recorder import Recorder, with_latency, with_nan
from bt_grasp.drivers.pybullet_arm.speed import OPTIONS
from bt_grasp.drivers.pybullet_arm.wrist import WristLoadSensor
from bt_grasp.profile import RobotProfile
from bt_grasp.watchdog.telemetry import Phase, Telemetry

DOWN = np.array(pb.getQuaternionFromEuler([math.pi, 0.0, 0.0]))  # approach -z, closing along +x
ARM_FORCES = np.array([600.0, 600.0, 400.0, 150.0, 150.0, 150.0])
REACH_TOL_M = 0.004
PREGRASP_M = 0.12
SAFE_Z = 0.30
TABLE_CLEARANCE_M = 0.003   # fingertips may come this close to the table top
PALM_TOL_M = 0.005          # penetration of the palm into an object tolerated at a waypoint
FINGER_TOL_M = 0.015        # fingers may brush/push neighbours this deep (they move them aside)
NEVER_FINISH_CAP_S = 30.0
# Tcp speeds (m/s). Moves in free space with nothing held run at FREE_TRANSIT (a UR5e moves its
# tool at up to 1 m/s); moves that carry an object, descend to it or push it stay slow, because
# there the speed changes what the contact does. Every move costs ~0.3 ms of physics per 1/240 s
# step, so free transit at 0.8 rather than 0.4 m/s is ~15 % of an episode's wall time.
FREE_TRANSIT_MPS = 0.8
CARRY_TRANSIT_MPS = 0.4
REST_EVERY = 24   # steps between at-rest checks (0.1 s)
REST_CHECKS = 3   # consecutive at-rest checks before an object is put to sleep (0.3 s)


class _Abort(Exception):
    """Internal: ends a running primitive with a fault string (timeout, stopped)."""

    def __init__(self, fault: str) -> None:
        super().__init__(fault)
        self.fault = fault


class PyBulletArm:
    """UR5e + Robotiq-class gripper in PyBullet: primitives with telemetry, scenes, ground truth, faults."""

    def __init__(self, profile: RobotProfile, gui: bool = False, lighting: str = "easy",
                 image_size: int | None = None, high_clutter_share: float = 0.5) -> None:
        if lighting not in ("easy", "hard"):
            raise ValueError(f"lighting must be 'easy' or 'hard', not {lighting!r}")
        self.name = profile.name
        self.profile = profile
        self.lighting_mode = lighting
        self.high_clutter_share = high_clutter_share
        opts = profile.driver_options
        self.telemetry_period = 1.0 / float(opts.get("telemetry_hz", 80))
        cam = profile.camera
        w = image_size or cam.width
        h = image_size or cam.height
        self.camera = Camera(w, h, cam.fov_deg, cam.near, cam.far, cam.T())
        self.max_force = float(profile.gripper.max_force_n)
        self.gui = gui
        self.client = pb.connect(pb.GUI if gui else pb.DIRECT)
        self.ik = IkSolver()
        self.faults = FaultBook()
        self.clock = 0.0
        self.spec: EpisodeSpec | None = None
        self.bodies: dict[int, Any] = {}   # body id -> ObjectSpec
        self._stop = False
        self._world_builds = 0
        self._last_frame: tuple[tuple, Observation] | None = None
        self._build_world()
        self.clock = 0.0

    # ------------------------------------------------------------------ world
    def _build_world(self) -> None:
        c = self.client
        self._world_builds += 1  # part of every frame key: a rebuilt world is a new scene
        self._last_frame = None
        pb.resetSimulation(physicsClientId=c)
        scene.configure(c)
        self.table_id = scene.add_table(c, self.camera.lighting.table_rgba, self.camera.lighting.table_texture)
        self.basket_id = scene.add_basket(c)
        # headless, the arm's visual meshes are never drawn (observe() hides the robot): skip them
        lean = OPTIONS.lean_robot and not self.gui
        self.robot = pb.loadURDF(str(arm_urdf_path(visual=not lean)), (0, 0, 0), useFixedBase=True,
                                 flags=pb.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        self.arm_j, self.finger_j, self.tcp_link = joint_indices(c, self.robot)
        self.wrist = WristLoadSensor(c, self.robot)  # telemetry `load`: see wrist.py
        for j in self.finger_j:
            pb.changeDynamics(self.robot, j, lateralFriction=FINGER_FRICTION, spinningFriction=0.01,
                              jointLowerLimit=0.0, jointUpperLimit=FINGER_TRAVEL_M, physicsClientId=c)
        self.ghost = pb.loadURDF(str(ghost_urdf_path()), (0, 0, -5), useFixedBase=True, physicsClientId=c)
        for link in range(-1, pb.getNumJoints(self.ghost, physicsClientId=c)):
            pb.setCollisionFilterGroupMask(self.ghost, link, 0, 0, physicsClientId=c)
            pb.changeVisualShape(self.ghost, link, rgbaColor=[0, 0, 0, 0], physicsClientId=c)
        self._ghost_palm = next(j for j in range(pb.getNumJoints(self.ghost, physicsClientId=c))
                                if pb.getJointInfo(self.ghost, j, physicsClientId=c)[12] == b"gripper_palm")
        self._robot_rgba = {d[1]: d[7] for d in pb.getVisualShapeData(self.robot, physicsClientId=c)}
        self._set_arm_now(HOME_Q)
        self._set_fingers_now(STROKE_M)
        self.q_cmd = HOME_Q.copy()
        self.gap_cmd = STROKE_M
        self.gap_ref = STROKE_M
        self._fingers_frozen = False
        self._gap_floor = 0.0
        self.grip_force = 0.2 * self.max_force
        self._hold_arm(self.q_cmd)
        self._command_fingers(STROKE_M, self.grip_force)
        self.bodies = {}
        self._rest_checks: dict[int, int] = {}  # body -> consecutive at-rest checks (_sleep_resting)
        self._steps = 0

    def _set_arm_now(self, q: np.ndarray) -> None:
        for j, v in zip(self.arm_j, q, strict=True):
            pb.resetJointState(self.robot, j, float(v), physicsClientId=self.client)

    def _set_fingers_now(self, gap: float) -> None:
        for j in self.finger_j:
            pb.resetJointState(self.robot, j, gap / 2, physicsClientId=self.client)

    def reset(self, episode: int = 0, seed: int = 0, target: str | None = None) -> Observation:
        """Build episode `episode` of base seed `seed` (episode seed = seed + 1000 × episode)."""
        ep_seed = episode_seed(seed, episode)
        rng = np.random.default_rng(ep_seed + 99991)
        self.camera.lighting = Lighting.sample(self.lighting_mode, rng)
        self.spec = generate_episode(ep_seed, target=target, high_clutter_share=self.high_clutter_share,
                                     camera=self.camera.resized(256))
        self._build_world()
        for spec, (pos, orn) in zip(self.spec.objects, self.spec.poses, strict=True):
            self.bodies[scene.spawn(self.client, spec, pos, orn)] = spec
        for _ in range(48):  # let re-created contacts settle (deterministic, no telemetry)
            pb.stepSimulation(physicsClientId=self.client)
        if OPTIONS.sleep_resting:  # the generator settled them: at rest now means asleep now
            self._sleep_resting(needed=1)
        self.clock = 0.0
        self._stop = False
        return self.observe()

    def _sleep_resting(self, needed: int = REST_CHECKS) -> None:
        """Put objects that have been at rest for `needed` checks in a row to sleep.

        Why: a step costs ~0.3-0.8 ms while the pile is awake and ~0.05-0.1 ms while it sleeps,
        and Bullet only lets a body sleep after 2 s below its own (looser) thresholds, so after
        every touch the whole pile was stepped for seconds although nothing moved. Resting uses
        the generator's thresholds (scene.REST_LIN / REST_ANG, checked every REST_EVERY steps);
        bodies touching the robot are left awake. The residual velocity (below those thresholds)
        is zeroed, otherwise the body wakes at once. A sleeping body wakes when anything moving
        touches its island, e.g. the gripper, so contact physics is unchanged."""
        c = self.client
        for b in self.bodies:
            lin, ang = pb.getBaseVelocity(b, physicsClientId=c)
            if np.linalg.norm(lin) > scene.REST_LIN or np.linalg.norm(ang) > scene.REST_ANG \
                    or pb.getContactPoints(self.robot, b, physicsClientId=c):
                self._rest_checks[b] = 0
                continue
            self._rest_checks[b] = self._rest_checks.get(b, 0) + 1
            if self._rest_checks[b] >= needed:
                pb.resetBaseVelocity(b, (0, 0, 0), (0, 0, 0), physicsClientId=c)
                pb.changeDynamics(b, -1, activationState=pb.ACTIVATION_STATE_SLEEP, physicsClientId=c)

    def reset_scene(self, objects: list[Any], positions: list[Any], orientations: list[Any] | None = None,
                    target: str | None = None, settle_s: float = 0.5) -> Observation:
        """A hand-made scene (tests, demos): objects at given poses, settled briefly, no generator."""
        self._build_world()
        orientations = orientations or [(0, 0, 0, 1)] * len(objects)
        for spec, pos, orn in zip(objects, positions, orientations, strict=True):
            self.bodies[scene.spawn(self.client, spec, pos, orn)] = spec
        for _ in range(int(settle_s / scene.TIMESTEP)):
            pb.stepSimulation(physicsClientId=self.client)
        poses = [tuple(tuple(v) for v in pb.getBasePositionAndOrientation(b, physicsClientId=self.client))
                 for b in self.bodies]
        self.spec = EpisodeSpec(seed=-1, objects=list(objects), target=target or "", poses=poses,  # type: ignore[arg-type]
                                visibility=float("nan"), high_clutter=False)
        self.clock = 0.0
        return self.observe()

    # ------------------------------------------------------------------ camera
    def _robot_visible(self, visible: bool) -> None:
        for link, rgba in self._robot_rgba.items():
            colour = list(rgba) if visible else [rgba[0], rgba[1], rgba[2], 0.0]
            pb.changeVisualShape(self.robot, link, rgbaColor=colour, physicsClientId=self.client)

    def _frame_key(self) -> tuple:
        """What a rendered frame depends on that can change without the physics clock advancing:
        a rebuilt world, the lighting, the image size, and the (invisible) collision ghost."""
        ghost = pb.getBasePositionAndOrientation(self.ghost, physicsClientId=self.client)
        return (self._world_builds, self.clock, tuple(self.bodies), id(self.camera.lighting), self.camera.width, ghost)

    def observe(self) -> Observation:
        """RGB-D frame of the fixed camera with the robot hidden; annotations = the sim's annotator.

        Rendering is a pure function of the simulator state, so a second call with no physics
        step in between (e.g. locate right after survey) returns the same Observation object
        instead of rendering an identical image again; callers treat frames as read-only.
        """
        key = self._frame_key()
        if self._last_frame is not None and self._last_frame[0] == key:
            return self._last_frame[1]
        obs = self._render_frame()
        self._last_frame = (key, obs)
        return obs

    def _render_frame(self) -> Observation:
        self._robot_visible(False)
        try:
            rgb, depth, inst = self.camera.render(self.client)
        finally:
            self._robot_visible(True)
        objects = {b: {"name": s.name, "category": s.category, "colour": s.colour, "size": s.size}
                   for b, s in self.bodies.items()}
        return Observation(rgb=rgb, depth=depth, K=self.camera.K(), T_cam_base=self.camera.T_cam_base.copy(),
                           clock=self.clock,
                           annotations={"instance": inst, "objects": objects, "table_id": self.table_id,
                                        "basket_id": self.basket_id})

    # ------------------------------------------------------------------ low level control
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
        q = float(np.clip(self.gap_ref / 2, 0.0, FINGER_TRAVEL_M))
        for j in self.finger_j:
            pb.setJointMotorControl2(self.robot, j, pb.POSITION_CONTROL, targetPosition=q,
                                     force=self.grip_force, positionGain=0.2, physicsClientId=self.client)

    def _advance_fingers(self) -> None:
        if self._fingers_frozen:
            return
        step = 2 * FINGER_SPEED_MPS * scene.TIMESTEP
        d = self.gap_cmd - self.gap_ref
        self.gap_ref = max(self.gap_ref + float(np.clip(d, -step, step)), min(self._gap_floor, self.gap_ref))
        self._apply_fingers()

    def _finger_state(self) -> tuple[float, float]:
        """(gap in metres, mean |motor force| / max force)."""
        st = pb.getJointStates(self.robot, self.finger_j, physicsClientId=self.client)
        gap = sum(s[0] for s in st)
        effort = float(np.mean([abs(s[3]) for s in st])) / self.max_force
        return float(gap), effort

    def tcp_pose(self) -> tuple[np.ndarray, np.ndarray]:
        st = pb.getLinkState(self.robot, self.tcp_link, computeForwardKinematics=True,
                             physicsClientId=self.client)
        return np.array(st[4]), np.array(st[5])

    def _q(self) -> np.ndarray:
        return np.array([s[0] for s in pb.getJointStates(self.robot, self.arm_j, physicsClientId=self.client)])

    # ------------------------------------------------------------------ primitive runtime
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
        if self._rec.due(self.clock):
            gap, effort = self._finger_state()
            z = float(self.tcp_pose()[0][2])
            self._rec.add(self.clock, gap, self.gap_cmd / STROKE_M, effort, z, self._phase,
                          load=self.wrist.read())
        if self._stop:
            raise _Abort("stopped")
        if self._deadline is not None and self.clock >= self._deadline - 1e-9:
            raise _Abort("timeout")

    def _wait(self, seconds: float) -> None:
        for _ in range(max(1, round(seconds / scene.TIMESTEP))):
            self._tick()

    def _stall_forever(self) -> None:
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

    def _solve(self, pos: np.ndarray, orn: np.ndarray, seed_q: np.ndarray | None = None,
               iters: int = 20) -> tuple[np.ndarray, float, float]:
        return self.ik.solve(np.asarray(pos, float), np.asarray(orn, float), seed_q=seed_q, iters=iters)

    def _move_line(self, pos: np.ndarray, orn: np.ndarray, speed: float, phase: Phase,
                   stop_after_m: float | None = None) -> None:
        """Straight line of the tcp to (pos, orn); joint targets interpolated between 1 cm IK points.

        stop_after_m (block_lift): the arm stops progressing after that distance but the command
        runs its nominal time, as when a lift is blocked.
        """
        self._phase = phase
        start, _ = self.tcp_pose()
        dist = float(np.linalg.norm(pos - start))
        n_way = max(1, math.ceil(dist / 0.01))
        q_prev = self.q_cmd.copy()
        steps_per_way = max(1, round(dist / n_way / speed / scene.TIMESTEP))
        travelled = 0.0
        frozen = False
        for k in range(1, n_way + 1):
            p = start + (pos - start) * k / n_way
            travelled = dist * k / n_way
            if stop_after_m is not None and travelled > stop_after_m:
                frozen = True
            if not frozen:
                q_next, _, _ = self._solve(p, orn, seed_q=q_prev, iters=6)
            else:
                q_next = q_prev
            for s in range(1, steps_per_way + 1):
                self.q_cmd = q_prev + (q_next - q_prev) * s / steps_per_way
                self._hold_arm(self.q_cmd)
                self._tick()
            q_prev = q_next
        # converge at the end point
        for _ in range(120):
            if np.max(np.abs(self._q() - self.q_cmd)) < 2e-3:
                break
            self._tick()

    def _execution(self, fault: str | None, info: dict[str, Any], faults: list[Fault]) -> Execution:
        tel = self._rec.telemetry()
        for f in faults:
            if f.kind == "nan_telemetry":
                tel = with_nan(tel, float(f.params.get("from_frac", 0.5)))
            elif f.kind == "latency":
                tel = with_latency(tel, float(f.params.get("seconds", 0.1)))
        return Execution(telemetry=tel, duration=self.clock - self._t0, fault=fault, info=info)

    def _run(self, primitive: str, timeout: float | None, phase: Phase, body, info: dict[str, Any]) -> Execution:
        """Run `body(faults)` with timeout/stop handling and telemetry faults applied afterwards."""
        faults = self.faults.take(primitive)
        if any(f.kind == "driver_exception" for f in faults):
            raise RuntimeError(f"injected driver exception in {primitive}")
        self._begin(timeout, phase)
        fault: str | None = None
        try:
            body(faults)
        except _Abort as exc:
            fault = exc.fault
            self._hold_arm(self._q())
            self.q_cmd = self._q()
        return self._execution(fault, info, faults)

    # ------------------------------------------------------------------ feasibility
    def _ghost_at(self, pos: np.ndarray, orn: np.ndarray, gap: float) -> None:
        """Place the collision ghost so that its tcp is at (pos, orn)."""
        R = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        base = np.asarray(pos) - R[:, 2] * GEOMETRY.tcp_z
        pb.resetBasePositionAndOrientation(self.ghost, base.tolist(), list(orn), physicsClientId=self.client)
        for j in range(pb.getNumJoints(self.ghost, physicsClientId=self.client)):
            if pb.getJointInfo(self.ghost, j, physicsClientId=self.client)[2] == pb.JOINT_PRISMATIC:
                pb.resetJointState(self.ghost, j, gap / 2, physicsClientId=self.client)

    def _collisions(self, pos: np.ndarray, orn: np.ndarray, gap: float, check_objects: bool,
                    ignore: set[int] | None = None) -> str | None:
        """Name of what the gripper (open to `gap`) at (pos, orn) would penetrate, else None.

        The table and basket tolerate no penetration; objects tolerate PALM_TOL_M / FINGER_TOL_M.
        Whatever the gripper currently holds is ignored (it moves with the gripper).
        """
        ignore = set(ignore or ())
        held = self._held_body()
        if held is not None:
            ignore.add(held)
        self._ghost_at(pos, orn, gap)
        try:
            others = [self.table_id, self.basket_id] + (list(self.bodies) if check_objects else [])
            for b in others:
                if b in ignore:
                    continue
                pts = pb.getClosestPoints(self.ghost, b, distance=0.0, physicsClientId=self.client)
                for p in pts:
                    if b in (self.table_id, self.basket_id):
                        tol = 1e-4
                    else:
                        tol = PALM_TOL_M if p[3] == self._ghost_palm else FINGER_TOL_M
                    if p[8] < -tol:
                        part = "palm" if p[3] == self._ghost_palm else "finger"
                        return f"{self._body_name(b)} ({part})"
            return None
        finally:
            pb.resetBasePositionAndOrientation(self.ghost, (0, 0, -5), (0, 0, 0, 1), physicsClientId=self.client)

    def _tip_clear_of_table(self, pos: np.ndarray, orn: np.ndarray) -> bool:
        R = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        tip = np.asarray(pos) + R[:, 2] * TCP_FROM_TIP_M
        return float(tip[2]) >= TABLE_CLEARANCE_M - 1e-9

    def _body_name(self, b: int) -> str:
        if b == self.table_id:
            return "table"
        if b == self.basket_id:
            return "basket"
        spec = self.bodies.get(b)
        return spec.name if spec else f"body {b}"

    @staticmethod
    def _as_pose(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w = np.asarray(w, dtype=float)
        if w.shape == (4, 4):
            return w[:3, 3], _quat_from_matrix(w[:3, :3])
        if w.shape == (7,):
            return w[:3], w[3:]
        if w.shape == (3,):
            return w, DOWN.copy()
        raise ValueError(f"waypoint must be xyz, xyz+quat or a 4x4 pose, got shape {w.shape}")

    def feasible(self, waypoints: list[np.ndarray], gap: float | None = None,
                 check_objects: bool = True, ignore: set[int] | None = None) -> tuple[bool, str]:
        """IK reach and gripper collision at every waypoint (xyz = top-down, xyz+quat, or 4x4).

        Nothing moves. Reasons: "ik: waypoint i out of reach (err m)", "collision: <what> at waypoint i".
        """
        gap = self._finger_state()[0] if gap is None else gap
        q = self.q_cmd.copy()
        for i, w in enumerate(waypoints):
            pos, orn = self._as_pose(w)
            if not np.all(np.isfinite(pos)) or not np.all(np.isfinite(orn)):
                return False, f"ik: waypoint {i} is not finite"
            q, err, ang = self._solve(pos, orn, seed_q=q)
            if err > REACH_TOL_M or ang > 0.02:
                return False, f"ik: waypoint {i} out of reach (err {err:.3f} m, {ang:.3f} rad)"
            if not self._tip_clear_of_table(pos, orn):
                return False, f"collision: table at waypoint {i}"
            hit = self._collisions(pos, orn, gap, check_objects, ignore or set())
            if hit:
                return False, f"collision: {hit} at waypoint {i}"
        return True, ""

    # ------------------------------------------------------------------ primitives
    def _nearest_object(self, pos: np.ndarray, max_dist: float = 0.08) -> int | None:
        best, best_d = None, max_dist
        for b in self.bodies:
            p, _ = pb.getBasePositionAndOrientation(b, physicsClientId=self.client)
            d = float(np.linalg.norm(np.array(p) - pos))
            if d < best_d:
                best, best_d = b, d
        return best

    def _grasp_plan(self, pose: GraspPose, width: float, faults: list[Fault]) -> dict[str, Any]:
        """Where a grasp would move: the grasp point (raised so the fingertips clear the table, and
        moved by a grasp_offset fault), the pre-grasp above it, the descent and the body it aims at."""
        pos = np.asarray(pose.position, float).copy()
        orn = np.asarray(pose.orientation, float)
        orn = orn / np.linalg.norm(orn)
        plan: dict[str, Any] = {}
        for f in faults:
            if f.kind == "grasp_offset":
                R = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
                direction = np.asarray(f.params.get("direction", R[:, 0]), float)
                pos = pos + direction / np.linalg.norm(direction) * float(f.params.get("offset_m", 0.05))
        R = np.array(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        approach = R[:, 2]
        tip_z = pos[2] + approach[2] * TCP_FROM_TIP_M
        if tip_z < TABLE_CLEARANCE_M:  # the grasp point is clamped so fingertips stay off the table
            plan["height_clamped_m"] = float(TABLE_CLEARANCE_M - tip_z)
            pos[2] += TABLE_CLEARANCE_M - tip_z
        pre = pos - approach * PREGRASP_M
        plan.update(pos=pos, orn=orn, pre=pre, gap=float(np.clip(width, 0.01, STROKE_M)),
                    descent=[pos - approach * PREGRASP_M * k / 4 for k in (4, 3, 2, 1, 0)],
                    target=self._nearest_object(pos))
        return plan

    def _grasp_checks(self, plan: dict[str, Any]) -> tuple[bool, str]:
        ok, why = self.feasible([plan["pre"]], gap=plan["gap"], check_objects=True)
        if ok:
            ok, why = self._check_descent(plan["descent"], plan["orn"], plan["gap"], plan["target"])
        return ok, why

    def grasp_feasible(self, pose: GraspPose, width: float) -> tuple[bool, str]:
        """Exactly the checks grasp() makes before moving (pre-grasp, descent, grasp pose against
        everything but the aimed-at object); nothing moves and no fault is consumed."""
        ok, why = self._grasp_checks(self._grasp_plan(pose, width, self.faults.peek("grasp")))
        return ok, "" if ok else f"infeasible: {why}"

    def grasp(self, pose: GraspPose, width: float, force: float, timeout: float | None = None) -> Execution:
        """Pre-grasp above along the approach axis, descend, close with `force`, settle, micro-lift, hold."""
        plan = self._grasp_plan(pose, width, self.faults.peek("grasp"))
        pos, orn, pre, gap_open, target_body = plan["pos"], plan["orn"], plan["pre"], plan["gap"], plan["target"]
        info: dict[str, Any] = {"width": float(width), "force": float(force)}
        if "height_clamped_m" in plan:
            info["height_clamped_m"] = plan["height_clamped_m"]
        force = float(np.clip(force, 0.0, self.max_force))
        info.update(position=pos.tolist(), orientation=orn.tolist(), pregrasp=pre.tolist())
        info["object"] = self._body_name(target_body) if target_body is not None else None
        ok, why = self._grasp_checks(plan)
        if not ok:
            self.faults.take("grasp")  # the attempt is consumed even though nothing moved
            return Execution(Telemetry.empty(), 0.0, f"infeasible: {why}", info)

        def body(faults: list[Fault]) -> None:
            kinds = {f.kind: f for f in faults}
            if target_body is not None:
                if "friction" in kinds:
                    pb.changeDynamics(target_body, -1, lateralFriction=float(kinds["friction"].params.get("value", 0.1)),
                                      physicsClientId=self.client)
                if "mass" in kinds:
                    pb.changeDynamics(target_body, -1, mass=float(kinds["mass"].params.get("value", 2.0)),
                                      physicsClientId=self.client)
            self.grip_force = force
            self.gap_cmd = gap_open
            self._command_fingers(gap_open, force)
            above = self.tcp_pose()[0]
            if above[2] < pre[2] + 0.05:  # leave the current spot upwards first
                self._move_line(np.array([above[0], above[1], max(pre[2], above[2]) + 0.05]), orn,
                                FREE_TRANSIT_MPS, Phase.APPROACH)
            self._move_line(pre, orn, FREE_TRANSIT_MPS, Phase.APPROACH)
            self._move_line(pos, orn, 0.15, Phase.APPROACH)
            self._close(force, kinds, target_body, info)
            self._phase = Phase.SETTLE
            self._wait(0.3)
            self._lift_phase(0.015, orn, kinds.get("block_lift"), Phase.MICRO_LIFT, speed=0.05)
            self._phase = Phase.HOLD
            self._wait(0.2)
            info["held"] = self.held_object()

        return self._run("grasp", timeout, Phase.APPROACH, body, info)

    def _check_descent(self, descent: list[np.ndarray], orn: np.ndarray, gap: float,
                       target: int | None) -> tuple[bool, str]:
        """Descent waypoints: reach; never into the table; the palm/fingers not deep in other objects."""
        q = self.q_cmd.copy()
        for i, p in enumerate(descent):
            q, err, ang = self._solve(p, orn, seed_q=q)
            if err > REACH_TOL_M or ang > 0.02:
                return False, f"ik: descent waypoint {i} out of reach (err {err:.3f} m)"
            if not self._tip_clear_of_table(p, orn):
                return False, f"collision: table at descent waypoint {i}"
        ignore = {target} if target is not None else set()
        hit = self._collisions(descent[-1], orn, gap, True, ignore)
        if hit:
            return False, f"collision: {hit} at the grasp pose"
        return True, ""

    def _close(self, force: float, kinds: dict[str, Fault], target: int | None, info: dict[str, Any]) -> None:
        """CLOSE phase: drive the fingers shut with `force` until they stop (object, stop, or limit)."""
        self._phase = Phase.CLOSE
        if "never_finish" in kinds:
            self.gap_cmd = 0.0
            self._stall_forever()
        if "block_fingers" in kinds:
            at = float(kinds["block_fingers"].params.get("at_norm", 0.5)) * STROKE_M
            info["blocked_at_m"] = at
            self._gap_floor = at  # jammed part-way: the fingers stop there and stop pushing (no grip)
        self.gap_cmd = 0.0
        self._command_fingers(0.0, force)
        removed = False
        still = 0
        n = 0
        while n * scene.TIMESTEP < 2.0:
            self._tick()
            n += 1
            if "remove_target_on_close" in kinds and not removed and n >= 6:  # just after the close starts
                if target is not None and target in self.bodies:
                    pb.removeBody(target, physicsClientId=self.client)
                    info["removed"] = self.bodies.pop(target).name
                removed = True
            vel = np.mean([abs(s[1]) for s in pb.getJointStates(self.robot, self.finger_j,
                                                                physicsClientId=self.client)])
            still = still + 1 if vel < 0.002 and n > 24 else 0
            if still >= 12:
                break

    def _lift_phase(self, dz: float, orn: np.ndarray, block: Fault | None, phase: Phase, speed: float) -> None:
        p, _ = self.tcp_pose()
        stop_after = float(block.params.get("after_m", 0.0)) if block is not None else None
        self._move_line(p + np.array([0, 0, dz]), orn, speed, phase, stop_after_m=stop_after)

    def lift(self, dz: float, timeout: float | None = None) -> Execution:
        """Raise the tcp by dz (m) keeping orientation and grip; telemetry phase MICRO_LIFT then HOLD."""
        _, orn = self.tcp_pose()
        info: dict[str, Any] = {"dz": float(dz)}

        def body(faults: list[Fault]) -> None:
            kinds = {f.kind: f for f in faults}
            if "never_finish" in kinds:
                self._stall_forever()
            self._lift_phase(float(dz), orn, kinds.get("block_lift"), Phase.MICRO_LIFT, speed=0.15)
            self._phase = Phase.HOLD
            self._wait(0.1)
            info["held"] = self.held_object()

        p, _ = self.tcp_pose()
        ok, why = self.feasible([np.concatenate([p + np.array([0.0, 0.0, dz]), orn])], check_objects=False)
        if not ok:
            self.faults.take("lift")
            return Execution(Telemetry.empty(), 0.0, f"infeasible: {why}", info)
        return self._run("lift", timeout, Phase.MICRO_LIFT, body, info)

    def place(self, target: str = "basket", timeout: float | None = None) -> Execution:
        """Carry whatever is held over the basket at a safe height and open the gripper.

        Phases: APPROACH for the transit, SETTLE for the release (commanded_aperture shows the opening).
        """
        if target != "basket":
            return Execution(Telemetry.empty(), 0.0, f"infeasible: unknown place target {target!r}", {})
        bx, by = scene.BASKET_DROP_XY
        above = np.array([bx, by, 0.25])
        info: dict[str, Any] = {"target": target, "object": self.held_object()}

        def body(faults: list[Fault]) -> None:
            kinds = {f.kind: f for f in faults}
            if "never_finish" in kinds:
                self._stall_forever()
            p, orn = self.tcp_pose()
            if p[2] < SAFE_Z:
                self._move_line(np.array([p[0], p[1], SAFE_Z]), orn, 0.3, Phase.APPROACH,
                                stop_after_m=float(kinds["block_lift"].params.get("after_m", 0.0))
                                if "block_lift" in kinds else None)
            self._move_line(np.array([above[0], above[1], SAFE_Z]), DOWN, CARRY_TRANSIT_MPS, Phase.APPROACH)
            self._move_line(above, DOWN, 0.2, Phase.APPROACH)
            self._phase = Phase.SETTLE
            self.gap_cmd = STROKE_M
            self._command_fingers(STROKE_M, self.grip_force)
            self._wait(0.6)
            info["in_basket"] = self.object_in_basket(info["object"]) if info["object"] else False

        ok, why = self.feasible([above], check_objects=False)
        if not ok:
            self.faults.take("place")
            return Execution(Telemetry.empty(), 0.0, f"infeasible: {why}", info)
        return self._run("place", timeout, Phase.APPROACH, body, info)

    def place_region(self, target: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The basket's box in the base frame: the fixture place() drops into (Receptacles)."""
        if target != "basket":
            return None
        half = 0.3 * BASKET_HALF_FRAC
        bx, by, bz = scene.BASKET_POS
        return np.array([bx - half, by - half, bz]), np.array([bx + half, by + half, bz + 0.2])

    def open_gripper(self, timeout: float | None = None) -> Execution:
        """Open fully and wait until the fingers stop."""
        def body(faults: list[Fault]) -> None:
            if any(f.kind == "never_finish" for f in faults):
                self.gap_cmd = STROKE_M
                self._stall_forever()
            self._phase = Phase.SETTLE
            self.gap_cmd = STROKE_M
            self._command_fingers(STROKE_M, self.grip_force)
            for _ in range(int(1.5 / scene.TIMESTEP)):
                self._tick()
                if self._finger_state()[0] > STROKE_M - 0.001:
                    break
            self._wait(0.05)

        return self._run("open_gripper", timeout, Phase.SETTLE, body, {})

    def push(self, start: np.ndarray, end: np.ndarray, height: float, timeout: float | None = None) -> Execution:
        """Closed gripper, top-down, moves start -> end (base frame xy) with the grasp point at `height`."""
        start = np.asarray(start, float)[:2]
        end = np.asarray(end, float)[:2]
        d = end - start
        yaw = math.atan2(d[1], d[0]) + math.pi / 2  # closing axis across the push: the fingers' flat sides lead
        orn = np.array(pb.getQuaternionFromEuler([math.pi, 0.0, -yaw]))
        h = max(float(height), TABLE_CLEARANCE_M - 0.0 + TCP_FROM_TIP_M)
        p0 = np.array([start[0], start[1], h])
        p1 = np.array([end[0], end[1], h])
        above = p0 + np.array([0, 0, 0.12])
        info: dict[str, Any] = {"start": p0.tolist(), "end": p1.tolist(), "height": h}
        ok, why = self.feasible([above], gap=0.0, check_objects=True)
        if ok:
            ok, why = self.feasible([p0, p1], gap=0.0, check_objects=False)
        if ok:
            hit = self._collisions(p0, orn, 0.0, True)
            if hit:
                ok, why = False, f"collision: {hit} at the push start"
        if not ok:
            self.faults.take("push")
            return Execution(Telemetry.empty(), 0.0, f"infeasible: {why}", info)

        def body(faults: list[Fault]) -> None:
            if any(f.kind == "never_finish" for f in faults):
                self._stall_forever()
            self.gap_cmd = 0.0
            self._command_fingers(0.0, self.grip_force)
            cur = self.tcp_pose()[0]
            if cur[2] < above[2]:
                self._move_line(np.array([cur[0], cur[1], above[2]]), orn, FREE_TRANSIT_MPS, Phase.APPROACH)
            self._move_line(above, orn, FREE_TRANSIT_MPS, Phase.APPROACH)
            self._move_line(p0, orn, 0.15, Phase.APPROACH)
            self._move_line(p1, orn, 0.1, Phase.APPROACH)
            self._move_line(p1 + np.array([0, 0, 0.12]), orn, 0.2, Phase.APPROACH)

        return self._run("push", timeout, Phase.APPROACH, body, info)

    def stop(self) -> None:
        """Ask the running primitive to stop at its next step (fault "stopped"); hold position."""
        self._stop = True
        try:
            self._hold_arm(self._q())
        except pb.error:
            pass

    def close(self) -> None:
        """The one cleanup path: physics clients (this world, IK, scene generation). Files the arm
        writes live in the per-user cache (cache.py), so there are no temp folders to remove."""
        for c in (self.client,):
            try:
                pb.disconnect(c)
            except pb.error:
                pass
        self.ik.close()
        close_generator()

    # ------------------------------------------------------------------ faults
    def inject(self, fault: Fault) -> None:
        self.faults.add(fault)

    def clear_faults(self) -> None:
        self.faults.clear()

    # ------------------------------------------------------------------ ground truth
    def object_names(self) -> dict[int, str]:
        return {b: s.name for b, s in self.bodies.items()}

    def task(self) -> str | None:
        return self.spec.target if self.spec else None

    def object_pose(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        for b, s in self.bodies.items():
            if s.name == name:
                p, o = pb.getBasePositionAndOrientation(b, physicsClientId=self.client)
                return np.array(p), np.array(o)
        return None

    def _touching_fingers(self, b: int) -> bool:
        return all(pb.getContactPoints(self.robot, b, j, -1, physicsClientId=self.client) for j in self.finger_j)

    def _held_body(self) -> int | None:
        for b in self.bodies:
            lo, _ = pb.getAABB(b, -1, physicsClientId=self.client)
            if lo[2] > 0.002 and self._touching_fingers(b) and \
                    not pb.getContactPoints(b, self.table_id, physicsClientId=self.client):
                return b
        return None

    def held_object(self) -> str | None:
        """The object above the table (not touching it) that touches both fingers."""
        b = self._held_body()
        return self.bodies[b].name if b is not None else None

    def object_in_basket(self, name: str) -> bool:
        """Inside the basket's footprint, low, and not held."""
        pose = self.object_pose(name)
        if pose is None:
            return False
        p = pose[0]
        half = 0.3 * BASKET_HALF_FRAC
        bx, by, _ = scene.BASKET_POS
        inside = abs(p[0] - bx) < half and abs(p[1] - by) < half and p[2] < 0.2
        return bool(inside and self.held_object() != name)


BASKET_HALF_FRAC = 0.5  # the scaled traybox is 0.3 m square


def _quat_from_matrix(R: np.ndarray) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(R).as_quat()
