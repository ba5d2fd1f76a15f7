"""`bt-grasp run --live` draws the run as it goes; with --json the view moves to stderr so the
result on stdout stays one JSON object."""

from __future__ import annotations

import json

from bt_grasp.cli import main


def test_run_live_prints_a_line_per_tick_beside_the_json_result(capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(["run", "clutter", "--live=lines", "--json", "--image-size", "256"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    lines = captured.err.splitlines()
    ticks = [line for line in lines if line.startswith("tick ")]
    assert [t.split(" | ")[0] for t in ticks] == [f"tick {n}" for n in range(1, result["ticks"] + 1)]
    event = result["events"][-1]
    assert f"last {event['primitive']} at {event['node']}: " in ticks[-1]
    assert f"left: actions {result['action_budget'] - result['actions']}/{result['action_budget']}" in ticks[-1]
    assert "\x1b" not in captured.err  # not a terminal, not forced: no colour, no cursor moves


def test_live_mode_is_checked_by_the_parser(capsys):
    import pytest

    with pytest.raises(SystemExit) as exc:
        main(["run", "clutter", "--live=sparkly"])
    assert exc.value.code == 2
