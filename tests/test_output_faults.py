"""Outputs never take a run down: a trace, recording or results file that cannot be written is
one line and exit 2 before anything moves; one that fails during the run stops with one warning
line while the run decides; traces hold strict JSON (non-finite numbers as null)."""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import json
import math
import os
import shutil
import subprocess

import pytest
from helpers import RETRYING, ROOT, tree

from bt_grasp import episode
from bt_grasp.blackboard import Blackboard
from bt_grasp.cli import main
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.runner import Runner
from bt_grasp.tick_budget import episode_limits
from bt_grasp.trace import TraceWriter, read_trace

CLUTTER = str(ROOT / "trees" / "clutter.yaml")


@pytest.fixture
def no_robot(monkeypatch):
    """The world is never built: an output refused must stop the run before anything moves."""
    def refuse(*_args, **_kwargs):
        raise AssertionError("the robot was set up although an output is unusable")
    monkeypatch.setattr(episode, "build_world_for", refuse)


def _bad_paths(tmp_path):
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "a_dir.jsonl").mkdir()
    return {"full disk (/dev/full)": "/dev/full", "a directory": str(tmp_path / "a_dir.jsonl"),
            "under a regular file": str(tmp_path / "a_file" / "run.jsonl")}


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("case", ["full disk (/dev/full)", "a directory", "under a regular file"])
def test_an_unusable_trace_is_one_line_exit_2_and_nothing_moves(tmp_path, case, no_robot, capsys):
    path = _bad_paths(tmp_path)[case]
    assert main(["run", CLUTTER, "--trace", path]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"{path}: cannot write the trace")


@pytest.mark.parametrize("suffix", [".mcap", ".db3"])
@pytest.mark.parametrize("case", ["a directory", "under a regular file", "full disk (/dev/full)"])
def test_an_unusable_recording_is_one_line_exit_2_and_nothing_moves(tmp_path, case, suffix, no_robot, capsys):
    pytest.importorskip("foxglove" if suffix == ".mcap" else "rosbags")
    # a bag is a folder: run.db3 names the folder run/, so "a directory" is that folder existing
    (tmp_path / "d").mkdir()
    path = {"a directory": str(tmp_path / f"d{suffix}"), "under a regular file": str(tmp_path / "a_file" / f"r{suffix}"),
            "full disk (/dev/full)": "/dev/full"}[case]
    (tmp_path / "a_file").write_text("x")
    if suffix == ".mcap":
        (tmp_path / f"d{suffix}").mkdir()
    fmt = ["--record-format", "mcap" if suffix == ".mcap" else "rosbag2"]
    assert main(["run", CLUTTER, "--record", path, *fmt]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"{path}: ") and ("cannot write" in line or "already exists" in line)
    assert os.path.exists("/dev/full")  # a refused device is never removed


class FullAfter:
    """A file whose writes fail with ENOSPC after `lines` of them: a disk that fills mid-run."""

    def __init__(self, real, lines: int) -> None:
        self.real, self.left = real, lines

    def write(self, text: str) -> int:
        if self.left <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.left -= 1
        return self.real.write(text)

    def __getattr__(self, name):
        return getattr(self.real, name)


def _oracle_run(trace_writer, grasps=("fault", "fault", "done")):
    spec = tree(RETRYING)
    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec),
                     oracle=ScriptedOracle({"grasp": list(grasps)}), blackboard=Blackboard({"goal.object": "mug"}))
    return Runner(spec, ctx, observers=[trace_writer]).run()


def test_a_disk_that_fills_mid_run_stops_the_trace_with_one_warning_and_the_run_decides(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    writer = TraceWriter(path)
    writer._fh = FullAfter(writer._fh, 3)  # the header and two ticks fit
    result = _oracle_run(writer)
    assert result.reason == "held"  # the run went on to its decision
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"bt-grasp: warning: {path}: cannot write the trace: No space left on device")
    trace = read_trace(path)
    assert [t["tick"] for t in trace.ticks] == [1, 2] and not trace.complete


