"""The trace path is cheap but loses nothing: same JSON as json.dumps, whole lines per tick,
ledger changes per tick, and the same records handed to a live listener with or without a file."""

from __future__ import annotations

import json

import numpy as np
from helpers import RETRYING, run_oracle, tree

from bt_grasp.oracles import ScriptedOracle
from bt_grasp.outcomes import Label
from bt_grasp.trace import TraceWriter, jsonable, jsonable_changes, read_trace


def test_a_record_is_written_as_json_dumps_would_write_it_one_whole_line_each(tmp_path):
    rec = {"type": "tick", "tick": 1, "clock": 0.05, "visited": [("a", "SUCCESS")],
           "blackboard": {"k": "é", "n": None, "f": 1.5}, "events": []}
    writer = TraceWriter(tmp_path / "t.jsonl")
    writer.write(rec)
    # flushed at once: a reader sees the whole line before the writer closes
    assert (tmp_path / "t.jsonl").read_text() == json.dumps(rec, separators=(",", ":")) + "\n"
    writer.close()


def test_plain_blackboard_changes_skip_the_walk_and_others_get_the_same_summary_as_before():
    plain = {"a": "x", "b": 1, "c": True, "d": None}
    assert jsonable_changes(plain) is plain
    mixed = {"a": "x", "arr": np.zeros((10, 10)), "f": float("nan"), "e": Label.EMPTY, "t": (1, 2.5)}
    assert jsonable_changes(mixed) == jsonable(mixed)


def test_tick_records_carry_the_ledger_counters_that_changed(tmp_path):
    path = tmp_path / "t.jsonl"
    res = run_oracle(tree(RETRYING), ScriptedOracle({"grasp": ["fault", "fault", "done"]}), trace=str(path))
    assert res.reason == "held"
    ticks = read_trace(path).ticks
    ledgers = [t.get("ledger") for t in ticks]
    assert ledgers[0] == {"actions": 1, "perception_streak": 0, "retry_starts": {"attempts": 1},
                          "scoped_actions": {}}
    assert ledgers[1] == {"actions": 2, "retry_starts": {"attempts": 2}}
    assert ledgers[2] == {"actions": 3, "retry_starts": {"attempts": 3}}


