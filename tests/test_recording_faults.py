"""Recordings are never all or nothing: a run killed with SIGKILL leaves an MCAP file and a ROS 2
bag that the standard readers (mcap's reader, rosbags) open with all but the last second, after
`bt-grasp trace recover` for the MCAP; a recorder that raises stops with one warning line, the
run decides, and what it wrote stays readable."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import ENDLESS, RETRYING, ROOT, tree

from bt_grasp.blackboard import Blackboard
from bt_grasp.cli import main
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.drivers.base import Observation
from bt_grasp.observers import RunObserver
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.runner import Runner
from bt_grasp.tick_budget import episode_limits
from bt_grasp.trace import read_trace

pytest.importorskip("foxglove")
pytest.importorskip("rosbags")
mcap_reader = pytest.importorskip("mcap.reader")

from bt_grasp.observe.mcap_record import McapRecorder  # noqa: E402
from bt_grasp.observe.rosbag import RosbagRecorder  # noqa: E402


def _ticks_in_trace(path) -> int:
    return path.read_text().count('"type":"tick"') if path.exists() else 0


def _killed_run(tmp_path, record: str):
    """A never-ending run recorded to `record`, SIGKILLed 1.5 s after the trace had `before`
    ticks (so the recording flushed at least once after them); (trace ticks then, trace path)."""
    (tmp_path / "endless.yaml").write_text(ENDLESS)
    trace = tmp_path / "run.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "bt_grasp.cli", "run", str(tmp_path / "endless.yaml"),
                             "--trace", str(trace), "--record", str(tmp_path / record), "--image-size", "64"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while _ticks_in_trace(trace) < 20:
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the run wrote no ticks in time"
            time.sleep(0.02)
        time.sleep(1.0)
        before = _ticks_in_trace(trace)
        time.sleep(1.5)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    return before, trace


def _report(kind: str, readable: int, ticks: int, before: int) -> None:
    """The figures docs/observability.md quotes (pytest -s): the wall time lost is estimated from
    the tick rate of the last 1.5 s."""
    rate = (ticks - before) / 1.5
    print(f"kill -9 {kind}: {readable}/{ticks} ticks readable ({readable / ticks:.0%}), "
          f"{before} written 1.5 s before the kill; lost ~{(ticks - readable) / rate:.2f} s of the run")


def _mcap_ticks(path) -> int:
    with open(path, "rb") as fh:
        reader = mcap_reader.make_reader(fh)
        return sum(1 for _, ch, _ in reader.iter_messages() if ch.topic == "/bt_grasp/tick")


def _bag_ticks(path) -> int:
    from rosbags.rosbag2 import Reader

    with Reader(path) as reader:
        conns = [c for c in reader.connections if c.topic == "/bt_grasp/trace"]
        return sum(1 for c, _, raw in reader.messages(connections=conns) if b'"type":"tick"' in raw)


def test_an_mcap_of_a_killed_run_is_recovered_with_all_but_its_last_second(tmp_path, capsys):
    before, trace = _killed_run(tmp_path, "run.mcap")
    ticks = len(read_trace(trace).ticks)
    with pytest.raises(Exception):  # noqa: B017 - no footer: a seeking reader refuses it as it is
        _mcap_ticks(tmp_path / "run.mcap")
    assert main(["trace", "recover", str(tmp_path / "run.mcap")]) == 0
    assert capsys.readouterr().out.startswith("recovered ")
    readable = _mcap_ticks(tmp_path / "run.mcap")
    _report("mcap", readable, ticks, before)
    assert before <= readable <= ticks


def test_a_bag_of_a_killed_run_opens_as_it_is_with_all_but_its_last_second(tmp_path, capsys):
    before, trace = _killed_run(tmp_path, "run.db3")
    ticks = len(read_trace(trace).ticks)
    readable = _bag_ticks(tmp_path / "run")  # metadata.yaml was written while recording
    _report("bag", readable, ticks, before)
    assert before <= readable <= ticks
    assert main(["trace", "recover", str(tmp_path / "run.db3")]) == 0
    assert _bag_ticks(tmp_path / "run") >= readable


class BadFrame(RunObserver):
    """Hands the recorders a broken camera's frame at tick `at`: its pose NaN (rosbag's
    rotation fit raises "SVD did not converge"), or its depth image flat (1-D)."""

    def __init__(self, at: int, fault: str) -> None:
        self.at, self.fault, self.ctx = at, fault, None

    def started(self, header, ctx) -> None:
        self.ctx = ctx

    def ticked(self, tick) -> None:
        if tick.tick == self.at:
            self.ctx.memory.last_observation = Observation(
                rgb=np.zeros((4, 4, 3), np.uint8), K=np.eye(3), clock=0.0,
                depth=np.ones(4 if self.fault == "flat depth" else (4, 4), np.float32),
                T_cam_base=np.full((4, 4), np.nan) if self.fault == "NaN pose" else np.eye(4))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("recorder, fault", [(McapRecorder, "flat depth"), (RosbagRecorder, "flat depth")])
def test_a_recorder_that_raises_stops_with_one_warning_and_keeps_what_it_wrote(tmp_path, recorder, fault, capsys):
    spec = tree(RETRYING)
    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec),
                     oracle=ScriptedOracle({"grasp": ["fault", "fault", "done"]}),
                     blackboard=Blackboard({"goal.object": "mug"}))
    path = tmp_path / ("run.mcap" if recorder is McapRecorder else "run.db3")
    rec = recorder(path, images=True)
    result = Runner(spec, ctx, observers=[BadFrame(2, fault), rec]).run()
    rec.close()
    assert result.reason == "held"
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"bt-grasp: warning: {path}: the ") and "stopped after 1 ticks" in err
    if recorder is McapRecorder:
        with open(path, "rb") as fh:
            runs = [json.loads(m.data) for _, ch, m in mcap_reader.make_reader(fh).iter_messages()
                    if ch.topic == "/bt_grasp/tick"]
    else:
        runs = [1] * _bag_ticks(tmp_path / "run")
    assert len(runs) >= 1  # the tick before the fault is there, read by the standard reader


def test_trace_recover_leaves_a_whole_mcap_alone_and_refuses_what_is_not_a_recording(tmp_path, capsys):
    spec = tree(RETRYING)
    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec),
                     oracle=ScriptedOracle({"grasp": ["done"]}), blackboard=Blackboard({"goal.object": "mug"}))
    path = tmp_path / "run.mcap"
    rec = McapRecorder(path)
    Runner(spec, ctx, observers=[rec]).run()
    before = path.read_bytes()
    assert main(["trace", "recover", str(path)]) == 0
    assert "already complete" in capsys.readouterr().out and path.read_bytes() == before
    (tmp_path / "junk.mcap").write_bytes(b"not an mcap file at all")
    for target in ("junk.mcap", "missing.mcap", "nobag.db3"):
        assert main(["trace", "recover", str(tmp_path / target)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


class NanGripper:
    """A driver whose TCP pose is NaN (a broken joint encoder)."""

    def tcp_pose(self):
        return (float("nan"), 0.0, 0.5), (0.0, 0.0, 0.0, 1.0)


NAN64 = np.float64(np.nan).tobytes()


@pytest.mark.parametrize("recorder", [McapRecorder, RosbagRecorder])
def test_a_nan_camera_or_gripper_pose_is_left_out_and_the_recording_goes_on(tmp_path, recorder, capsys):
    """No NaN reaches a recording: the frame with a NaN camera pose and the NaN gripper poses are
    left out, everything else is recorded, no warning."""
    spec = tree(RETRYING)
    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec),
                     oracle=ScriptedOracle({"grasp": ["fault", "fault", "done"]}),
                     blackboard=Blackboard({"goal.object": "mug"}))
    ctx.driver = NanGripper()
    path = tmp_path / ("run.mcap" if recorder is McapRecorder else "run.db3")
    rec = recorder(path, images=True)
    result = Runner(spec, ctx, observers=[BadFrame(2, "NaN pose"), rec]).run()
    rec.close()
    assert result.reason == "held" and capsys.readouterr().err == ""
    if recorder is McapRecorder:
        with open(path, "rb") as fh:
            messages = [(ch.topic, m.data) for _, ch, m in mcap_reader.make_reader(fh).iter_messages()]
    else:
        from rosbags.rosbag2 import Reader

        with Reader(tmp_path / "run") as reader:
            messages = [(c.topic, raw) for c, _, raw in reader.messages()]
    ticks = [d for t, d in messages if t == "/bt_grasp/tick" or (t == "/bt_grasp/trace" and b'"type":"tick"' in d)]
    assert len(ticks) == result.ticks
    assert not [t for t, d in messages if t == "/tf" or "camera" in t]  # the NaN poses and frame left out
    assert not [t for t, d in messages if NAN64 in d]
