"""RGB-D frames read back from a ROS 2 bag as bt_grasp Observations, for `bt-grasp perceive`.

A frame is an rgb Image and the depth Image with the same header stamp; its intrinsics are the
latest CameraInfo at or before it, its camera pose the latest transform from `base_link` to the
Image's frame_id on /tf or /tf_static at or before it (the geometric perceiver finds the table
in the base frame, so a frame without its camera pose cannot be used). Bad input is a UserError naming the bag and the fix.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Observation
from bt_grasp.errors import UserError, did_you_mean
from bt_grasp.observe.extras import need
from bt_grasp.observe.rosbag_msgs import BASE_FRAME, image_array, seconds, transform_matrix, typestore


def open_folder(path: str | Path) -> Path:
    """The bag folder for `path`: a rosbag2 folder, its storage file, or the `run.db3` name a
    bag was recorded under (the folder `run/`)."""
    p = Path(path)
    candidates = [p] if p.is_dir() else [p.parent] if p.is_file() else []
    if p.suffix.lower() == ".db3":
        candidates.append(p.with_suffix(""))
    for folder in candidates:
        if (folder / "metadata.yaml").is_file():
            return folder
    if p.exists():
        raise UserError("not a ROS 2 bag: no metadata.yaml beside it (give the bag's folder, "
                        "as `ros2 bag record` or `bt-grasp run --record run.db3` wrote it)", file=str(path))
    raise UserError("no such bag (give a rosbag2 folder or its .db3 file)", file=str(path))


class Bag:
    """An open bag's topics and their messages, deserialized on demand."""

    def __init__(self, path: str | Path) -> None:
        self.display = str(path)
        rosbag2 = need("rosbags.rosbag2")
        self.store = typestore()
        try:
            self.reader = rosbag2.Reader(open_folder(path))
            self.reader.open()
        except rosbag2.ReaderError as exc:
            raise UserError(f"cannot read the bag: {exc} (record it again)", file=self.display) from None
        self.types = {c.topic: c.msgtype for c in self.reader.connections}

    def close(self) -> None:
        self.reader.close()

    def topic(self, name: str, wanted: tuple[str, ...], option: str) -> str:
        """`name` if the bag has it with one of the `wanted` types (UserError otherwise)."""
        if name not in self.types:
            if not any(self.types[t] in wanted for t in self.types):
                raise UserError(f"no {' or '.join(wanted)} topic in this bag, so no {name} (record "
                                "the camera: --record-images)", file=self.display)
            have = ", ".join(sorted(t for t in self.types if self.types[t] in wanted))
            raise UserError(f"no topic {name}{did_you_mean(name, self.types)} (give {option} one of: "
                            f"{have})", file=self.display)
        if self.types[name] not in wanted:
            raise UserError(f"topic {name} holds {self.types[name]}, not {' or '.join(wanted)} "
                            f"(give {option} another topic)", file=self.display)
        return name

    def of_type(self, msgtype: str) -> list[str]:
        return sorted(t for t, m in self.types.items() if m == msgtype)

    def messages(self, topics: list[str]) -> Iterator[tuple[str, int, Any]]:
        conns = [c for c in self.reader.connections if c.topic in topics]
        for conn, ns, raw in self.reader.messages(connections=conns):
            yield conn.topic, ns, self.store.deserialize_cdr(raw, conn.msgtype)


class _Latest:
    """Values by time; the latest at or before a time."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.values: list[Any] = []

    def add(self, t: float, value: Any) -> None:
        i = bisect.bisect_right(self.times, t)
        self.times.insert(i, t)
        self.values.insert(i, value)

    def at(self, t: float) -> Any:
        i = bisect.bisect_right(self.times, t + 1e-9)
        return self.values[i - 1] if i else None


def read_frames(path: str | Path, rgb: str, depth: str, info: str | None = None) -> list[Observation]:
    """The bag's RGB-D frames, in time order (see the module docstring)."""
    bag = Bag(path)
    try:
        image = ("sensor_msgs/msg/Image",)
        bag.topic(rgb, image, "--topic-rgb")
        bag.topic(depth, image, "--topic-depth")
        if info is None:
            infos = bag.of_type("sensor_msgs/msg/CameraInfo")
            if len(infos) != 1:
                raise UserError(f"{len(infos)} CameraInfo topics ({', '.join(infos) or 'none'}); "
                                "give the camera's with --topic-info", file=bag.display)
            info = infos[0]
        bag.topic(info, ("sensor_msgs/msg/CameraInfo",), "--topic-info")
        tfs = bag.of_type("tf2_msgs/msg/TFMessage")
        colour: dict[float, Any] = {}
        ranges: dict[float, Any] = {}
        intrinsics = _Latest()
        poses: dict[str, _Latest] = {}  # child frame -> its 4x4 poses in the base frame
        for topic, _, msg in bag.messages([rgb, depth, info, *tfs]):
            if topic in tfs:
                for tr in msg.transforms:
                    if tr.header.frame_id.lstrip("/") == BASE_FRAME:
                        poses.setdefault(tr.child_frame_id.lstrip("/"), _Latest()).add(
                            seconds(tr.header.stamp), transform_matrix(tr))
            elif topic == info:
                intrinsics.add(seconds(msg.header.stamp), np.asarray(msg.k, dtype=np.float64).reshape(3, 3))
            else:
                (colour if topic == rgb else ranges)[seconds(msg.header.stamp)] = msg
        frames = []
        for t in sorted(set(colour) & set(ranges)):
            frames.append(_frame(bag.display, t, colour[t], ranges[t], intrinsics, poses))
        if not frames:
            raise UserError(f"no frame with both {rgb} and {depth} at one stamp ({len(colour)} colour, "
                            f"{len(ranges)} depth images; record with images)", file=bag.display)
        return frames
    finally:
        bag.close()


def _frame(display: str, t: float, rgb_msg: Any, depth_msg: Any, intrinsics: _Latest,
           poses: dict[str, _Latest]) -> Observation:
    try:
        rgb, depth = image_array(rgb_msg), image_array(depth_msg)
    except ValueError as exc:
        raise UserError(f"frame at {t:.3f} s: {exc}", file=display) from None
    if rgb.ndim != 3 or depth.ndim != 2 or rgb.shape[:2] != depth.shape:
        raise UserError(f"frame at {t:.3f} s: colour {rgb.shape} and depth {depth.shape} do not match "
                        "(give a colour topic and the depth aligned to it)", file=display)
    K = intrinsics.at(t)
    if K is None:
        raise UserError(f"frame at {t:.3f} s: no CameraInfo at or before it (record the camera_info "
                        "topic with the images)", file=display)
    frame_id = str(rgb_msg.header.frame_id).lstrip("/")
    T = poses[frame_id].at(t) if frame_id in poses else None
    if T is None:
        raise UserError(f"frame at {t:.3f} s: no transform {BASE_FRAME} -> {frame_id} on /tf at or "
                        "before it (record the camera pose)", file=display)
    return Observation(rgb=rgb, depth=depth, K=K, T_cam_base=T, clock=t)