def test_traces_are_strict_json_with_non_finite_numbers_as_null_and_old_ones_still_read(tmp_path):
    path = tmp_path / "t.jsonl"
    writer = TraceWriter(path)
    writer.write({"type": "header", "tree": "t", "structure": {"id": "r", "type": "sequence"}})
    writer.write({"type": "tick", "tick": 1, "clock": math.inf, "visited": [["r", "RUNNING"]],
                  "blackboard": {"x": [math.nan, 1.5], "y": -math.inf}, "events": []})
    writer.close()
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text
    rec = json.loads(text.splitlines()[1], parse_constant=lambda c: pytest.fail(f"{c} in a trace"))
    assert rec["clock"] is None and rec["blackboard"] == {"x": [None, 1.5], "y": None}
    assert read_trace(path).ticks[0]["clock"] is None
    # a trace written before: Infinity as the clock, still read, and converted without a crash
    old = tmp_path / "old.jsonl"
    old.write_text(text.replace('"clock":null', '"clock":Infinity'))
    assert read_trace(old).ticks[0]["clock"] == math.inf
    pytest.importorskip("rosbags")
    assert main(["trace", "convert", str(old), "-o", str(tmp_path / "old.btlog")]) == 0
    assert main(["trace", "convert", str(old), "-o", str(tmp_path / "old.db3")]) == 0


def test_trace_convert_onto_a_full_disk_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    src = tmp_path / "t.jsonl"
    _oracle_run(TraceWriter(src))
    capsys.readouterr()
    # .btlog is written in one call: make that call meet a full disk
    import pathlib

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pathlib.Path, "write_bytes", full)
    assert main(["trace", "convert", str(src), "-o", str(tmp_path / "t.btlog")]) == 2
    assert "No space left on device" in _one_line(capsys.readouterr().err)


@contextlib.contextmanager
def small_disk(tmp_path, free: int):
    """A real disk with `free` bytes left: a 256 KiB tmpfs filled up to them (needs root and
    mount rights, else the test is skipped)."""
    mount = tmp_path / f"disk{free}"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with open(mount / "filler", "wb", buffering=0) as fh:
            try:
                while shutil.disk_usage(mount).free > free:
                    fh.write(b"\0" * 4096)
            except OSError:
                pass
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.fixture
def full_disk(tmp_path):
    """A real disk without a free block."""
    with small_disk(tmp_path, 0) as mount:
        yield mount


@pytest.mark.parametrize("suffix", [".mcap", ".db3", ".btlog"])
def test_trace_convert_onto_a_real_full_disk_is_one_line_exit_2(tmp_path, full_disk, suffix, capsys):
    pytest.importorskip({".mcap": "foxglove", ".db3": "rosbags", ".btlog": "yaml"}[suffix])
    src = tmp_path / "t.jsonl"
    _oracle_run(TraceWriter(src))
    capsys.readouterr()
    assert main(["trace", "convert", str(src), "-o", str(full_disk / f"t{suffix}")]) == 2
    _one_line(capsys.readouterr().err)
    assert not (full_disk / f"t{suffix}").is_file()  # no half file left to pass for a whole one


def test_a_trace_on_a_real_full_disk_is_one_line_exit_2_before_the_robot_moves(full_disk, no_robot, capsys):
    assert main(["run", CLUTTER, "--trace", str(full_disk / "t.jsonl")]) == 2
    assert "No space left on device" in _one_line(capsys.readouterr().err)


LONG = """
    tree: long
    budgets: {max_ticks: 400}
    root: {repeat: {child: {force_success: {child: {open_gripper: {id: open}}}}}}
"""


