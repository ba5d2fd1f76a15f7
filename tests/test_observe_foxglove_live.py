"""`bt-grasp run TREE --live=foxglove`: a Foxglove WebSocket server on 127.0.0.1 that a client
(Foxglove's WebSocket protocol) subscribes to, receiving one message per tick; the run waits
for that first subscription, so a viewer opened after the start misses nothing."""

from __future__ import annotations

import asyncio
import io
import json
import re
import struct
import subprocess
import sys
import time

import pytest
from helpers import ROOT

pytest.importorskip("foxglove")
websockets = pytest.importorskip("websockets")

TREE = """tree: look_twice
budgets: {actions: 2, perception_streak: 3}
root:
  sequence:
    children: [survey_scene: {id: look}, open_gripper: {id: open}, survey_scene: {id: look_again},
               finalize: {reason: looked}]
"""
TIMEOUT = 120.0  # generous: the suite runs on 2 shared cores; a passing run takes about 10 s
# The protocol's historical name and the one foxglove-sdk >= 0.30 answers to (same messages).
SUBPROTOCOLS = ["foxglove.websocket.v1", "foxglove.sdk.v1"]
MESSAGE_DATA = 0x01  # server binary opcode: u8 opcode, u32 subscription id, u64 log time, payload


def _address(proc: subprocess.Popen, deadline: float) -> str:
    """The ws:// address the run prints on stderr once its server is up."""
    while time.time() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"ws://127\.0\.0\.1:\d+", line)
        if found:
            return found.group(0)
        if not line and proc.poll() is not None:
            pytest.fail(f"the run ended before serving: {proc.stderr.read()}")
    pytest.fail("no ws:// address printed in time")


async def _ticks(url: str, deadline: float) -> tuple[list[str], list[tuple[int, dict]]]:
    """Subscribe to /bt_grasp/tick and /bt_grasp/run; (advertised topics, [(log time, tick
    message)]) until the run's final record arrives."""
    got: list[tuple[int, dict]] = []
    async with websockets.connect(url, subprotocols=SUBPROTOCOLS, max_size=None) as ws:
        channels: dict[str, int] = {}
        while not {"/bt_grasp/tick", "/bt_grasp/run"} <= set(channels):
            msg = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.time()))
            if msg.get("op") == "advertise":
                channels.update({c["topic"]: c["id"] for c in msg["channels"]})
        await ws.send(json.dumps({"op": "subscribe", "subscriptions": [
            {"id": 7, "channelId": channels["/bt_grasp/tick"]},
            {"id": 8, "channelId": channels["/bt_grasp/run"]}]}))
        while True:
            data = await asyncio.wait_for(ws.recv(), deadline - time.time())
            if isinstance(data, bytes) and data[0] == MESSAGE_DATA:
                sub, log_time = struct.unpack_from("<IQ", data, 1)
                message = json.loads(data[13:])
                if sub == 8 and message["type"] == "final":
                    return sorted(channels), got
                if sub == 7:
                    got.append((log_time, message))


def test_a_websocket_client_subscribes_and_receives_every_tick(tmp_path):
    tree = tmp_path / "look.yaml"
    tree.write_text(TREE)
    proc = subprocess.Popen([sys.executable, "-m", "bt_grasp.cli", "run", str(tree), "--image-size", "64",
                             "--live=foxglove", "--port", "0", "--json"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + TIMEOUT
        url = _address(proc, deadline)
        topics, ticks = asyncio.run(_ticks(url, deadline))
        out, err = proc.communicate(timeout=max(1.0, deadline - time.time()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "AttributeError" not in err  # the client's unsubscribe/disconnect is answered, not an error
    result = json.loads(out)
    assert {"/bt_grasp/tick", "/bt_grasp/events", "/behavior_tree/xml", "/camera/rgb"} <= set(topics)
    assert [t["tick"] for _, t in ticks] == list(range(1, result["ticks"] + 1))
    assert [lt for lt, _ in ticks] == [round(t["clock"] * 1e9) for _, t in ticks]


def test_a_port_out_of_range_is_one_line_and_exit_2(capsys):
    from bt_grasp.cli import main

    assert main(["run", "clutter", "--live=foxglove", "--port", "70000"]) == 2
    err = capsys.readouterr().err
    assert "--port must be 0..65535" in err and err.count("\n") == 1


def test_the_wait_for_a_viewer_comes_before_the_episode_not_in_it(monkeypatch):
    """The server waits in its constructor (before the run starts its wall clock), never in
    started(); its listener is the SDK's ServerListener, so every other callback has an answer."""
    pytest.importorskip("foxglove")
    from foxglove.websocket import ServerListener

    from bt_grasp.observe.foxglove_live import FoxgloveLive

    live = FoxgloveLive(port=0, stream=io.StringIO(), wait=0.01)
    try:
        assert ServerListener in type(live.listener).__mro__
        assert live.listener.on_unsubscribe(None, None) is None
        monkeypatch.setattr(live.listener.subscribed, "wait", lambda *a: pytest.fail("waited in the episode"))
        seen = []
        monkeypatch.setattr(live.observer, "started", lambda header, ctx: seen.append(header))
        live.started({"type": "header"}, None)
        assert seen == [{"type": "header"}]
    finally:
        live.close()
