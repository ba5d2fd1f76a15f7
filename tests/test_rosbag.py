"""A run recorded as a ROS 2 bag (rosbag2, sqlite3) holds the frames the perception used, their
CameraInfo, the camera and gripper poses on /tf, Nav2's BehaviorTreeLog and the trace; `bt-grasp
perceive` on that bag locates what the run located on the live frames."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import tree

from bt_grasp.cli import main
from bt_grasp.errors import BackendUnavailable, UserError
from bt_grasp.observers import RunObserver

rosbags = pytest.importorskip("rosbags")

from bt_grasp.observe.recorders import recorder_for  # noqa: E402
from bt_grasp.observe.rosbag import RosbagRecorder  # noqa: E402
from bt_grasp.observe.rosbag_msgs import TOPICS  # noqa: E402
from bt_grasp.observe.rosbag_perceive import locate_frames  # noqa: E402
from bt_grasp.observe.rosbag_read import Bag, read_frames  # noqa: E402

# Look, grasp and lift what was found, look again: two different frames.
LOOK = """
    tree: look
    root:
      sequence:
        children:
          - survey_scene: {id: survey}
          - locate_object: {id: locate, target: "{goal.object}"}
          - force_success:
              child:
                sequence:
                  children:
                    - grasp: {id: grasp, target: "{target}"}
                    - lift: {id: lift, height: 0.1}
          - survey_scene: {id: again}
          - locate_object: {id: relocate, target: "{goal.object}"}
          - finalize: {reason: seen}
