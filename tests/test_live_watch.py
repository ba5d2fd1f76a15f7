"""`bt-grasp watch` follows a trace another process is writing: it waits for whole lines, stops at
the final record with the decision, and refuses a file that is not a trace in one line (exit 2)."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import threading
import time

import pytest
from fakes import BUSY
from helpers import ROOT, run_oracle, tree

from bt_grasp.cli import main
from bt_grasp.live.view import TerminalView
from bt_grasp.live.watch import watch
from bt_grasp.oracles import ScriptedOracle


def recorded(tmp_path) -> list[bytes]:
    """The lines of a finished run's trace (a leaf running across three ticks)."""
    path = tmp_path / "recorded.jsonl"
    run_oracle(tree(BUSY), ScriptedOracle({}), trace=str(path))
    return path.read_bytes().splitlines(keepends=True)


def slow_writer(path, lines: list[bytes], pause: float) -> threading.Thread:
    """Appends `lines` one at a time, each in two writes (a reader sees half lines)."""
    def run() -> None:
        with path.open("wb", buffering=0) as fh:
            for line in lines:
                half = len(line) // 2
                fh.write(line[:half])
                time.sleep(pause)
                fh.write(line[half:])
                time.sleep(pause)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_watch_follows_a_trace_written_slowly_and_stops_at_the_decision(tmp_path):
    lines = recorded(tmp_path)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"")
    writer = slow_writer(path, lines, 0.02)
    out, said = io.StringIO(), []
    assert watch(path, TerminalView(out, mode="lines", env={}), poll=0.005, print_line=said.append) == 0
    writer.join(5)
    ticks = out.getvalue().splitlines()
    assert [line.split(" | ")[0] for line in ticks] == ["tick 1", "tick 2", "tick 3", "tick 4"]
    assert "running move" in ticks[2]
    final = json.loads(lines[-1])
    assert said == [f"FINALIZE: moved | actions 0/10 | ticks 4 | sim {final['clock']:.1f} s"]


def test_once_draws_what_is_there_even_with_a_half_written_last_line(tmp_path, capsys):
    lines = recorded(tmp_path)
    path = tmp_path / "partial.jsonl"
    path.write_bytes(b"".join(lines[:3]) + lines[3][:20])
    assert main(["watch", str(path), "--once", "--view", "lines"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tick 2 | ") and "running move" in out and "FINALIZE" not in out


def test_a_missing_or_foreign_file_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["watch", str(tmp_path / "nope.jsonl")]) == 2
    assert capsys.readouterr().err.startswith(f"{tmp_path / 'nope.jsonl'}: trace file not found")
    yaml = ROOT / "trees" / "clutter.yaml"
    assert main(["watch", str(yaml)]) == 2
    assert capsys.readouterr().err.strip().startswith(f"{yaml}:1:1: not a bt_grasp trace line")
    headless = tmp_path / "headless.jsonl"
    headless.write_bytes(b"".join(recorded(tmp_path)[1:]))
    assert main(["watch", str(headless), "--once"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{headless}:1:1: not a bt_grasp trace (no header line") and err.count("\n") == 1
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert main(["watch", str(empty), "--once"]) == 2
    no_newline = tmp_path / "binary.jsonl"
    no_newline.write_bytes(b"\x89PNG")
    assert main(["watch", str(no_newline)]) == 2
    assert f"{no_newline}:1:1:" in capsys.readouterr().err


def test_a_trace_written_again_from_the_start_starts_the_view_again(tmp_path):
    lines = recorded(tmp_path)
    path = tmp_path / "again.jsonl"
    path.write_bytes(b"".join(lines[:4]))  # header + 3 ticks, no final: a run still going

    def rewrite() -> None:
        time.sleep(0.1)
        path.write_bytes(b"".join(lines[:2]))  # truncated and written again, then finished
        time.sleep(0.1)
        with path.open("ab") as fh:
            fh.write(b"".join(lines[2:]))
    threading.Thread(target=rewrite, daemon=True).start()
    out = io.StringIO()
    assert watch(path, TerminalView(out, mode="lines", env={}), poll=0.01, print_line=lambda s: None) == 0
    firsts = [line.split(" | ")[0] for line in out.getvalue().splitlines()]
    assert firsts[:3] == ["tick 1", "tick 2", "tick 3"] and firsts[-4:] == ["tick 1", "tick 2", "tick 3", "tick 4"]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("started_with", ["default", "SIGINT ignored"])
def test_ctrl_c_stops_watching_with_exit_130_and_no_traceback(tmp_path, started_with):
    """Also when the watcher inherited SIGINT ignored (a background job, or a parent such as a
    test worker that ignores it): Python alone would then never raise KeyboardInterrupt."""
    lines = recorded(tmp_path)
    path = tmp_path / "going.jsonl"
    path.write_bytes(b"".join(lines[:3]))
    proc = subprocess.Popen([sys.executable, "-m", "bt_grasp.cli", "watch", str(path), "--view", "lines",
                             "--poll", "0.05"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, preexec_fn=_ignore_sigint if started_with != "default" else None)
    try:
        assert proc.stdout.readline().startswith("tick 1 | ")  # it is following
        assert proc.stdout.readline().startswith("tick 2 | ")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "", err


def test_watch_follows_a_real_run_to_its_decision(tmp_path):
    """Another process runs the arm and writes the trace; watch sees its ticks and its end."""
    from helpers import start_endless_run

    run, path = start_endless_run(tmp_path, lambda text: text.count('"type":"tick"') >= 2, 120,
                                  "the run wrote no ticks")
    try:
        watcher = subprocess.Popen([sys.executable, "-m", "bt_grasp.cli", "watch", str(path), "--view", "lines",
                                    "--poll", "0.02"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, cwd=ROOT)
        assert watcher.stdout.readline().startswith("tick 1 | ")
        run.send_signal(signal.SIGINT)  # the run records WAIT_CLARIFY "interrupted" and ends
        run.communicate(timeout=60)
        guard = threading.Timer(60, watcher.kill)  # a watcher that never stops fails, not hangs
        guard.start()
        # read through the same buffered reader as readline (communicate() would skip what it holds)
        out = watcher.stdout.read()
        err = watcher.stderr.read()
        watcher.wait()
        guard.cancel()
    finally:
        run.kill()
    assert watcher.returncode == 0, err
    lines = out.splitlines()
    assert lines[-1].startswith("WAIT_CLARIFY: interrupted | actions 0/10 | ticks ")
    ticks = [line.split(" | ")[0] for line in lines[:-1]]
    assert ticks == [f"tick {n}" for n in range(2, len(ticks) + 2)]
    assert "last open_gripper at open: " in lines[-2]
