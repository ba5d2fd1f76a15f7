"""The Stretch head camera: RealSense frames through pyrealsense2, and where the camera is.

`head_camera_pose(pan, tilt)` is the kinematic chain of the RE2V0 URDF from base_link to
`camera_color_optical_frame` (OpenCV axes: x right, y down, z forward), with the two head joints:

  base_link --joint_mast (fixed)--> link_mast --joint_head (fixed)--> link_head
    --joint_head_pan (revolute z, = pan)--> link_head_pan --joint_head_tilt (revolute z, = tilt)-->
    link_head_tilt --camera_joint--> camera_bottom_screw_frame --camera_link_joint--> camera_link
    --camera_color_joint--> camera_color_frame --camera_color_optical_joint--> camera_color_optical_frame

The origins below are copied as numbers from that URDF (hello-robot-stretch-urdf 0.1.2); a test
checks the chain against PyBullet's forward kinematics of the same file. A calibrated robot
differs by millimetres; use its own URDF's numbers if that matters.

`RealSenseHeadCamera` imports pyrealsense2 lazily (extra `realsense`; Debian `libusb-1.0-0`), and
can play a recorded .bag instead of a live device (`bag=`), which is how it is tested without a
camera: `write_synthetic_bag` records frames made with pyrealsense2's software device.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp.errors import BackendUnavailable

# (xyz, rpy) of each joint origin, URDF convention (rpy = fixed-axis roll, pitch, yaw).
MAST = ((-0.067, 0.135, 0.0284), (1.5708, 0.0, 4.8006e-17))
HEAD = ((0.0, 1.33, 0.0), (1.5707963267949, -1.5707963267949, 3.1416))
HEAD_PAN = ((0.135, 0.0731000000000001, -0.00319621125547975), (0.0, 0.0, 1.5707963267949))
HEAD_TILT = ((-0.00130000001785262, 0.0277624999926072, -0.0533107920897029),
             (1.5707963267949, 3.36459255518345e-15, -8.42914893687103e-17))
CAMERA_CHAIN = (((0.03, -0.0122, 0.0182), (0.0, 0.0, 0.0)),        # camera_joint
                ((0.0106, 0.0175, 0.0125), (0.0, 0.0, 0.0)),       # camera_link_joint
                ((0.0, 0.015, 0.0), (0.0, 0.0, 0.0)),             # camera_color_joint
                ((0.0, 0.0, 0.0), (-math.pi / 2, 0.0, -math.pi / 2)))  # camera_color_optical_joint


def _rpy(r: float, p: float, y: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    return Rz @ Ry @ Rx


def _origin(xyz: tuple[float, float, float], rpy: tuple[float, float, float]) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = _rpy(*rpy)
    T[:3, 3] = xyz
    return T


def _rot_z(a: float) -> np.ndarray:
    T = np.eye(4)
    T[:2, :2] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
    return T


_T_BASE_HEAD = _origin(*MAST) @ _origin(*HEAD)
_T_TILT_CAM = np.eye(4)
for _xyz, _rpy_ in CAMERA_CHAIN:
    _T_TILT_CAM = _T_TILT_CAM @ _origin(_xyz, _rpy_)


def head_camera_pose(pan: float, tilt: float) -> np.ndarray:
    """4x4 pose of the colour camera's optical frame in base_link for the given head joints (rad)."""
    return (_T_BASE_HEAD @ _origin(*HEAD_PAN) @ _rot_z(pan) @ _origin(*HEAD_TILT) @ _rot_z(tilt)
            @ _T_TILT_CAM)


HEAD_PAN_XYZ: tuple[float, float, float] = tuple((_T_BASE_HEAD @ _origin(*HEAD_PAN))[:3, 3])  # type: ignore[assignment]


def odometry_pose(x: float, y: float, theta: float) -> np.ndarray:
    """Pose of the current base_link in the odometry frame fixed at the episode's reset."""
    T = _rot_z(theta)
    T[0, 3], T[1, 3] = x, y
    return T


