"""The live view as a specification: what a frame and a per-tick line say about a run, built
from trace records alone (structure, visited statuses, events, ledger changes)."""

from __future__ import annotations

import io

from fakes import BUSY, LIFT_THEN_FINALIZE, LIFT_WITH_DEADLINE, FakeStreamingRobot
from helpers import run_oracle, tree

from bt_grasp.live.render import RESET, STYLES, compact_line, fit, frame, tree_lines
from bt_grasp.live.state import LiveState
from bt_grasp.live.view import CLEAR_SCREEN, HOME, TerminalView, use_color
from bt_grasp.oracles import ScriptedOracle

STRUCTURE = {"id": "root", "type": "sequence", "children": [
    {"id": "survey", "type": "survey_scene"},
    {"id": "attempts", "type": "retry", "params": {"attempts": 3}, "children": [
        {"id": "grasp", "type": "grasp"}]},
    {"id": "also", "type": "retry", "params": {"attempts": 3, "scope": "attempts"}, "children": [
        {"id": "push", "type": "push"}]},
    {"id": "pushes", "type": "budget", "params": {"actions": 2}, "children": [
        {"id": "nudge", "type": "push"}]},
    {"id": "done", "type": "finalize"}]}
HEADER = {"type": "header", "tree": "t", "structure": STRUCTURE,
          "budgets": {"actions": 10, "perception_streak": 5, "max_ticks": 100}}


def tick(n: int, clock: float, visited: dict[str, str], events=(), ledger=None) -> dict:
    rec = {"type": "tick", "tick": n, "clock": clock, "visited": [[k, v] for k, v in visited.items()],
           "blackboard": {}, "events": list(events)}
    if ledger:
        rec["ledger"] = ledger
    return rec


def folded(*records: dict) -> LiveState:
    state = LiveState()
    for rec in records:
        state.fold(rec)
    return state


GRASPING = {"root": "RUNNING", "survey": "SUCCESS", "attempts": "RUNNING", "grasp": "RUNNING"}


def test_a_running_leaf_shows_logical_seconds_and_ticks_since_the_tick_it_started_in_began():
    state = folded(HEADER, tick(1, 0.3, {"root": "RUNNING", "survey": "SUCCESS"}),
                   tick(2, 1.0, GRASPING), tick(3, 1.5, GRASPING), tick(4, 2.25, GRASPING))
    assert state.running_leaves() == {"grasp": (2.25 - 0.3, 3)}   # composites are not listed
    done = {**GRASPING, "attempts": "SUCCESS", "grasp": "SUCCESS"}
    state.fold(tick(5, 2.5, done))
    assert state.running_leaves() == {}
    state.fold(tick(6, 2.75, GRASPING))                              # a new run of the leaf counts anew
    assert state.running_leaves() == {"grasp": (0.25, 1)}


def test_a_leaf_started_again_within_a_tick_counts_from_that_tick():
    again = [["root", "RUNNING"], ["attempts", "RUNNING"], ["grasp", "FAILURE"], ["grasp", "RUNNING"]]
    state = folded(HEADER, tick(1, 0.5, GRASPING), tick(2, 1.0, GRASPING))
    state.fold({**tick(3, 1.75, {}), "visited": again})
    assert state.status["grasp"] == "RUNNING" and state.running_leaves() == {"grasp": (0.75, 1)}


def test_budgets_left_come_from_the_header_limits_and_the_ledger_changes():
    assert [left for _, left, _ in folded(HEADER).budgets_left()] == [None, None, 100, None, None]
    state = folded(HEADER, tick(1, 0.1, {}, ledger={"actions": 1, "perception_streak": 0,
                                                    "retry_starts": {"attempts": 1}, "scoped_actions": {}}),
                   tick(2, 0.2, {}, ledger={"actions": 3, "retry_starts": {"attempts": 2},
                                            "scoped_actions": {"pushes": 2}}))
    # retries sharing a scope are one budget; `budget` nodes count actions per scope
    assert state.budgets_left() == [("actions", 7, 10), ("perception streak", 5, 5), ("ticks", 98, 100),
                                    ("retry attempts", 1, 3), ("budget pushes", 0, 2)]


