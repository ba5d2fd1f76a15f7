"""Foxglove MCAP files: a run recorded with --record (and --record-images) and a trace converted
with `trace convert -o run.mcap` hold the tree, one tick message per trace tick, one Log per event,
the grasp poses, and (recorded only) the frames perception captured, on Foxglove's well-known
schemas, with log times from the episode's logical clock."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from helpers import ROOT

pytest.importorskip("foxglove")
mcap_reader = pytest.importorskip("mcap.reader")

from bt_grasp.cli import main  # noqa: E402
from bt_grasp.episode import run_episode  # noqa: E402
from bt_grasp.observe.mcap_record import McapRecorder  # noqa: E402

IMAGE_SIZE = 128
SCHEMAS = {  # topic -> (schema name, message encoding)
    "/bt_grasp/run": ("bt_grasp.RunRecord", "json"),
    "/bt_grasp/tick": ("bt_grasp.Tick", "json"),
    "/bt_grasp/events": ("foxglove.Log", "protobuf"),
    "/behavior_tree/xml": ("std_msgs/msg/String", "json"),
    "/behavior_tree_log": ("nav2_msgs/msg/BehaviorTreeLog", "json"),
    "/grasp/pose": ("foxglove.PoseInFrame", "protobuf"),
    "/tf": ("foxglove.FrameTransforms", "protobuf"),
    "/perception/points": ("foxglove.PointCloud", "protobuf"),
    "/camera/calibration": ("foxglove.CameraCalibration", "protobuf"),
    "/camera/rgb": ("foxglove.RawImage", "protobuf"),
    "/camera/depth": ("foxglove.RawImage", "protobuf"),
    "/perception/mask": ("foxglove.RawImage", "protobuf"),
}
FROM_THE_RUN_ONLY = {"/tf", "/perception/points", "/camera/calibration", "/camera/rgb", "/camera/depth",
                     "/perception/mask"}


class Mcap:
    """An MCAP file read back: schema and encoding per topic, messages per topic in file order."""

    def __init__(self, path) -> None:
        with open(path, "rb") as fh:
            reader = mcap_reader.make_reader(fh)
            summary = reader.get_summary()
            self.schemas = {c.topic: (summary.schemas[c.schema_id].name, c.message_encoding)
                            for c in summary.channels.values()}
            self.counts = {summary.channels[cid].topic: n
                           for cid, n in summary.statistics.channel_message_counts.items()}
            self.order = []  # (topic, log_time, data) in the order written
            for _, channel, message in reader.iter_messages(log_time_order=False):
                self.order.append((channel.topic, message.log_time, message.data))

    def data(self, topic: str) -> list[bytes]:
        return [d for t, _, d in self.order if t == topic]

    def json(self, topic: str) -> list[dict]:
        return [json.loads(d) for d in self.data(topic)]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One short simulated clutter episode with --trace and --record --record-images."""
    out = tmp_path_factory.mktemp("mcap")
    trace, path = out / "run.jsonl", out / "run.mcap"
    result = run_episode(str(ROOT / "trees" / "clutter.yaml"), image_size=IMAGE_SIZE, trace=str(trace),
                         observers=[McapRecorder(path, images=True)])
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    ticks = [r for r in lines if r["type"] == "tick"]
    return result, ticks, Mcap(path), trace, out


def test_every_topic_has_foxglove_s_well_known_schema(recorded):
    _, _, mcap, _, _ = recorded
    assert mcap.schemas == SCHEMAS


def test_one_tick_message_per_trace_tick_at_the_logical_clock(recorded):
    result, ticks, mcap, _, _ = recorded
    got = mcap.json("/bt_grasp/tick")
    assert len(got) == len(ticks) == result.ticks == mcap.counts["/bt_grasp/tick"]
    assert [g["tick"] for g in got] == [t["tick"] for t in ticks]
    assert all(g["visited"] == t["visited"] and g["status"] == dict(t["visited"]) for g, t in zip(got, ticks, strict=True))
    times = [lt for topic, lt, _ in mcap.order if topic == "/bt_grasp/tick"]
    assert times == [round(t["clock"] * 1e9) for t in ticks]


def test_log_times_never_go_back_across_the_whole_file(recorded):
    _, _, mcap, _, _ = recorded
    times = [lt for _, lt, _ in mcap.order]
    assert times == sorted(times) and times[0] == 0


def test_one_log_per_event_named_by_its_node_and_each_grasp_pose(recorded):
    result, ticks, mcap, _, _ = recorded
    events = [e for t in ticks for e in t["events"]]
    assert len(events) == len(result.events) > 0
    logs = mcap.data("/bt_grasp/events")
    assert len(logs) == len(events)
    for log, event in zip(logs, events, strict=True):  # protobuf strings are their UTF-8 bytes
        assert event["node"].encode() in log and event["primitive"].encode() in log
    poses = [e["metadata"]["pose"] for e in events if "pose" in e["metadata"]]
    assert poses and len(mcap.data("/grasp/pose")) == len(poses)


def test_status_changes_replayed_give_each_tick_s_statuses(recorded):
    _, ticks, mcap, _, _ = recorded
    now: dict[str, str] = {}
    for message in mcap.json("/behavior_tree_log"):
        for change in message["event_log"]:
            assert change["previous_status"] == now.get(change["node_name"], "IDLE")
            assert change["uid"] >= 1 and set(change["timestamp"]) == {"sec", "nanosec"}
            now[change["node_name"]] = change["current_status"]
    last = {node: status for t in ticks for node, status in t["visited"]}
    assert now == last


