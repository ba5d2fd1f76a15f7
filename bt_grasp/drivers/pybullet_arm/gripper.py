"""A procedural Robotiq-class parallel gripper (85 mm stroke) and the UR5e + gripper URDF.

Simplified on purpose: the real Robotiq 2F-85 is a four-bar linkage (airo-models ships its URDF),
which needs mimic/gear constraints in PyBullet to close the loop. Under the deadline of the first
version we use two prismatic fingers instead: the same stroke (0-85 mm), the same kind of force
limit and finger speed, a narrow palm. The Watchdog reads only finger gap and effort, which this
model reproduces; fingertip curling and the linkage's parallel/encompassing modes are not modelled.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import airo_models

from bt_grasp.drivers.pybullet_arm.cache import cached_text_file

STROKE_M = 0.085          # full opening between the finger pads
FINGER_TRAVEL_M = STROKE_M / 2
PALM_SIZE = (0.10, 0.04, 0.06)      # x (closing dir), y, z (approach) in metres
FINGER_SIZE = (0.010, 0.022, 0.055)  # thickness along x, width, length along z
TCP_FROM_TIP_M = 0.015    # the grasp point sits this far above the fingertips
FINGER_SPEED_MPS = 0.08   # per finger (Robotiq: 20-150 mm/s closing speed)
FINGER_FRICTION = 1.5


@dataclass(frozen=True)
class GripperGeometry:
    """Where the gripper's frames sit relative to the tool flange (tool0; z = approach)."""

    palm_z: float = PALM_SIZE[2]
    finger_len: float = FINGER_SIZE[2]

    @property
    def tip_z(self) -> float:
        return self.palm_z + self.finger_len

    @property
    def tcp_z(self) -> float:
        """Distance from tool0 to the grasp point (between the pads, just above the tips)."""
        return self.tip_z - TCP_FROM_TIP_M


GEOMETRY = GripperGeometry()


def _box(size: tuple[float, float, float], xyz: tuple[float, float, float], rgba: str) -> str:
    s = " ".join(f"{v:.5f}" for v in size)
    o = " ".join(f"{v:.5f}" for v in xyz)
    geom = f'<origin xyz="{o}" rpy="0 0 0"/><geometry><box size="{s}"/></geometry>'
    return (f'<visual>{geom}<material name="m{zlib.crc32(rgba.encode()) % 997}"><color rgba="{rgba}"/></material>'
            f'</visual><collision>{geom}</collision>')


def _inertial(mass: float) -> str:
    i = 1e-5 if mass > 0.01 else 1e-7
    return (f'<inertial><origin xyz="0 0 0"/><mass value="{mass}"/>'
            f'<inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial>')


def gripper_links(parent: str) -> str:
    """URDF links and joints of the gripper hanging from `parent` (whose z axis is the approach)."""
    g = GEOMETRY
    fx, fy, fz = FINGER_SIZE
    palm = _box(PALM_SIZE, (0, 0, PALM_SIZE[2] / 2), "0.15 0.15 0.15 1")
    # finger link frames sit at the palm's underside on the closing axis; the pad face is at x=0
    right = _box(FINGER_SIZE, (fx / 2, 0, fz / 2), "0.3 0.3 0.3 1")
    left = _box(FINGER_SIZE, (-fx / 2, 0, fz / 2), "0.3 0.3 0.3 1")
    lim = f'<limit lower="0" upper="{FINGER_TRAVEL_M}" effort="250" velocity="0.2"/>'
    return f"""
  <link name="gripper_palm">{_inertial(0.6)}{palm}</link>
  <joint name="tool0-gripper_palm" type="fixed"><parent link="{parent}"/><child link="gripper_palm"/>
    <origin xyz="0 0 0" rpy="0 0 0"/></joint>
  <link name="finger_right">{_inertial(0.05)}{right}</link>
  <joint name="finger_right_joint" type="prismatic"><parent link="gripper_palm"/><child link="finger_right"/>
    <origin xyz="0 0 {g.palm_z}" rpy="0 0 0"/><axis xyz="1 0 0"/>{lim}</joint>
  <link name="finger_left">{_inertial(0.05)}{left}</link>
  <joint name="finger_left_joint" type="prismatic"><parent link="gripper_palm"/><child link="finger_left"/>
    <origin xyz="0 0 {g.palm_z}" rpy="0 0 0"/><axis xyz="-1 0 0"/>{lim}</joint>
  <link name="tcp">{_inertial(0.001)}</link>
  <joint name="gripper_palm-tcp" type="fixed"><parent link="gripper_palm"/><child link="tcp"/>
    <origin xyz="0 0 {g.tcp_z}" rpy="0 0 0"/></joint>
"""


_CACHE: dict[str, Path] = {}


def arm_urdf_path(visual: bool = True) -> Path:
    """UR5e from airo-models with the gripper appended at tool0, in the per-user cache (cache.py).

    visual=False drops the arm's visual meshes (~10 MB of OBJ, most of loadURDF's cost): for the
    kinematic IK copy and for headless worlds, where the camera renders with the robot hidden.
    """
    key = "arm" if visual else "arm_lean"
    if key in _CACHE:
        return _CACHE[key]
    src = Path(airo_models.get_urdf_path("ur5e"))
    text = src.read_text()
    if not visual:
        text = re.sub(r"<visual>.*?</visual>", "", text, flags=re.S)
    text = re.sub(r'filename="(?!/)([^"]+)"', lambda m: f'filename="{src.parent / m.group(1)}"', text)
    # frame-only links get a tiny inertial so Bullet does not invent 1 kg ones (and warn)
    text = re.sub(r'<link name="([^"]+)"\s*/>', lambda m: f'<link name="{m.group(1)}">{_inertial(0.001)}</link>', text)
    text = text.replace("</robot>", gripper_links("tool0") + "</robot>")
    _CACHE[key] = cached_text_file("urdf", "ur5e_bt_grasp_gripper" + ("" if visual else "_lean"), ".urdf", text)
    return _CACHE[key]


def ghost_urdf_path() -> Path:
    """The gripper alone (a root link standing for tool0), used for collision checks of waypoints."""
    if "ghost" in _CACHE:
        return _CACHE["ghost"]
    text = f'<?xml version="1.0"?><robot name="gripper_ghost"><link name="tool0">{_inertial(0.001)}</link>' \
           f'{gripper_links("tool0")}</robot>'
    _CACHE["ghost"] = cached_text_file("urdf", "gripper_ghost", ".urdf", text)
    return _CACHE["ghost"]
