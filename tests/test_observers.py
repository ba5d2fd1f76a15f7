"""One observer interface: every consumer of a run (trace writer, live view, API callbacks) is a
RunObserver, called with the header, every tick and the final record, in that order."""

from __future__ import annotations

import json

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.observers import EventObserver, RunObserver, Tick, TickObserver
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.runner import Runner
from tests.helpers import tree

RETRYING = """
    tree: retrying
    budgets: {actions: 5, perception_streak: 3}
    root:
      selector:
        children:
          - sequence:
              children:
                - retry:
                    id: attempts
                    attempts: 3
                    child:
                      grasp: {id: grasp}
                - finalize: {reason: held}
          - wait_clarify: {reason: gave up}
"""


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


def run(tmp_path, *observers: RunObserver):
    ctx = RunContext(registry=default_registry(), limits=EpisodeLimits(5, 3, 100),
                     oracle=ScriptedOracle({"grasp": ["fault", "done"]}),
                     blackboard=Blackboard({"goal.object": "mug"}))
    path = tmp_path / "t.jsonl"
    result = Runner(tree(RETRYING), ctx, trace_path=str(path), observers=observers).run()
    return result, [json.loads(line) for line in path.read_text().splitlines()]


def test_an_observer_sees_header_each_tick_and_final_in_order_as_the_trace_holds_them(tmp_path):
    calls = Calls()
    result, lines = run(tmp_path, calls)
    kinds = [kind for kind, _ in calls.calls]
    assert kinds == ["started"] + ["ticked"] * result.ticks + ["finished"]
    header, *ticks, (final, got_result) = [payload for _, payload in calls.calls]
    assert got_result is result and final["decision"] == result.decision.value
    assert json.loads(json.dumps([header, *(t.record for t in ticks), final])) == lines
    assert [t.tick for t in ticks] == list(range(1, result.ticks + 1))
    assert [e.primitive for t in ticks for e in t.events] == ["grasp", "grasp"]
    assert all(t.visited == [tuple(v) for v in t.record["visited"]] for t in ticks)


def test_event_and_tick_callbacks_are_observers_seeing_the_same_run(tmp_path):
    events, ticks = [], []
    result, _ = run(tmp_path, EventObserver(events.append), TickObserver(ticks.append))
    assert events == result.events
    assert [e for t in ticks for e in t.events] == events
    assert [t.ledger.get("actions") for t in ticks if "actions" in t.ledger] == [1, 2]


def test_a_run_without_observers_records_nothing_and_decides_the_same(tmp_path):
    ctx = RunContext(registry=default_registry(), limits=EpisodeLimits(5, 3, 100),
                     oracle=ScriptedOracle({"grasp": ["fault", "done"]}),
                     blackboard=Blackboard({"goal.object": "mug"}))
    quiet = Runner(tree(RETRYING), ctx).run()
    watched, _ = run(tmp_path, Calls())
    assert (quiet.decision, quiet.reason, quiet.ticks) == (watched.decision, watched.reason, watched.ticks)