@pytest.mark.parametrize("suffix", [".mcap", ".db3"])
def test_a_disk_filling_mid_run_stops_the_recording_with_one_warning_and_keeps_what_it_wrote(
        tmp_path, suffix, capsys):
    """400 ticks (the tick cap decides), recorders flushing every tick (flush_interval=0), on a
    disk with a few KiB left: it fills during the run."""
    pytest.importorskip("foxglove" if suffix == ".mcap" else "rosbags")
    from bt_grasp.observe.mcap_record import McapRecorder
    from bt_grasp.observe.rosbag import RosbagRecorder

    with small_disk(tmp_path, (12 if suffix == ".mcap" else 64) * 1024) as disk:
        path = disk / f"run{suffix}"
        cls = McapRecorder if suffix == ".mcap" else RosbagRecorder
        recorder = cls(path, flush_interval=0.0)
        spec = tree(LONG)
        ctx = RunContext(registry=default_registry(), limits=episode_limits(spec), oracle=ScriptedOracle({}),
                         blackboard=Blackboard({"goal.object": "mug"}))
        result = Runner(spec, ctx, observers=[recorder]).run()
        recorder.close()
        assert result.reason == "tick cap (400 ticks)"  # the run went on to its decision
        line = _one_line(capsys.readouterr().err)
        assert line.startswith(f"bt-grasp: warning: {path}: the ") and " stopped after " in line
        stopped_after = int(line.split(" stopped after ")[1].split()[0])
        assert 0 < stopped_after < result.ticks  # the disk filled during the run
        if suffix == ".mcap":  # recovered onto another disk, read with mcap's reader
            assert main(["trace", "recover", str(path), "-o", str(tmp_path / "rec.mcap")]) == 0
            from mcap.reader import make_reader

            with open(tmp_path / "rec.mcap", "rb") as fh:
                ticks = sum(ch.topic == "/bt_grasp/tick" for _, ch, _ in make_reader(fh).iter_messages())
        else:  # read as it is with rosbags: metadata.yaml of the last commit
            from rosbags.rosbag2 import Reader

            with Reader(disk / "run") as reader:
                conns = [c for c in reader.connections if c.topic == "/bt_grasp/trace"]
                ticks = sum(b'"type":"tick"' in raw for _, _, raw in reader.messages(connections=conns))
        print(f"disk full mid-run {suffix}: {ticks} ticks readable, stopped after {stopped_after}")
        assert ticks >= stopped_after - 1


def test_a_real_disk_filling_mid_run_stops_the_trace_with_one_warning(tmp_path, capsys):
    with small_disk(tmp_path, 12 * 1024) as disk:
        path = disk / "run.jsonl"
        spec = tree(LONG)
        ctx = RunContext(registry=default_registry(), limits=episode_limits(spec), oracle=ScriptedOracle({}),
                         blackboard=Blackboard({"goal.object": "mug"}))
        result = Runner(spec, ctx, observers=[TraceWriter(path)]).run()
        assert result.reason == "tick cap (400 ticks)"
        assert "No space left on device" in _one_line(capsys.readouterr().err)
        trace = read_trace(path)  # whole lines up to the fault; a torn last one is ignored
        assert 0 < len(trace.ticks) < 400 and not trace.complete
        assert [t["tick"] for t in trace.ticks] == list(range(1, len(trace.ticks) + 1))


def test_a_clock_at_infinity_leaves_a_strict_json_trace_and_recordings(tmp_path):
    """A clock that jumps to infinity (a broken driver clock): every trace line and recorded JSON
    message parses without NaN/Infinity; clocks are null where they were not finite."""
    from bt_grasp.context import LogicalClock

    class Broken(LogicalClock):
        def end_tick(self, tick_start: float) -> None:
            self.now = math.inf

    observers = [TraceWriter(tmp_path / "t.jsonl")]
    if importlib.util.find_spec("foxglove"):
        from bt_grasp.observe.mcap_record import McapRecorder

        observers.append(McapRecorder(tmp_path / "t.mcap"))
    if importlib.util.find_spec("rosbags"):
        from bt_grasp.observe.rosbag import RosbagRecorder

        observers.append(RosbagRecorder(tmp_path / "t.db3"))
    spec = tree(RETRYING)
    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec), clock=Broken(),
                     oracle=ScriptedOracle({"grasp": ["fault", "done"]}), blackboard=Blackboard({"goal.object": "mug"}))
    Runner(spec, ctx, observers=observers).run()
    for o in observers:
        o.close()

    def strict(text):
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in {text[:80]}"))

    lines = [strict(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [r["clock"] for r in lines if r["type"] == "tick"] == [None] * (len(lines) - 2)
    if (tmp_path / "t.mcap").exists():
        from mcap.reader import make_reader

        with open(tmp_path / "t.mcap", "rb") as fh:
            jsons = [m.data for _, ch, m in make_reader(fh).iter_messages() if ch.message_encoding == "json"]
        assert jsons and all(strict(d.decode()) for d in jsons)
    if (tmp_path / "t").exists():
        from rosbags.rosbag2 import Reader

        with Reader(tmp_path / "t") as reader:
            conns = [c for c in reader.connections if c.topic == "/bt_grasp/trace"]
            raws = [raw for _, _, raw in reader.messages(connections=conns)]
        assert raws and all(b"Infinity" not in r and b"NaN" not in r for r in raws)