def test_the_last_event_names_primitive_label_and_exec_status():
    event = {"primitive": "grasp", "node": "grasp", "watchdog_label": "EMPTY", "exec_status": "FAIL",
             "clock": 2.0}
    state = folded(HEADER, tick(1, 2.05, GRASPING, events=[event]), tick(2, 2.1, GRASPING))
    assert state.last_event == event
    assert "last event: grasp at grasp: EMPTY, FAIL (clock 2.00 s)" in frame(state)
    assert "last grasp at grasp: EMPTY, FAIL" in compact_line(state)


def test_a_frame_draws_each_node_with_its_status_and_running_time():
    state = folded(HEADER, tick(1, 0.5, GRASPING), tick(2, 1.0, GRASPING))
    lines = frame(state)
    assert lines[0] == "t  tick 2  clock 1.00 s"
    assert lines[1].startswith("left: actions ?/10 · perception streak ?/5 · ticks 98/100")
    body = lines[lines.index("") + 1:]
    assert body[0] == "root [sequence]  RUNNING"
    assert body[1] == "├─ survey [survey_scene]  SUCCESS"
    assert body[3] == "│  └─ grasp  RUNNING  1.00 s, 2 ticks"
    assert body[-1] == "└─ done [finalize]  -"                    # not ticked this tick


def test_colour_only_when_asked_and_every_status_is_spelled_out_without_it():
    state = folded(HEADER, tick(1, 0.5, GRASPING))
    plain, coloured = tree_lines(state), tree_lines(state, color=True)
    assert not any("\x1b" in line for line in plain)
    assert f"{STYLES['RUNNING']}grasp{RESET}" in coloured[3]
    assert f"{STYLES['SUCCESS']}  SUCCESS{RESET}" in coloured[1]
    assert use_color(io.StringIO(), forced=True, env={}) is True
    assert use_color(io.StringIO(), forced=True, env={"NO_COLOR": "1"}) is False
    assert use_color(io.StringIO(), forced=False, env={}) is False  # not a terminal


def test_a_frame_fits_the_terminal_cutting_lines_and_folding_subtrees_not_ticked():
    state = folded(HEADER, tick(1, 0.5, GRASPING))
    assert all(len(line) <= 20 for line in frame(state, width=20))
    assert fit([("abcdef", None), ("ghij", "RUNNING")], 8, False) == "abcdefg…"
    small = frame(state, height=11)
    assert len(small) == 11
    assert small[-3:] == ["├─ also [retry]  -  (+1 not ticked)", "├─ pushes [budget]  -  (+1 not ticked)",
                          "└─ done [finalize]  -"]
    tiny = frame(state, height=9)
    assert len(tiny) == 9 and tiny[-1] == "… 3 more lines"


def test_a_new_header_after_ticks_starts_a_new_run():
    state = folded(HEADER, tick(1, 0.5, GRASPING), {"type": "final", "decision": "FINALIZE", "reason": "x"})
    state.fold({**HEADER, "tree": "again"})
    assert (state.tick, state.final, state.running, state.header["tree"]) == (0, None, {}, "again")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_frames_redraw_in_place_after_clearing_the_screen_only_once():
    out = Tty()
    view = TerminalView(out, mode="auto", min_interval=0.0, env={})
    assert view.frames and view.color
    for rec in (HEADER, tick(1, 0.5, GRASPING), tick(2, 1.0, GRASPING)):
        view.feed(rec)
    view.close()
    text = out.getvalue()
    assert text.count(CLEAR_SCREEN) == 1 and text.count(HOME) == 3
    assert "\x1b[K\n" in text and text.endswith("\x1b[?25h")


def test_frames_are_drawn_at_most_once_per_interval_but_the_last_state_always_is():
    out = Tty()
    view = TerminalView(out, mode="frames", min_interval=3600.0, env={"NO_COLOR": "1"})
    view.feed(HEADER)
    for n in range(1, 50):
        view.feed(tick(n, n * 0.05, GRASPING))
    view.feed({"type": "final", "decision": "FINALIZE", "reason": "ok", "ticks": 49})
    text = out.getvalue()
    assert text.count(HOME) == 2 and "\x1b[3" not in text   # first and final frame; no colour
    assert "tick 49" in text and "FINALIZE: ok" in text