def gaze_angles(point: np.ndarray, iters: int = 30) -> tuple[float, float]:
    """(pan, tilt) that put a base-frame point on the optical axis (Gauss-Newton on the chain;
    the pan/tilt axes are offset from the optical centre, so no closed form is exact)."""
    p = np.asarray(point, dtype=float)[:3]

    def err(qq: np.ndarray) -> np.ndarray:
        T = head_camera_pose(qq[0], qq[1])
        v = np.linalg.inv(T) @ np.append(p, 1.0)
        return np.array([v[0] / max(v[2], 1e-6), v[1] / max(v[2], 1e-6)])

    # start from the best of a coarse grid so a wrong-branch start cannot trap the solver
    grid = [(a, b) for a in np.linspace(-3.9, 1.5, 28) for b in np.linspace(-1.53, 0.79, 12)]

    def cost(qq: tuple[float, float]) -> float:
        T = head_camera_pose(*qq)
        v = np.linalg.inv(T) @ np.append(p, 1.0)
        return float("inf") if v[2] <= 0 else float(np.hypot(v[0], v[1]) / v[2])
    q = np.array(min(grid, key=cost))
    for _ in range(iters):
        e = err(q)
        if np.linalg.norm(e) < 1e-6:
            break
        J = np.zeros((2, 2))
        for i in range(2):
            dq = np.zeros(2)
            dq[i] = 1e-5
            J[:, i] = (err(q + dq) - e) / 1e-5
        q = q - np.linalg.lstsq(J, e, rcond=None)[0]
        q = np.clip(q, [-3.9, -1.53], [1.5, 0.79])
    return float(q[0]), float(q[1])


def _rs() -> Any:
    try:
        import pyrealsense2 as rs  # type: ignore[import-not-found]
    except ImportError as exc:
        raise BackendUnavailable(
            f"pyrealsense2 is not importable ({exc}): pip install 'bt_grasp[realsense]' "
            "(and apt-get install libusb-1.0-0)") from None
    return rs


class RealSenseHeadCamera:
    """Aligned RGB-D frames from the head D435 (or a .bag recording) as (rgb, depth_m, K, None).

    Depth is aligned to the colour stream so K is the colour intrinsics and depth is in metres
    (z16 * the device's depth scale; 0 where unknown), matching Observation's contract.
    """

    def __init__(self, width: int = 640, height: int = 480, fps: int = 15, serial: str | None = None,
                 bag: str | Path | None = None, repeat: bool = True) -> None:
        rs = _rs()
        self.rs = rs
        self._pending: Any = None
        self.playback: Any = None
        attempts = 4 if bag is not None else 1
        for attempt in range(attempts):
            self.pipeline = rs.pipeline()
            cfg = rs.config()
            if bag is not None:
                cfg.enable_device_from_file(str(bag), repeat_playback=repeat)
            else:
                if serial:
                    cfg.enable_device(serial)
                cfg.enable_stream(rs.stream.depth, width, height, rs.format.z16, fps)
                cfg.enable_stream(rs.stream.color, width, height, rs.format.rgb8, fps)
            try:
                profile = self.pipeline.start(cfg)
            except RuntimeError as exc:
                raise BackendUnavailable(f"RealSense camera unavailable: {exc}") from None
            dev = profile.get_device()
            if bag is None:
                break
            self.playback = dev.as_playback()
            self.playback.set_real_time(False)  # deliver every recorded frame, as fast as read
            # librealsense's player sometimes never delivers a synchronised first frameset
            # (seen on 2.59 with short recordings, ~1 run in 4): probe, and reopen if it stalls
            ok, frames = self.pipeline.try_wait_for_frames(1500)
            if ok:
                self._pending = frames
                break
            self.pipeline.stop()
            if attempt == attempts - 1:
                raise BackendUnavailable(f"RealSense recording {bag} gave no frames")
        depth_sensor = dev.first_depth_sensor()
        self.depth_scale = float(depth_sensor.get_depth_scale())
        self.align = rs.align(rs.stream.color)

    def read(self, timeout_ms: int = 5000) -> tuple[np.ndarray, np.ndarray, np.ndarray, None]:
        """One aligned frame: (rgb uint8 HxWx3, depth float32 metres, K 3x3, None)."""
        frames, self._pending = self._pending, None
        if frames is None:
            ok, frames = self.pipeline.try_wait_for_frames(timeout_ms)
            if not ok:
                raise BackendUnavailable(f"RealSense gave no frames within {timeout_ms} ms")
        frames = self.align.process(frames)
        color, depth = frames.get_color_frame(), frames.get_depth_frame()
        intr = color.profile.as_video_stream_profile().get_intrinsics()
        K = np.array([[intr.fx, 0.0, intr.ppx], [0.0, intr.fy, intr.ppy], [0.0, 0.0, 1.0]])
        rgb = np.asanyarray(color.get_data()).copy()
        if rgb.ndim == 3 and color.profile.format() == self.rs.format.bgr8:
            rgb = rgb[:, :, ::-1].copy()
        depth_m = (np.asanyarray(depth.get_data()).astype(np.float32) * self.depth_scale)
        return rgb.astype(np.uint8), depth_m, K, None

    def close(self) -> None:
        try:
            self.pipeline.stop()
        except RuntimeError:
            pass


