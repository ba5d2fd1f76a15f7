"""ROS 2 messages for a run, built and read with `rosbags` (no ROS installed): camera frames as
sensor_msgs/msg/Image, intrinsics as CameraInfo, poses as tf2_msgs/msg/TFMessage, the tree's
status changes as nav2_msgs/msg/BehaviorTreeLog (what Nav2 publishes, so BT panels that read
Nav2's log read ours) and the trace records themselves as std_msgs/msg/String JSON.

Messages use the ROS 2 Humble type store (the oldest supported distribution: its definitions
are the ones the later ones extend), and the nav2 types are declared here in their Humble form,
since rosbags ships no nav2_msgs. Frames follow ROS conventions: the camera's optical frame
(x right, y down, z forward) is the OpenCV one bt_grasp's Observation already uses, depth is
32FC1 metres with 0 where unknown.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.observe.extras import need

BASE_FRAME = "base_link"
CAMERA_FRAME = "camera_color_optical_frame"
TCP_FRAME = "tcp"  # the gripper's grasp point (GraspPose.position), where the arm reports it

TOPICS = {
    "rgb": "/camera/color/image_raw",
    "depth": "/camera/aligned_depth_to_color/image_raw",
    "info": "/camera/color/camera_info",
    "tf": "/tf",
    "bt_log": "/behavior_tree_log",
    "trace": "/bt_grasp/trace",
}

IMAGE = "sensor_msgs/msg/Image"
CAMERA_INFO = "sensor_msgs/msg/CameraInfo"
TF = "tf2_msgs/msg/TFMessage"
STRING = "std_msgs/msg/String"
BT_LOG = "nav2_msgs/msg/BehaviorTreeLog"
BT_CHANGE = "nav2_msgs/msg/BehaviorTreeStatusChange"

_NAV2 = {
    BT_CHANGE: "builtin_interfaces/Time timestamp\nstring node_name\nstring previous_status\n"
               "string current_status\n",
    BT_LOG: "builtin_interfaces/Time timestamp\nBehaviorTreeStatusChange[] event_log\n",
}
STATUS_NAMES = ("IDLE", "RUNNING", "SUCCESS", "FAILURE", "SKIPPED")


def typestore() -> Any:
    """The Humble type store with the nav2 behaviour-tree log types added."""
    typesys = need("rosbags.typesys")
    store = typesys.get_typestore(typesys.Stores.ROS2_HUMBLE)
    types: dict[str, Any] = {}
    for name, text in _NAV2.items():
        types.update(typesys.get_types_from_msg(text, name))
    store.register(types)
    return store


class Builder:
    """Message objects of one type store, stamped with seconds of the run's clock."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.t = store.types

    def stamp(self, seconds: float) -> Any:
        ns = max(0, round(seconds * 1e9))
        return self.t["builtin_interfaces/msg/Time"](sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)

    def header(self, seconds: float, frame: str) -> Any:
        return self.t["std_msgs/msg/Header"](stamp=self.stamp(seconds), frame_id=frame)

    def image(self, array: np.ndarray, seconds: float, frame: str = CAMERA_FRAME) -> Any:
        """rgb8 for HxWx3 uint8, 32FC1 for HxW float32 (metres)."""
        if array.ndim == 3:
            data, encoding = np.ascontiguousarray(array, dtype=np.uint8), "rgb8"
            step = array.shape[1] * 3
        else:
            data, encoding = np.ascontiguousarray(array, dtype="<f4"), "32FC1"
            step = array.shape[1] * 4
        return self.t[IMAGE](header=self.header(seconds, frame), height=array.shape[0],
                             width=array.shape[1], encoding=encoding, is_bigendian=0, step=step,
                             data=np.frombuffer(data.tobytes(), dtype=np.uint8))

    def camera_info(self, K: np.ndarray, height: int, width: int, seconds: float) -> Any:
        """A pinhole camera with no distortion (what bt_grasp's frames are)."""
        k = np.asarray(K, dtype=np.float64).reshape(9)
        p = np.zeros(12)
        p[[0, 1, 2, 4, 5, 6, 10]] = [k[0], k[1], k[2], k[3], k[4], k[5], 1.0]
        roi = self.t["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0,
                                                        do_rectify=False)
        return self.t[CAMERA_INFO](header=self.header(seconds, CAMERA_FRAME), height=height, width=width,
                                   distortion_model="plumb_bob", d=np.zeros(5), k=k,
                                   r=np.eye(3).reshape(9), p=p, binning_x=0, binning_y=0, roi=roi)

    def transform(self, T: np.ndarray, seconds: float, child: str, parent: str = BASE_FRAME) -> Any:
        """One TransformStamped: the pose of `child` in `parent` (a 4x4 matrix)."""
        from scipy.spatial.transform import Rotation

        x, y, z, w = Rotation.from_matrix(np.asarray(T)[:3, :3]).as_quat()
        tr = np.asarray(T, dtype=float)[:3, 3]
        g = "geometry_msgs/msg/"
        return self.t[g + "TransformStamped"](
            header=self.header(seconds, parent), child_frame_id=child,
            transform=self.t[g + "Transform"](translation=self.t[g + "Vector3"](x=tr[0], y=tr[1], z=tr[2]),
                                              rotation=self.t[g + "Quaternion"](x=x, y=y, z=z, w=w)))

    def tf(self, transforms: list[Any]) -> Any:
        return self.t[TF](transforms=transforms)

    def bt_log(self, changes: list[tuple[str, int, int]], seconds: float) -> Any:
        """Nav2's log of one tick: (node name, new status, previous status) per change."""
        ev = self.t[BT_CHANGE]
        return self.t[BT_LOG](timestamp=self.stamp(seconds), event_log=[
            ev(timestamp=self.stamp(seconds), node_name=name, previous_status=STATUS_NAMES[prev],
               current_status=STATUS_NAMES[new]) for name, new, prev in changes])

    def string(self, text: str) -> Any:
        return self.t[STRING](data=text)


def image_array(msg: Any) -> np.ndarray:
    """An Image message's pixels: HxWx3 uint8 (rgb8, bgr8 reordered) or HxW float32 (32FC1, or
    16UC1 millimetres as metres)."""
    h, w, enc = int(msg.height), int(msg.width), str(msg.encoding)
    raw = np.asarray(msg.data, dtype=np.uint8).reshape(h, int(msg.step))
    if enc in ("rgb8", "bgr8"):
        rgb = raw[:, :w * 3].reshape(h, w, 3)
        return np.ascontiguousarray(rgb[:, :, ::-1] if enc == "bgr8" else rgb)
    if enc == "32FC1":
        order = ">f4" if msg.is_bigendian else "<f4"
        return raw[:, :w * 4].copy().view(order).reshape(h, w).astype(np.float32)
    if enc in ("16UC1", "mono16"):
        order = ">u2" if msg.is_bigendian else "<u2"
        return (raw[:, :w * 2].copy().view(order).reshape(h, w) / 1000.0).astype(np.float32)
    raise ValueError(f"image encoding '{enc}' (use rgb8/bgr8 for colour, 32FC1 or 16UC1 for depth)")


def transform_matrix(msg: Any) -> np.ndarray:
    """A TransformStamped as a 4x4 matrix."""
    from scipy.spatial.transform import Rotation

    r, t = msg.transform.rotation, msg.transform.translation
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat([r.x, r.y, r.z, r.w]).as_matrix()
    T[:3, 3] = [t.x, t.y, t.z]
    return T


def seconds(stamp: Any) -> float:
    return int(stamp.sec) + int(stamp.nanosec) * 1e-9