"""
GOAL = "Grasp the small white can"
RGB, DEPTH = TOPICS["rgb"], TOPICS["depth"]


class LiveFrames(RunObserver):
    """The frames the run's perception used, as the recorder sees them."""

    def __init__(self) -> None:
        self.frames: list = []
        self.ticks = 0

    def started(self, header, ctx) -> None:
        self.ctx = ctx

    def ticked(self, tick) -> None:
        self.ticks += 1
        obs = self.ctx.memory.last_observation
        if obs is not None and (not self.frames or self.frames[-1] is not obs):
            self.frames.append(obs)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A simulated episode (128 px frames) recorded with images, and its live frames."""
    from bt_grasp.episode import run_episode

    bag = tmp_path_factory.mktemp("bag") / "run.db3"
    live = LiveFrames()
    recorder = recorder_for(bag, images=True)
    assert isinstance(recorder, RosbagRecorder)
    run_episode(tree(LOOK), image_size=128, observers=[recorder, live])  # seed 0: the task is GOAL
    assert live.ctx.blackboard.get("goal.object") == "small white can"
    assert len(live.frames) == 2
    return bag, live


def test_the_bag_is_a_rosbag2_folder_named_after_the_db3_with_the_documented_topics(recorded):
    bag, live = recorded
    folder = bag.with_suffix("")
    assert (folder / "metadata.yaml").is_file() and (folder / "run.db3").is_file()
    reader = Bag(bag)
    try:
        counts = {c.topic: (c.msgtype, c.msgcount) for c in reader.reader.connections}
    finally:
        reader.close()
    assert counts[RGB] == ("sensor_msgs/msg/Image", 2) and counts[DEPTH] == ("sensor_msgs/msg/Image", 2)
    assert counts[TOPICS["info"]] == ("sensor_msgs/msg/CameraInfo", 2)
    # the camera pose with each frame, the gripper's after every tick
    assert counts[TOPICS["tf"]] == ("tf2_msgs/msg/TFMessage", 2 + live.ticks)
    assert counts[TOPICS["trace"]] == ("std_msgs/msg/String", live.ticks + 2)
    assert counts[TOPICS["bt_log"]][0] == "nav2_msgs/msg/BehaviorTreeLog"


def test_frames_read_back_are_the_live_frames(recorded):
    bag, live = recorded
    frames = read_frames(bag, RGB, DEPTH)
    assert len(frames) == len(live.frames)
    for got, want in zip(frames, live.frames, strict=True):
        assert got.rgb.dtype == np.uint8 and np.array_equal(got.rgb, want.rgb)
        assert got.depth.dtype == np.float32 and np.array_equal(got.depth, want.depth)
        assert np.array_equal(got.K, want.K)
        assert np.allclose(got.T_cam_base, want.T_cam_base, atol=1e-12)


def test_perceive_on_the_bag_locates_the_same_mask_as_on_the_live_frames(recorded):
    bag, live = recorded
    from_bag = locate_frames(read_frames(bag, RGB, DEPTH), GOAL)
    from_live = locate_frames(live.frames, GOAL)
    assert from_live[0][1] is not None, "the can is in view in the first frame"
    for (_, got), (_, want) in zip(from_bag, from_live, strict=True):
        assert (got is None) == (want is None)
        if want is not None:
            assert (got.object_id, got.name, got.bbox) == (want.object_id, want.name, want.bbox)
            assert np.array_equal(got.mask, want.mask)


def test_the_perceive_command_prints_a_line_per_frame_or_json(recorded, capsys):
    bag, live = recorded
    args = ["perceive", str(bag), "--topic-rgb", RGB, "--topic-depth", DEPTH, "--goal", GOAL]
    assert main(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and "frame 1/2  small white can: small white can (object" in lines[0]
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    first = locate_frames(live.frames, GOAL)[0][1]
    assert out["frames"][0]["located"]["bbox"] == list(first.bbox)
    assert out["frames"][0]["located"]["pixels"] == int(first.mask.sum())


@pytest.mark.parametrize("change, message", [
    (lambda a: a.__setitem__(1, a[1] + ".missing"), "no such bag (give a rosbag2 folder or its .db3 file)"),
    (lambda a: a.__setitem__(5, "/camera/depth"), "no topic /camera/depth"),
    (lambda a: a.__setitem__(3, TOPICS["tf"]), "holds tf2_msgs/msg/TFMessage, not sensor_msgs/msg/Image"),
    (lambda a: a.extend(["--topic-info", TOPICS["rgb"]]), "not sensor_msgs/msg/CameraInfo"),
])
def test_bad_bags_and_topics_are_one_line_and_exit_2(recorded, capsys, change, message):
    bag, _ = recorded
    args = ["perceive", str(bag), "--topic-rgb", RGB, "--topic-depth", DEPTH, "--goal", GOAL]
    change(args)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith(args[1] + ": ")


def test_recording_over_an_existing_bag_is_refused_before_the_run(recorded):
    bag, _ = recorded
    with pytest.raises(UserError, match="already exists"):
        RosbagRecorder(bag)


def test_recorder_for_picks_by_suffix_or_format_and_names_the_choices(tmp_path):
    assert isinstance(recorder_for(tmp_path / "plain", images=False, record_format="rosbag2"), RosbagRecorder)
    with pytest.raises(UserError, match=r"cannot tell the format of 'run\.bin' \(name it with one of: .*\.db3"):
        recorder_for(tmp_path / "run.bin", images=False)
    with pytest.raises(UserError, match="unknown record format 'bag'"):
        recorder_for(tmp_path / "x", images=False, record_format="bag")


def test_a_trace_converts_to_a_bag_with_the_groot2_log_status_changes(tmp_path):
    from helpers import run_oracle

    from bt_grasp.observe.groot2_btlog import transitions
    from bt_grasp.oracles import ScriptedOracle
    from bt_grasp.trace import read_trace

    path = tmp_path / "run.jsonl"
    run_oracle(tree(LOOK), ScriptedOracle({"grasp": ["done"], "lift": ["done"]}), trace=str(path))
    assert main(["trace", "convert", str(path), "-o", str(tmp_path / "run.db3")]) == 0
    bag = Bag(tmp_path / "run")
    try:
        logs = [m for _, _, m in bag.messages([TOPICS["bt_log"]])]
        records = [json.loads(m.data) for _, _, m in bag.messages([TOPICS["trace"]])]
    finally:
        bag.close()
    assert (records[0]["type"], records[-1]["type"]) == ("header", "final")
    changes = [(e.node_name, e.current_status) for m in logs for e in m.event_log]
    _, btlog = transitions(read_trace(path))
    assert len(changes) == len(btlog) and changes[-1] == (records[0]["structure"]["id"], "IDLE")


def test_a_missing_library_names_the_extra_to_install(monkeypatch):
    import sys

    from bt_grasp.observe.extras import need

    monkeypatch.setitem(sys.modules, "rosbags.rosbag2", None)
    with pytest.raises(BackendUnavailable, match=r"install the ros extra: pip install 'bt_grasp\[ros\]'"):
        need("rosbags.rosbag2")


def test_perceive_on_a_bag_without_images_says_how_to_record_them(tmp_path, capsys):
    from helpers import run_oracle

    from bt_grasp.oracles import ScriptedOracle

    path = tmp_path / "run.jsonl"
    run_oracle(tree(LOOK), ScriptedOracle({"grasp": ["done"], "lift": ["done"]}), trace=str(path))
    assert main(["trace", "convert", str(path), "-o", str(tmp_path / "tree.db3")]) == 0
    capsys.readouterr()
    args = ["perceive", str(tmp_path / "tree.db3"), "--topic-rgb", RGB, "--topic-depth", DEPTH, "--goal", GOAL]
    assert main(args) == 2
    assert capsys.readouterr().err == (f"{tmp_path / 'tree.db3'}: no sensor_msgs/msg/Image topic in this bag, "
                                       f"so no {RGB} (record the camera: --record-images)\n")
