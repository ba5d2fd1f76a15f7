"""The MuJoCo model of the arm's world, built with MjSpec: table, basket, UR5e + gripper, objects.

The geometry is the PyBullet world's (pybullet_arm/scene.py, gripper.py): the same table, the
traybox basket's collision boxes at half scale, the airo-models UR5e and the same prismatic
gripper, so both engines start from the same scene (episodes.py poses). What MuJoCo adds is its
contact model: elliptic friction cones with a high `impratio` (sliding friction is enforced
almost exactly, so a squeezed object is not pushed out of the grip), soft contacts whose
penetration is removed by a spring-damper over `solref`'s time constant instead of a velocity
kick, and an implicit integrator for the stiff finger and joint servos.

Timestep: 1/240 s, the control rate of the PyBullet arm and of the profile (12 steps per 0.05 s
control period, telemetry every third step), one MuJoCo step per tick. The contact time constant
(0.02 s) is then ~5 steps, inside MuJoCo's stable range (it raises any smaller one to 2 steps,
which the pads' 5 ms becomes); the implicit integrator carries the stiff servos. Two 2 ms
steps per tick (MuJoCo's default step), on 10 development episodes: Grasping SR 29/29 against
30/31 here, Task SR 8/10 against 7/10, no launches either way, at 1.3x the episode time.
Resting objects sleep (MuJoCo's island sleeping), as they do in the PyBullet arm: a resting pile
costs ~25 % less per step.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

os.environ.setdefault("MUJOCO_GL", "egl")

import airo_models  # noqa: E402
import mujoco  # noqa: E402

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.mujoco_arm.objects import add_object  # noqa: E402
from bt_grasp.drivers.pybullet_arm import scene  # noqa: E402
from bt_grasp.drivers.pybullet_arm.camera import Lighting  # noqa: E402
from bt_grasp.drivers.pybullet_arm.gripper import (  # noqa: E402
    FINGER_FRICTION,
    FINGER_SIZE,
    FINGER_TRAVEL_M,
    GEOMETRY,
    PALM_SIZE,
)
from bt_grasp.drivers.pybullet_arm.ik import ARM_JOINTS, HOME_Q  # noqa: E402
from bt_grasp.drivers.pybullet_arm.params import ARM_FORCES  # noqa: E402

TICK_S = scene.TIMESTEP        # one control tick, as in the PyBullet arm
PHYSICS_SUBSTEPS = 1           # MuJoCo steps per tick (module docstring: 2 cost 1.3x, same within noise)
IMPRATIO = 10.0                # frictional-to-normal impedance ratio (elliptic cones)
# Arm servos: stiff like the PyBullet arm's motors (which track closely), force-limited like them.
# At a tenth of these gains a push's joints lagged their targets by 0.025 rad (median, ~1.5 cm at
# the tool) and a 5 kg object sagged the micro-lift below the Watchdog's 4 mm; here 0.007 rad.
ARM_KP = np.array([40000.0, 40000.0, 30000.0, 8000.0, 8000.0, 5000.0])  # N m / rad
ARM_KV = 2.0 * np.sqrt(ARM_KP * 1.0)   # critical damping for ~1 kg m² (implicit: over-damped wrists stay stable)
# Fingers: a 2F-85's drive closes at its set speed whatever its force setting. Each finger is a
# position servo chasing the finger reference, force-capped at the grip force, against a drive
# damping of grip force / finger speed (control.py _apply_fingers): a blocked finger pushes at the
# grip force, a free one moves at no more than the finger speed. Without the damping a finger
# whose object slipped chased a reference left at the closed stop at the full grip force (the gap
# closing at 0.8-1.5 m/s) and shot the object out of the grip.
FINGER_KP = 20000.0            # N/m: a blocked finger saturates its force limit within 5 mm
FINGER_KV = 200.0
FINGER_ARMATURE = 1.0          # kg reflected along the stroke: the 2F-85's screw drive is not backdrivable
PALM_MASS, FINGER_MASS = 0.6, 0.05

# Collision classes: objects collide with everything; table and basket with objects and the gripper;
# finger pads meet objects only through explicit pairs (their friction is the product, as in Bullet).
OBJ_BIT, FINGER_BIT = 1, 2
ROBOT_GROUP, GHOST_GROUP = 3, 5  # geom groups the camera does not draw


@dataclass
class Built:
    """The compiled model and the ids the driver needs."""

    model: mujoco.MjModel
    bodies: dict[int, ObjectSpec]      # object body id -> spec
    object_geoms: dict[int, list[int]]  # object body id -> its collision geom ids
    table_id: int
    basket_id: int
    arm_qadr: list[int]
    arm_dofadr: list[int]
    finger_qadr: list[int]
    finger_dofadr: list[int]
    arm_act: list[int]
    finger_act: list[int]
    tcp_site: int
    wrist_site: int
    finger_geoms: list[int]
    palm_geom: int
    ghost_geoms: dict[int, str] = field(default_factory=dict)  # ghost geom id -> "palm" | "finger"
    ghost_mocap: int = 0
    table_geoms: list[int] = field(default_factory=list)
    basket_geoms: list[int] = field(default_factory=list)


def _arm_urdf() -> str:
    """airo-models' UR5e without meshes (the camera hides the robot; its links above the wrist
    do not collide), frames kept so tool0 exists as a body."""
    text = Path(airo_models.get_urdf_path("ur5e")).read_text()
    for tag in ("visual", "collision", "transmission"):
        text = re.sub(rf"<{tag}\b.*?</{tag}>", "", text, flags=re.S)
    return re.sub(r"<robot ([^>]*)>", r'<robot \1 xmlns:drake="http://drake.mit.edu"><mujoco>'
                  r'<compiler fusestatic="false" discardvisual="false"/></mujoco>', text, count=1)


def _box(body: mujoco.MjsBody, half: tuple[float, ...], pos: tuple[float, ...], rgba: tuple[float, ...],
         name: str = "", quat: tuple[float, ...] | None = None) -> mujoco.MjsGeom:
    g = body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(half), pos=list(pos), rgba=list(rgba))
    if name:
        g.name = name
    if quat is not None:
        g.quat = list(quat)
    return g


def _add_gripper(parent: mujoco.MjsBody, group: int, collide: bool, prefix: str = "") -> None:
    """The gripper of gripper.py under `parent` (tool0 frame, z = approach)."""
    fx, fy, fz = FINGER_SIZE
    palm = parent.add_body(name=f"{prefix}gripper_palm")
    palm.explicitinertial = True
    palm.mass, palm.inertia, palm.ipos = PALM_MASS, [1e-3, 1e-3, 1e-3], [0, 0, 0]
    g = _box(palm, tuple(s / 2 for s in PALM_SIZE), (0, 0, PALM_SIZE[2] / 2), (0.15, 0.15, 0.15, 1), f"{prefix}palm")
    g.group = group
    g.contype, g.conaffinity = (OBJ_BIT, OBJ_BIT) if collide else (0, 0)
    palm.add_site(name=f"{prefix}wrist", pos=[0, 0, 0])
    palm.add_site(name=f"{prefix}tcp", pos=[0, 0, GEOMETRY.tcp_z])
    for side, sign in (("right", 1.0), ("left", -1.0)):
        f = palm.add_body(name=f"{prefix}finger_{side}", pos=[0, 0, GEOMETRY.palm_z])
        f.explicitinertial = True
        f.mass, f.inertia, f.ipos = FINGER_MASS, [1e-5, 1e-5, 1e-5], [0, 0, 0]
        if collide:
            f.add_joint(name=f"finger_{side}_joint", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[sign, 0, 0],
                        range=[0.0, FINGER_TRAVEL_M], armature=FINGER_ARMATURE)
        g = _box(f, (fx / 2, fy / 2, fz / 2), (sign * fx / 2, 0, fz / 2), (0.3, 0.3, 0.3, 1),
                 f"{prefix}finger_{side}")
        g.group = group
        g.contype, g.conaffinity = (FINGER_BIT, 0) if collide else (0, 0)


def _add_basket(spec: mujoco.MjSpec) -> mujoco.MjsBody:
    """tray/traybox.urdf's collision boxes at BASKET_SCALE (a floor and four slanted walls)."""
    s = scene.BASKET_SCALE
    body = spec.worldbody.add_body(name="basket", pos=list(scene.BASKET_POS))
    rgba = (0.55, 0.55, 0.6, 1.0)
    _box(body, (0.3 * s, 0.3 * s, 0.01 * s), (0, 0, 0.005 * s), rgba)
    a = 0.575469961
    for (x, y), axis, sign in (((0.25, 0), (0, 1, 0), 1), ((-0.25, 0), (0, 1, 0), -1),
                               ((0, -0.25), (1, 0, 0), 1), ((0, 0.25), (1, 0, 0), -1)):
        half = (0.01 * s, 0.3 * s, 0.075 * s) if axis == (0, 1, 0) else (0.3 * s, 0.01 * s, 0.075 * s)
        q = [math.cos(sign * a / 2)] + [math.sin(sign * a / 2) * v for v in axis]
        _box(body, half, (x * s, y * s, 0.059 * s), rgba, quat=tuple(q))
    for g in body.geoms:
        g.contype, g.conaffinity = OBJ_BIT, OBJ_BIT | FINGER_BIT
    return body


