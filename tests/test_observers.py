"""One observer interface: every consumer of a run (trace writer, live view, API callbacks) is a
RunObserver, called with the header, every tick and the final record, in that order."""

from __future__ import annotations

import json

from helpers import RETRYING, retrying_context, tree

from bt_grasp.observers import EventObserver, RecordObserver, RunObserver, Tick, TickObserver
from bt_grasp.runner import Runner


class Calls(RunObserver):
    """Writes down every call it gets, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def started(self, header, ctx) -> None:
        self.calls.append(("started", header))
        assert ctx.blackboard.get("goal.object") == "mug"

    def ticked(self, tick: Tick) -> None:
        self.calls.append(("ticked", tick))

    def finished(self, final, result) -> None:
        self.calls.append(("finished", (final, result)))


def run(trace=None, *observers: RunObserver):
    ctx = retrying_context(["fault", "done"])
    return Runner(tree(RETRYING), ctx, trace_path=trace and str(trace), observers=observers).run()


def test_an_observer_sees_header_each_tick_and_final_in_order_as_the_trace_holds_them(tmp_path):
    calls = Calls()
    result = run(tmp_path / "t.jsonl", calls)
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    kinds = [kind for kind, _ in calls.calls]
    assert kinds == ["started"] + ["ticked"] * result.ticks + ["finished"]
    header, *ticks, (final, got_result) = [payload for _, payload in calls.calls]
    assert got_result is result and final["decision"] == result.decision.value
    assert json.loads(json.dumps([header, *(t.record for t in ticks), final])) == lines
    assert [t.tick for t in ticks] == list(range(1, result.ticks + 1))
    assert [e.primitive for t in ticks for e in t.events] == ["grasp", "grasp"]  # perception emits no event
    assert all(t.visited == [tuple(v) for v in t.record["visited"]] for t in ticks)


def test_event_and_tick_callbacks_are_observers_seeing_the_same_run():
    events, ticks = [], []
    result = run(None, EventObserver(events.append), TickObserver(ticks.append))
    assert events == result.events
    assert [e for t in ticks for e in t.events] == events
    assert [t.ledger["actions"] for t in ticks if "actions" in t.ledger] == [1, 2]


def test_a_record_observer_gets_every_record_with_or_without_a_trace_file(tmp_path):
    with_file: list[dict] = []
    without: list[dict] = []
    run(tmp_path / "t.jsonl", RecordObserver(with_file.append))
    quiet = run(None)
    run(None, RecordObserver(without.append))
    on_disk = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [r["type"] for r in with_file] == ["header", "tick", "tick", "final"]
    assert json.loads(json.dumps(with_file)) == on_disk

    def stable(recs: list[dict]) -> list:
        return [[r.get("visited"), r.get("ledger"), [e["primitive"] for e in r.get("events", [])]]
                for r in recs]
    assert stable(without) == stable(with_file)
    assert (quiet.decision, quiet.reason, quiet.ticks) == (with_file[-1]["decision"], with_file[-1]["reason"],
                                                          with_file[-1]["ticks"])
