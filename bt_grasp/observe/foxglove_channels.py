"""The channels of a run in Foxglove, and what is published on each: one publisher for an MCAP
file, a live WebSocket, or both (they are sinks of one foxglove.Context).

Why one publisher: the recording during a run, the conversion of a trace and the live view must
offer the same topics with the same schemas, so one Foxglove layout (docs/foxglove-layout.json)
opens all three. Log times are the episode's logical clock in nanoseconds, never decreasing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import foxglove
from foxglove.channels import (
    CameraCalibrationChannel,
    FrameTransformsChannel,
    LogChannel,
    PointCloudChannel,
    PoseInFrameChannel,
    RawImageChannel,
)
from foxglove.messages import FrameTransform, FrameTransforms

from bt_grasp.json_encoding import finite
from bt_grasp.observe import foxglove_messages as fm
from bt_grasp.structure import iter_structure
from bt_grasp.trace_reader import clock_of

# topic -> what it carries (docs/observability.md lists the same)
TOPICS = {
    "/bt_grasp/run": "the trace's header and final records (JSON)",
    "/bt_grasp/tick": "one message per tick: the trace's tick record plus status per node (JSON)",
    "/bt_grasp/events": "one foxglove.Log per primitive attempt (OutcomeEvent)",
    "/behavior_tree/xml": "the tree as BehaviorTree.CPP v4 XML, once (std_msgs/msg/String as JSON)",
    "/behavior_tree_log": "nav2_msgs/msg/BehaviorTreeLog as JSON: the status changes of each tick",
    "/grasp/pose": "foxglove.PoseInFrame: the pose of each grasp attempt",
    "/tf": "foxglove.FrameTransforms: base -> camera_optical, base -> gripper",
    "/perception/points": "foxglove.PointCloud: the located object's points (base frame)",
    "/camera/calibration": "foxglove.CameraCalibration of each frame perception captured",
    "/camera/rgb": "foxglove.RawImage rgb8 (with --record-images)",
    "/camera/depth": "foxglove.RawImage 16UC1 millimetres (with --record-images)",
    "/perception/mask": "foxglove.RawImage mono8: the located object's mask (with --record-images)",
}

_STATUS = {"type": "string", "enum": ["RUNNING", "SUCCESS", "FAILURE", "INVALID"]}
TICK_SCHEMA = {
    "type": "object",
    "title": "bt_grasp tick",
    "properties": {
        "tick": {"type": "integer"}, "clock": {"type": "number", "description": "logical seconds"},
        "visited": {"type": "array", "description": "[node id, status] in tick order",
                    "items": {"type": "array", "items": {"type": "string"}}},
        "status": {"type": "object", "description": "node id -> status this tick",
                   "additionalProperties": _STATUS},
        "blackboard": {"type": "object"}, "events": {"type": "array", "items": {"type": "object"}},
        "ledger": {"type": "object"},
    },
}
RUN_SCHEMA = {"type": "object", "title": "bt_grasp header or final record",
              "properties": {"type": {"type": "string", "enum": ["header", "final"]}}}
STRING_SCHEMA = {"type": "object", "properties": {"data": {"type": "string"}}}
_TIME = {"type": "object", "properties": {"sec": {"type": "integer"}, "nanosec": {"type": "integer"}}}
BT_LOG_SCHEMA = {
    "type": "object",
    "properties": {
        "timestamp": _TIME,
        "event_log": {"type": "array", "items": {"type": "object", "properties": {
            "timestamp": _TIME, "node_name": {"type": "string"}, "uid": {"type": "integer"},
            "previous_status": {"type": "string"}, "current_status": {"type": "string"}}}},
    },
}


def _json_channel(topic: str, name: str, schema: dict[str, Any], context: foxglove.Context) -> foxglove.Channel:
    """A JSON channel whose schema has a stable name (the SDK would name it by a hash)."""
    return foxglove.Channel(topic, message_encoding="json", context=context,
                            schema=foxglove.Schema(name=name, encoding="jsonschema",
                                                   data=json.dumps(schema).encode()))


def ros_time(clock: float) -> dict[str, int]:
    t = fm.ns(clock)
    return {"sec": t // 1_000_000_000, "nanosec": t % 1_000_000_000}


class FoxglovePublisher:
    """Publishes a run's records and sensor data on the TOPICS of `context`."""

    def __init__(self, context: foxglove.Context) -> None:
        self.run = _json_channel("/bt_grasp/run", "bt_grasp.RunRecord", RUN_SCHEMA, context)
        self.tick = _json_channel("/bt_grasp/tick", "bt_grasp.Tick", TICK_SCHEMA, context)
        self.events = LogChannel("/bt_grasp/events", context=context)
        self.tree_xml = _json_channel("/behavior_tree/xml", "std_msgs/msg/String", STRING_SCHEMA, context)
        self.bt_log = _json_channel("/behavior_tree_log", "nav2_msgs/msg/BehaviorTreeLog", BT_LOG_SCHEMA,
                                    context)
        self.grasp = PoseInFrameChannel("/grasp/pose", context=context)
        self.tf = FrameTransformsChannel("/tf", context=context)
        self.points = PointCloudChannel("/perception/points", context=context)
        self.calibration = CameraCalibrationChannel("/camera/calibration", context=context)
        self.rgb = RawImageChannel("/camera/rgb", context=context)
        self.depth = RawImageChannel("/camera/depth", context=context)
        self.mask = RawImageChannel("/perception/mask", context=context)
        self._last_ns = 0
        self._status: dict[str, str] = {}
        self._uid: dict[str, int] = {}
        self.xml: str | None = None

    def at(self, clock: float) -> int:
        """The log time of `clock`: its nanoseconds, never before the previous message's."""
        self._last_ns = max(self._last_ns, fm.ns(clock))
        return self._last_ns

    # -- records (a run's observer and a trace's conversion both call these) -------------------

    def header(self, header: dict[str, Any], xml: str | None) -> None:
        """The run begins: its header, the tree's XML, every node IDLE. UIDs are the nodes'
        pre-order positions in the header's structure, 1..N, as BT.CPP numbers them."""
        t = self.at(0.0)
        self.run.log(finite(header), log_time=t)
        self._uid = {node["id"]: i for i, (_, _, node) in enumerate(iter_structure(header["structure"]), 1)}
        self._status = dict.fromkeys(self._uid, "IDLE")
        self.xml = xml
        self.publish_xml()

    def publish_xml(self) -> None:
        """The tree's XML again (a live viewer that subscribed after the start needs it)."""
        if self.xml is not None:
            self.tree_xml.log({"data": self.xml}, log_time=self._last_ns)

    def tick_record(self, record: dict[str, Any]) -> None:
        """One tick: its record (with status per node), its status changes, its events and the
        grasp poses they name."""
        clock = clock_of(record, self._last_ns / 1e9)
        record = finite(record)
        t = self.at(clock)
        visited = [(str(n), str(s)) for n, s in record.get("visited", [])]
        self.tick.log({**record, "status": dict(visited)}, log_time=t)
        changes = []
        for node, raw in visited:
            status = "IDLE" if raw == "INVALID" else raw  # py_trees' INVALID is BT.CPP's IDLE
            before = self._status.get(node, "IDLE")
            if before != status:
                changes.append({"timestamp": ros_time(clock), "node_name": node, "uid": self._uid.get(node, 0),
                                "previous_status": before, "current_status": status})
                self._status[node] = status
        if changes:
            self.bt_log.log({"timestamp": ros_time(clock), "event_log": changes}, log_time=t)
        for event in record.get("events") or []:
            self.events.log(fm.event_log(clock, event), log_time=t)
            pose = fm.grasp_pose(clock, (event.get("metadata") or {}).get("pose"))
            if pose is not None:
                self.grasp.log(pose, log_time=t)

    def final(self, final: dict[str, Any]) -> None:
        self.run.log(finite(final), log_time=self.at(clock_of(final, self._last_ns / 1e9)))

    # -- what only a run has (its context): frames, points, poses of the robot ----------------

    def transforms(self, clock: float, transforms: Iterable[FrameTransform]) -> None:
        items = list(transforms)
        if items:
            self.tf.log(FrameTransforms(transforms=items), log_time=self.at(clock))

    def frame(self, clock: float, obs: Any, images: bool) -> None:
        """A frame perception captured: its calibration and camera pose; its pixels if `images`."""
        t = self.at(clock)
        h, w = obs.depth.shape[:2]
        self.calibration.log(fm.calibration(clock, obs.K, w, h), log_time=t)
        self.transforms(clock, [fm.camera_transform(clock, obs.T_cam_base)])
        if images:
            self.rgb.log(fm.rgb_image(clock, obs.rgb), log_time=t)
            self.depth.log(fm.depth_image(clock, obs.depth), log_time=t)

    def located(self, clock: float, located: Any, images: bool) -> None:
        """A located object: its points, and its mask if `images`."""
        t = self.at(clock)
        self.points.log(fm.point_cloud(clock, located.points_base), log_time=t)
        if images and getattr(located, "mask", None) is not None:
            self.mask.log(fm.mask_image(clock, located.mask), log_time=t)