def _add_light(spec: mujoco.MjSpec, L: Lighting) -> None:
    """The episode's light (camera.py's Lighting: direction towards the light, colour, terms);
    the table's texture is not drawn (MuJoCo reads PNG textures only, and the colour varies)."""
    d = -np.asarray(L.direction, float)
    colour = np.asarray(L.colour, float)
    spec.visual.headlight.active = 0
    spec.worldbody.add_light(name="sun", type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL, pos=[0.5, 0.0, 2.0],
                             dir=(d / np.linalg.norm(d)).tolist(), castshadow=int(L.shadow),
                             diffuse=(colour * L.diffuse).tolist(), ambient=(colour * L.ambient).tolist(),
                             specular=[L.specular] * 3)


def build(objects: list[ObjectSpec], poses: list[tuple[tuple[float, ...], tuple[float, ...]]],
          lighting: Lighting | None = None, camera: tuple[np.ndarray, float] | None = None, with_world: bool = True) -> Built:
    """Compile the world with `objects` at `poses` (position, quaternion xyzw; the body's inertial
    frame, as PyBullet reports it). with_world=False: the arm alone (the IK's kinematic copy).
    camera: (T_cam_base in OpenCV axes, vertical fov in degrees), added as the camera "overhead"."""
    spec = mujoco.MjSpec.from_string(_arm_urdf())
    spec.option.timestep = TICK_S / PHYSICS_SUBSTEPS
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = IMPRATIO
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.noslip_iterations = 0
    # objects at rest sleep (islands wake when an awake body touches them); actuated trees never do
    spec.option.enableflags |= int(mujoco.mjtEnableBit.mjENBL_SLEEP)
    tool0 = spec.body("tool0")
    for name in ("shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link", "wrist_3_link"):
        spec.body(name).gravcomp = 1.0  # the arm's own weight is the controller's (UR5e does the same)
    for j in ARM_JOINTS:
        spec.joint(j).armature = 0.1
        spec.joint(j).damping = [1.0, 0.0, 0.0]
    _add_gripper(tool0, ROBOT_GROUP, collide=with_world)
    if with_world:
        for name, kp, kv, f in zip(ARM_JOINTS, ARM_KP, ARM_KV, ARM_FORCES, strict=True):
            a = spec.add_actuator(name=f"{name}_act", target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
            a.set_to_position(kp=float(kp), kv=float(kv))
            a.forcelimited, a.forcerange = True, [-float(f), float(f)]
            a.ctrllimited = False
        for side in ("right", "left"):
            a = spec.add_actuator(name=f"finger_{side}_act", target=f"finger_{side}_joint",
                                  trntype=mujoco.mjtTrn.mjTRN_JOINT)
            a.set_to_position(kp=FINGER_KP, kv=FINGER_KV)
            a.forcelimited, a.forcerange = True, [-100.0, 100.0]
            a.ctrllimited = False
        spec.add_sensor(name="wrist_force", type=mujoco.mjtSensor.mjSENS_FORCE, objtype=mujoco.mjtObj.mjOBJ_SITE,
                        objname="wrist")
        spec.add_exclude(bodyname1="finger_right", bodyname2="finger_left")
        half = [s / 2 for s in scene.TABLE_SIZE]
        table = spec.worldbody.add_body(name="table", pos=[scene.TABLE_CENTRE[0], scene.TABLE_CENTRE[1], -half[2]])
        tg = _box(table, tuple(half), (0, 0, 0), (lighting or Lighting()).table_rgba)
        tg.friction = [0.8, 0.005, 0.0001]
        tg.contype, tg.conaffinity = OBJ_BIT, OBJ_BIT | FINGER_BIT
        _add_basket(spec)
        ghost = spec.worldbody.add_body(name="ghost", pos=[0, 0, -5], mocap=True)
        _add_gripper(ghost, GHOST_GROUP, collide=False, prefix="ghost_")
        _add_light(spec, lighting or Lighting())
        for i, (spec_i, (pos, orn)) in enumerate(zip(objects, poses, strict=True)):
            add_object(spec, spec_i, f"obj{i}", pos, orn, OBJ_BIT, FINGER_FRICTION)
        if camera is not None:
            T, fov = camera
            R = T[:3, :3] @ np.diag([1.0, -1.0, -1.0])  # OpenCV -> MuJoCo camera axes (looks along -z)
            q = np.zeros(4)
            mujoco.mju_mat2Quat(q, R.flatten())
            spec.worldbody.add_camera(name="overhead", pos=T[:3, 3].tolist(), quat=q.tolist(), fovy=float(fov))
    model = spec.compile()
    return _ids(model, objects, with_world)


def _ids(m: mujoco.MjModel, objects: list[ObjectSpec], with_world: bool) -> Built:
    def jid(n: str) -> int:
        return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)

    def bid(n: str) -> int:
        return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n)

    def gid(n: str) -> int:
        return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, n)

    arm = [jid(n) for n in ARM_JOINTS]
    fingers = [jid(f"finger_{s}_joint") for s in ("right", "left")] if with_world else []
    bodies = {bid(f"obj{i}"): o for i, o in enumerate(objects)} if with_world else {}
    obj_geoms = {b: [g for g in range(m.ngeom) if m.geom_bodyid[g] == b and m.geom_contype[g]] for b in bodies}
    ghost: dict[int, str] = {}
    if with_world:
        ghost = {gid("ghost_palm"): "palm", gid("ghost_finger_right"): "finger", gid("ghost_finger_left"): "finger"}
    table = bid("table") if with_world else -1
    basket = bid("basket") if with_world else -1
    return Built(
        model=m, bodies=bodies, object_geoms=obj_geoms, table_id=table, basket_id=basket,
        arm_qadr=[int(m.jnt_qposadr[j]) for j in arm], arm_dofadr=[int(m.jnt_dofadr[j]) for j in arm],
        finger_qadr=[int(m.jnt_qposadr[j]) for j in fingers], finger_dofadr=[int(m.jnt_dofadr[j]) for j in fingers],
        arm_act=[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, f"{n}_act") for n in ARM_JOINTS] if with_world else [],
        finger_act=[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, f"finger_{s}_act")
                    for s in ("right", "left")] if with_world else [],
        tcp_site=mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "tcp"),
        wrist_site=mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "wrist"),
        finger_geoms=[gid("finger_right"), gid("finger_left")], palm_geom=gid("palm"),
        ghost_geoms=ghost, ghost_mocap=int(m.body_mocapid[bid("ghost")]) if with_world else -1,
        table_geoms=[g for g in range(m.ngeom) if m.geom_bodyid[g] == table] if with_world else [],
        basket_geoms=[g for g in range(m.ngeom) if m.geom_bodyid[g] == basket] if with_world else [],
    )


def home_qpos(b: Built, data: mujoco.MjData) -> None:
    """The arm at HOME_Q and the fingers fully open, at rest."""
    for adr, q in zip(b.arm_qadr, HOME_Q, strict=True):
        data.qpos[adr] = q
    for adr in b.finger_qadr:
        data.qpos[adr] = FINGER_TRAVEL_M
    data.qvel[:] = 0.0