def test_the_tree_is_on_a_topic_once_as_btcpp_xml_naming_every_ticked_node(recorded):
    _, ticks, mcap, _, _ = recorded
    (xml,) = mcap.json("/behavior_tree/xml")
    root = ET.fromstring(xml["data"].split("?>", 2)[-1])
    names = {el.get("name") for el in root.iter() if el.get("name")}
    assert root.get("BTCPP_format") == "4"
    assert {node for t in ticks for node, _ in t["visited"]} <= names


def test_frames_perception_captured_come_with_calibration_and_the_camera_frame(recorded):
    _, _, mcap, _, _ = recorded
    frames = mcap.counts["/camera/rgb"]
    assert frames >= 1 and mcap.counts["/camera/depth"] == mcap.counts["/camera/calibration"] == frames
    rgb = mcap.data("/camera/rgb")[0]
    assert b"rgb8" in rgb and len(rgb) > IMAGE_SIZE * IMAGE_SIZE * 3
    assert b"16UC1" in mcap.data("/camera/depth")[0]
    tf = b"".join(mcap.data("/tf"))
    assert b"camera_optical" in tf and b"gripper" in tf
    points = mcap.data("/perception/points")
    assert points and mcap.counts["/perception/mask"] == len(points)


def test_a_converted_trace_has_the_recording_s_records_and_no_sensor_data(recorded, capsys):
    _, _, mcap, trace, out = recorded
    converted = out / "converted.mcap"
    assert main(["trace", "convert", str(trace), "-o", str(converted)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {converted}"
    again = Mcap(converted)
    assert again.schemas == {t: s for t, s in SCHEMAS.items() if t not in FROM_THE_RUN_ONLY}
    for topic in ("/bt_grasp/tick", "/behavior_tree_log", "/bt_grasp/events", "/grasp/pose", "/behavior_tree/xml"):
        assert again.data(topic) == mcap.data(topic), topic
    assert [m["type"] for m in again.json("/bt_grasp/run")] == ["header", "final"]


def test_images_are_recorded_only_when_asked(tmp_path):
    path = tmp_path / "run.mcap"
    tree = tmp_path / "open.yaml"
    tree.write_text("tree: open\nroot:\n  sequence:\n    children:\n      - survey_scene: {id: look}\n"
                    "      - finalize: {reason: looked}\n")
    assert main(["run", str(tree), "--image-size", "64", "--record", str(path)]) == 0
    counts = Mcap(path).counts
    assert counts["/camera/calibration"] == 1 and counts["/bt_grasp/tick"] >= 1
    assert counts.get("/camera/rgb", 0) == counts.get("/camera/depth", 0) == 0


@pytest.mark.parametrize("args, says", [
    (["--record-images"], "--record-images needs --record FILE (.mcap or .db3)"),
    (["--record", "run.txt"], "cannot tell the format of 'run.txt' (name it with one of: .db3, .mcap"),
    (["--port", "9000"], "--port is the port of --live=foxglove"),
    (["--record", "/proc/no/such/run.mcap"], "cannot write the MCAP file"),
])
def test_bad_recording_options_are_one_line_and_exit_2(args, says, capsys):
    assert main(["run", "clutter", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_without_the_extra_the_error_names_it(recorded, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "foxglove", None)
    trace = recorded[3]
    for argv in (["run", "clutter", "--record", str(tmp_path / "run.mcap")],
                 ["trace", "convert", str(trace), "-o", str(tmp_path / "run.mcap")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "pip install 'bt_grasp[foxglove]'" in err and err.count("\n") == 1, argv
    assert not (tmp_path / "run.mcap").exists()


def test_quaternions_of_camera_rotations_are_unit_and_exact():
    from bt_grasp.observe.foxglove_messages import matrix_quaternion

    for rot in (np.diag([1.0, -1.0, -1.0]), np.array([[0, -1, 0], [-1, 0, 0], [0, 0, -1.0]]), np.eye(3)):
        x, y, z, w = matrix_quaternion(rot)
        q = np.array([x, y, z, w])
        assert np.isclose(np.linalg.norm(q), 1.0)
        back = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        assert np.allclose(back, rot)


def test_the_shipped_layout_shows_only_topics_a_recording_has():
    layout = json.loads((ROOT / "docs" / "foxglove-layout.json").read_text())
    todo, panels = [layout["layout"]], []
    while todo:
        node = todo.pop()
        if isinstance(node, str):
            panels.append(node)
        else:
            todo += [node["first"], node["second"]]
    assert sorted(panels) == sorted(layout["configById"])
    assert {p.split("!")[0] for p in panels} >= {"Image", "3D", "RosOut", "RawMessages"}
    named = set(re.findall(r'"(/[a-z_/]+)"', json.dumps(layout["configById"])))
    assert named and named <= set(SCHEMAS)
    # The 3D panel's `transforms` maps frame ids to settings; display settings live in scene.transforms.
    scene = layout["configById"]["3D!scene"]
    assert scene["scene"]["transforms"] == {"showLabel": True, "axisScale": 1}
    assert all(isinstance(v, dict) for v in scene["transforms"].values())


def test_a_run_that_never_starts_leaves_no_recording(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("tree: bad\nroot:\n  sequence: {children: [{no_such_node: {}}]}\n")
    assert main(["run", str(bad), "--record", str(tmp_path / "run.mcap")]) == 2
    assert str(bad) in capsys.readouterr().err
    assert not (tmp_path / "run.mcap").exists()