def test_off_a_terminal_each_tick_is_one_compact_line():
    out = io.StringIO()
    view = TerminalView(out, mode="auto", env={})
    assert not view.frames and not view.color
    for rec in (HEADER, tick(1, 0.5, GRASPING), tick(2, 1.0, GRASPING)):
        view.feed(rec)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[1].startswith("tick 2 | clock 1.00 s | running grasp 1.00 s/2 ticks | last none yet")


def test_a_run_fed_to_the_view_shows_a_leaf_running_across_ticks(tmp_path):
    """The runner's records, with or without a trace file, drive the same view."""
    out = io.StringIO()
    view = TerminalView(out, mode="lines", env={})
    from bt_grasp.context import EpisodeLimits, RunContext
    from bt_grasp.default_registry import default_registry
    from bt_grasp.runner import Runner

    spec = tree(BUSY)
    ctx = RunContext(registry=spec.registry or default_registry(), limits=EpisodeLimits(),
                     oracle=ScriptedOracle({}))
    res = Runner(spec, ctx, observers=[view]).run()
    assert res.reason == "moved" and res.ticks == 4
    lines = out.getvalue().splitlines()
    assert " | running move " in lines[0] and "/1 ticks" in lines[0]
    assert "/3 ticks" in lines[2] and "running" not in lines[3]
    assert view.state.final["decision"] == "FINALIZE"
    trace = tmp_path / "t.jsonl"
    run_oracle(tree(BUSY), ScriptedOracle({}), trace=str(trace))
    from bt_grasp.live.state import state_at
    from bt_grasp.trace import read_trace

    t = read_trace(trace)
    at3 = state_at(t.header, t.ticks, 3)
    assert at3.running_leaves()["move"] == (at3.clock, 3)   # started in tick 1, at clock 0


def live_run(text: str, robot) -> tuple[list[tuple[int, dict, dict | None, str]], object]:
    """Run `text` on a fake streaming robot, folding the runner's records into a LiveState; per
    tick (tick, running leaves, last event, compact line)."""
    from bt_grasp.context import EpisodeLimits, RunContext
    from bt_grasp.default_registry import default_registry
    from bt_grasp.observers import RecordObserver
    from bt_grasp.runner import Runner

    seen: list[tuple[int, dict, dict | None, str]] = []
    state = LiveState()

    def record(rec: dict) -> None:
        state.fold(rec)
        if rec["type"] == "tick":
            seen.append((state.tick, state.running_leaves(), state.last_event, compact_line(state)))

    ctx = RunContext(registry=default_registry(), limits=EpisodeLimits(), driver=robot)
    return seen, Runner(tree(text), ctx, observers=[RecordObserver(record)]).run()


def test_a_primitive_polled_across_ticks_is_shown_running_until_its_event():
    """The primitive leaf lifecycle: started in tick 1, polled each tick, its event at the end."""
    seen, res = live_run(LIFT_THEN_FINALIZE, FakeStreamingRobot({"lift": 5}))
    assert res.reason == "lifted"
    running = [(tick, leaves["up"][1]) for tick, leaves, _, _ in seen if "up" in leaves]
    assert running == [(n, n) for n in range(1, len(running) + 1)] and len(running) >= 4
    assert all(event is None for _, _, event, _ in seen[:len(running)])
    assert seen[-1][2]["primitive"] == "lift" and seen[-1][1] == {}


def test_a_leaf_halted_at_its_deadline_stops_running_and_its_event_says_so():
    seen, res = live_run(LIFT_WITH_DEADLINE, FakeStreamingRobot({"lift": 100}))
    assert res.reason == "too slow"
    assert "up" in seen[-2][1] and seen[-1][1] == {}
    assert "last lift at up: TIMEOUT, FAIL, halted (timeout)" in seen[-1][3]


def test_a_halted_leaf_is_drawn_halted_not_running():
    halted = {**GRASPING, "attempts": "FAILURE"}
    rec = tick(2, 1.0, halted)
    rec["blackboard"] = {"grasp.halted": "halted"}
    state = folded(HEADER, tick(1, 0.5, GRASPING), rec)
    assert state.running_leaves() == {} and state.halted == {"grasp": "halted"}
    assert "│  └─ grasp  halted" in frame(state)
