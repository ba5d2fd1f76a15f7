"""Traces survive a killed run; SIGINT/SIGTERM stop the driver and record WAIT_CLARIFY."""

from __future__ import annotations

import json
import signal

import pytest
from helpers import ROOT, start_endless_run

from bt_grasp.trace import read_trace


def _start(tmp_path):
    """Stopped once the trace has three complete tick lines and an open_gripper call has ended."""
    return start_endless_run(tmp_path, lambda text: text.count('"type":"tick"') >= 3 and text.endswith("\n")
                             and '"primitive":"open_gripper"' in text, 120, "the run wrote no ticks")


def test_a_run_killed_with_sigkill_leaves_a_readable_trace(tmp_path):
    proc, path = _start(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    trace = read_trace(path)
    assert trace.header["tree"] == "endless"
    assert not trace.complete
    assert len(trace.ticks) >= 3
    assert [t["tick"] for t in trace.ticks] == list(range(1, len(trace.ticks) + 1))
    # open_gripper spans ticks: its event is in the tick its call ends in
    events = [e for t in trace.ticks for e in t["events"]]
    assert events and all(e["primitive"] == "open_gripper" for e in events)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_sigint_and_sigterm_record_wait_clarify_interrupted(tmp_path, sig, code):
    proc, path = _start(tmp_path)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert out.startswith("WAIT_CLARIFY: interrupted")
    final = json.loads(path.read_text().splitlines()[-1])
    assert final["type"] == "final" and final["decision"] == "WAIT_CLARIFY"
    assert final["reason"] == "interrupted"


def test_trace_header_ticks_and_final_describe_the_run(tmp_path):
    from bt_grasp.cli import main

    path = tmp_path / "t.jsonl"
    assert main(["run", str(ROOT / "trees" / "clutter.yaml"), "--trace", str(path), "--image-size", "256"]) == 0
    trace = read_trace(path)
    h = trace.header
    assert {"tree", "goal", "robot", "seed", "versions", "structure", "budgets"} <= set(h)
    assert h["robot"] == "ur5e_robotiq" and h["goal"]["object"]
    assert trace.complete and trace.final["ticks"] == len(trace.ticks)
    first = trace.ticks[0]
    assert {"tick", "clock", "visited", "blackboard", "events"} <= set(first)
    assert ["survey", "SUCCESS"] in first["visited"]
    assert first["blackboard"]["goal.object"] == h["goal"]["object"]