def write_synthetic_bag(path: str | Path, rgb: np.ndarray, depth_m: np.ndarray, K: np.ndarray,
                        n_frames: int = 3, fps: int = 30, depth_units: float = 0.001) -> Path:
    """Record `n_frames` copies of one RGB-D frame with pyrealsense2's software device.

    Returns the file written: `path` as given (.bag, librealsense < 2.58) or with a .db3 suffix
    (newer librealsense records rosbag2 files and refuses other names). Used by the tests to exercise RealSenseHeadCamera end to end without a camera. Both streams
    share K (as if already aligned).
    """
    rs = _rs()
    h, w = depth_m.shape
    intr = rs.intrinsics()
    intr.width, intr.height = w, h
    intr.fx, intr.fy, intr.ppx, intr.ppy = float(K[0, 0]), float(K[1, 1]), float(K[0, 2]), float(K[1, 2])
    intr.model = rs.distortion.none
    intr.coeffs = [0.0] * 5
    dev = rs.software_device()
    ds, cs = dev.add_sensor("Depth"), dev.add_sensor("Color")
    vs_d = rs.video_stream()
    vs_d.type, vs_d.index, vs_d.uid = rs.stream.depth, 0, 0
    vs_d.width, vs_d.height, vs_d.fps, vs_d.bpp, vs_d.fmt, vs_d.intrinsics = w, h, fps, 2, rs.format.z16, intr
    vs_c = rs.video_stream()
    vs_c.type, vs_c.index, vs_c.uid = rs.stream.color, 0, 1
    vs_c.width, vs_c.height, vs_c.fps, vs_c.bpp, vs_c.fmt, vs_c.intrinsics = w, h, fps, 3, rs.format.rgb8, intr
    prof_d = ds.add_video_stream(vs_d)
    prof_c = cs.add_video_stream(vs_c)
    ds.add_read_only_option(rs.option.depth_units, depth_units)
    path = Path(path)
    try:
        rec = rs.recorder(str(path), dev)
    except RuntimeError as exc:
        if ".db3" not in str(exc):
            raise
        path = path.with_suffix(".db3")  # librealsense >= 2.58 records rosbag2 (sqlite) files
        rec = rs.recorder(str(path), dev)
    ds.open(prof_d)
    cs.open(prof_c)
    sink = rs.frame_queue(2 * n_frames + 4)
    ds.start(sink)
    cs.start(sink)
    z16 = np.ascontiguousarray(np.round(depth_m / depth_units).astype(np.uint16))
    rgb8 = np.ascontiguousarray(rgb.astype(np.uint8))
    for i in range(n_frames):
        for sensor, prof, data, bpp in ((ds, prof_d, z16, 2), (cs, prof_c, rgb8, 3)):
            f = rs.software_video_frame()
            f.pixels = data
            f.stride = w * bpp
            f.bpp = bpp
            f.timestamp = i * 1000.0 / fps
            f.domain = rs.timestamp_domain.hardware_clock
            f.frame_number = i
            f.profile = prof.as_video_stream_profile()
            sensor.on_video_frame(f)
        time.sleep(0.02)  # the recorder writes asynchronously; let each pair land
    time.sleep(0.2)
    ds.stop()
    cs.stop()
    ds.close()
    cs.close()
    del rec  # the recorder writes the file when it is destroyed
    return path
