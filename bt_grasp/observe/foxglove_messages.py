"""bt_grasp's data as Foxglove's well-known messages (foxglove-sdk), one function per kind.

Why a module of pure conversions: a recording made during a run and one converted from a trace
must show the same things the same way, so both build their messages here and only differ in
where the data comes from (the run's context, or the trace's records). Every timestamp is the
episode's logical clock, so the camera frame, the grasp pose and the tick line up on one timeline.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from foxglove.messages import (
    CameraCalibration,
    FrameTransform,
    Log,
    LogLevel,
    PackedElementField,
    PackedElementFieldNumericType,
    PointCloud,
    Pose,
    PoseInFrame,
    Quaternion,
    RawImage,
    Timestamp,
    Vector3,
)

# Frame names in the recording: the robot base (the 3D panel's display frame), the camera's
# optical frame (OpenCV axes, what RawImage and CameraCalibration mean by frame_id) and the TCP.
BASE, CAMERA, GRIPPER = "base", "camera_optical", "gripper"


def ns(clock: float) -> int:
    """Logical-clock seconds -> integer nanoseconds (MCAP log times)."""
    return int(round(float(clock) * 1e9))


def stamp(clock: float) -> Timestamp:
    t = ns(clock)
    return Timestamp(t // 1_000_000_000, t % 1_000_000_000)


def _vq(position: Any, quat_xyzw: Any) -> tuple[Vector3, Quaternion]:
    p = [float(v) for v in position]
    q = [float(v) for v in quat_xyzw]
    return Vector3(x=p[0], y=p[1], z=p[2]), Quaternion(x=q[0], y=q[1], z=q[2], w=q[3])


def pose(position: Any, quat_xyzw: Any) -> Pose:
    p, q = _vq(position, quat_xyzw)
    return Pose(position=p, orientation=q)


def matrix_quaternion(rot: np.ndarray) -> tuple[float, float, float, float]:
    """A 3x3 rotation matrix -> quaternion (x, y, z, w) (Shepperd's method, numerically safe
    for every rotation, including the camera's 180-degree flips)."""
    m = np.asarray(rot, dtype=float)
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 2.0 * np.sqrt(trace + 1.0)
        return ((m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s)
    i = int(np.argmax(np.diag(m)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * np.sqrt(1.0 + m[i, i] - m[j, j] - m[k, k])
    q = [0.0, 0.0, 0.0, 0.0]
    q[i] = 0.25 * s
    q[j] = (m[j, i] + m[i, j]) / s
    q[k] = (m[k, i] + m[i, k]) / s
    q[3] = (m[k, j] - m[j, k]) / s
    return q[0], q[1], q[2], q[3]


def transform(clock: float, child: str, position: Any, quat_xyzw: Any, parent: str = BASE) -> FrameTransform:
    p, q = _vq(position, quat_xyzw)
    return FrameTransform(timestamp=stamp(clock), parent_frame_id=parent, child_frame_id=child,
                          translation=p, rotation=q)


def camera_transform(clock: float, T_cam_base: np.ndarray) -> FrameTransform:
    """The camera's pose in the base frame (Observation.T_cam_base) as base -> camera_optical."""
    T = np.asarray(T_cam_base, dtype=float)
    return transform(clock, CAMERA, T[:3, 3], matrix_quaternion(T[:3, :3]))


def calibration(clock: float, K: np.ndarray, width: int, height: int) -> CameraCalibration:
    """A pinhole camera without distortion (what the simulated cameras are)."""
    k = np.asarray(K, dtype=float)
    fx, fy, cx, cy = k[0, 0], k[1, 1], k[0, 2], k[1, 2]
    return CameraCalibration(timestamp=stamp(clock), frame_id=CAMERA, width=int(width), height=int(height),
                             distortion_model="plumb_bob", D=[0.0] * 5, K=[float(v) for v in k.ravel()],
                             R=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                             P=[fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0])


def rgb_image(clock: float, rgb: np.ndarray) -> RawImage:
    img = np.ascontiguousarray(rgb[..., :3], dtype=np.uint8)
    return RawImage(timestamp=stamp(clock), frame_id=CAMERA, width=img.shape[1], height=img.shape[0],
                    encoding="rgb8", step=img.shape[1] * 3, data=img.tobytes())


def depth_image(clock: float, depth: np.ndarray) -> RawImage:
    """Depth in millimetres as 16UC1 (the ROS depth convention): half the bytes of 32FC1 and
    millimetre resolution, enough to look at; 0 stays "unknown"."""
    mm = np.clip(np.nan_to_num(np.asarray(depth, dtype=np.float64) * 1000.0), 0, 65535)
    img = np.ascontiguousarray(np.round(mm).astype("<u2"))
    return RawImage(timestamp=stamp(clock), frame_id=CAMERA, width=img.shape[1], height=img.shape[0],
                    encoding="16UC1", step=img.shape[1] * 2, data=img.tobytes())


def mask_image(clock: float, mask: np.ndarray) -> RawImage:
    """A located object's mask as a mono8 image (255 on the object), aligned with the RGB frame."""
    img = np.ascontiguousarray(np.where(np.asarray(mask, dtype=bool), 255, 0).astype(np.uint8))
    return RawImage(timestamp=stamp(clock), frame_id=CAMERA, width=img.shape[1], height=img.shape[0],
                    encoding="mono8", step=img.shape[1], data=img.tobytes())


def point_cloud(clock: float, points: np.ndarray) -> PointCloud:
    """Nx3 base-frame points as float32 x, y, z."""
    pts = np.asarray(points, dtype="<f4").reshape(-1, 3)
    pts = np.ascontiguousarray(pts[np.isfinite(pts).all(axis=1)])  # no NaN in a recording
    f32 = PackedElementFieldNumericType.Float32
    return PointCloud(timestamp=stamp(clock), frame_id=BASE, pose=pose((0, 0, 0), (0, 0, 0, 1)),
                      point_stride=12, data=pts.tobytes(),
                      fields=[PackedElementField(name=n, offset=4 * i, type=f32) for i, n in enumerate("xyz")])


def grasp_pose(clock: float, values: Any) -> PoseInFrame | None:
    """An event's `pose` metadata ([x, y, z, qx, qy, qz, qw], base frame) -> PoseInFrame."""
    if not isinstance(values, (list, tuple)) or len(values) != 7:
        return None
    try:
        nums = [float(v) for v in values]
    except (TypeError, ValueError):
        return None
    if not all(math.isfinite(v) for v in nums):
        return None
    return PoseInFrame(timestamp=stamp(clock), frame_id=BASE, pose=pose(nums[:3], nums[3:]))


def event_log(clock: float, event: dict[str, Any]) -> Log:
    """One OutcomeEvent (as the trace records it) as a Log line: the node is the Log's name, the
    level warns on anything but a SUCCESS (or an unhappy Watchdog label)."""
    status = str(event.get("exec_status", ""))
    label = event.get("watchdog_label")
    meta = event.get("metadata") or {}
    parts = [f"{event.get('primitive', '?')} {status}"]
    if label is not None:
        conf = event.get("confidence")
        parts.append(f"watchdog {label}" + (f" ({float(conf):.2f})" if isinstance(conf, (int, float)) else ""))
    for key in ("outcome", "fault", "reason", "target"):
        if meta.get(key) not in (None, ""):
            parts.append(f"{key}: {meta[key]}")
    level = LogLevel.Info if status == "SUCCESS" and label in (None, "SUCCESS") else LogLevel.Warning
    if status == "WAIT_CLARIFY":
        level = LogLevel.Error
    return Log(timestamp=stamp(event.get("clock", clock)), level=level, message="; ".join(parts),
               name=str(event.get("node", "")), file=str(event.get("trial_id", "")), line=0)
