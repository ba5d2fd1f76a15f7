"""`verify --clock logical|wall`: on the logical clock every worst case is a run the Runner makes.

The trees here were worked out by hand. Under the search's oracle a deadline check may pass early
(a call may take long) and is certain at the last tick entry the clock allows: on the logical clock
(a tick lasts exactly 0.05 s unless a call in it takes time) ceil(S / 0.05) entries after a start
before any call of its tick, one entry more after such a call; on a wall clock always
ceil(S / 0.05) + 1. Each reached bound's witness is replayed on the Runner with a logical clock
deciding the deadlines (each call instant, or a call before the timeout just under a tick), and
every run of the small trees is enumerated on the Runner: the bounds are the worst case, and no
run on a logical clock goes beyond them.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from typing import Any

import pytest

from bt_grasp.blackboard import Blackboard
from bt_grasp.cli import main
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.runner import Runner
from bt_grasp.tick_budget import episode_limits
from bt_grasp.verifier.clocks import WORLDS, CallTimes, replay_on_clock
from bt_grasp.verifier.core import run_costs, verify_tree
from bt_grasp.verifier.replay import Setup
from bt_grasp.verifier.report import render
from tests.helpers import tree

GOAL = {"goal.object": "target object"}  # what verify puts on the blackboard without a goal

# The tree: the timeout starts at 0 s, before any call: its deadline passes at the third
# entry (0.15 s), so grasps at ticks 1-3 on the logical clock; a wall clock may say "not yet" once
# more (4 grasps, and a run one tick longer).
DEADLINE_012 = """
    tree: grasp_within_a_deadline
    budgets: {actions: 10}
    root: {selector: {children: [
        sequence: {children: [
            timeout: {seconds: 0.12, child: {retry: {attempts: 10, child: {sequence: {children: [grasp, evaluate_grasp]}}}}},
            finalize: {reason: held}]},
        wait_clarify: {reason: no grasp in time}]}}
"""
# 0.3 s: six entries on the logical clock (grasps at ticks 1-6, ticks 7), seven on a wall clock.
DEADLINE_03 = DEADLINE_012.replace("0.12", "0.3")
# After a perception call in the timeout's first tick (and retrying the grasp alone): that call
# may take up to a tick, so the deadline may come one entry later on the logical clock too (4
# grasps on both clocks).
LOOK_THEN_012 = DEADLINE_012.replace(
    "sequence: {children: [\n            timeout",
    'sequence: {children: [\n            locate_object: {target: "{goal.object}"},\n            timeout').replace(
    "child: {sequence: {children: [grasp, evaluate_grasp]}}", "child: grasp")
# Perception calls: the streak of 5 ends the run at tick 6 before the 1 s deadline, on any clock.
LOOK_FOR_A_SECOND = """
    tree: look_for_a_second
    root: {selector: {children: [
        sequence: {children: [
            timeout: {seconds: 1.0, child: {retry: {attempts: 10, child: {locate_object: {target: "{goal.object}"}}}}},
            finalize: {reason: found}]},
        wait_clarify: {reason: not found in time}]}}
"""
# Nested: the outer deadline (0.15 s) is certain at the entry of tick 4 on the logical clock;
# a wall clock may hold it "not yet" up to tick 5.
NESTED = """
    tree: nested
    root: {selector: {children: [
        sequence: {children: [
            timeout: {id: outer, seconds: 0.15, child: {timeout: {id: inner, seconds: 0.3, child: grasp}}},
            finalize: {reason: held}]},
        wait_clarify: {reason: late}]}}
"""

BY_HAND = {  # tree -> (bounds on the logical clock, bounds on a wall clock)
    "deadline_012": (DEADLINE_012, {"actions": 3, "primitive:grasp": 3, "perception": 0, "ticks": 4},
                     {"actions": 4, "primitive:grasp": 4, "perception": 0, "ticks": 5}),
    "deadline_03": (DEADLINE_03, {"actions": 6, "primitive:grasp": 6, "perception": 0, "ticks": 7},
                    {"actions": 7, "primitive:grasp": 7, "perception": 0, "ticks": 8}),
    "look_then_012": (LOOK_THEN_012, {"actions": 4, "primitive:grasp": 4, "perception": 1, "ticks": 5},
                      {"actions": 4, "primitive:grasp": 4, "perception": 1, "ticks": 5}),
    "look_for_a_second": (LOOK_FOR_A_SECOND, {"actions": 0, "perception": 5, "ticks": 6},
                          {"actions": 0, "perception": 5, "ticks": 6}),
    "nested": (NESTED, {"actions": 1, "primitive:grasp": 1, "perception": 0, "ticks": 4},
               {"actions": 1, "primitive:grasp": 1, "perception": 0, "ticks": 5}),
}


def _context(spec: Any, oracle: Any, world: str | None = None) -> RunContext:
    """A run under `oracle`: with `world` None, the search's logical-clock model (the oracle
    answers each deadline check left open); else on a logical clock deciding each deadline,
    calls taking the time `world` gives (CallTimes)."""
    registry = default_registry()
    ctx = RunContext(registry=registry, limits=episode_limits(spec, registry), oracle=oracle,
                     blackboard=Blackboard(dict(GOAL)), explore_running=True,
                     logical_deadlines=world is None, deadlines_by_clock=world is not None)
    if world is not None:
        ctx.clock = clock = CallTimes(world)
        clock.ctx = ctx
    return ctx


class _Witness:
    """The witness's answers in order, its deadline answers left out (the clock decides them);
    any other question than the one recorded fails the replay."""

    def __init__(self, steps: list[dict[str, str]]) -> None:
        self.steps = [(s["node"], s["outcome"]) for s in steps if not s["node"].endswith("#deadline")]
        self.at = 0

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        assert self.at < len(self.steps), f"{node_id} asked after the witness ended"
        want = self.steps[self.at]
        if want[0] != node_id and node_id.endswith("#running"):
            return alphabet[0]  # a call the witness leaves short ends at once (the search's form)
        assert want[0] == node_id, f"{node_id} asked, the witness has {want[0]}"
        self.at += 1
        return want[1]


class _Enumerating:
    """Follows `prefix`, then answers each question with its first outcome, noting every
    question's alphabet (for the enumeration's next branches)."""

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.asked: list[int] = []  # the alphabet's size of each question, in order

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        i = len(self.asked)
        self.asked.append(len(alphabet))
        return alphabet[self.prefix[i] if i < len(self.prefix) else 0]


def _worst_of_every_run(spec: Any, world: str | None) -> Counter[str]:
    """The most of each cost over every run the Runner makes (see _context for `world`): every
    answer of every question (each call at every length), enumerated depth first."""
    worst: Counter[str] = Counter()
    todo: list[list[int]] = [[]]
    runs = 0
    while todo:
        prefix = todo.pop()
        oracle = _Enumerating(prefix)
        res = Runner(spec, _context(spec, oracle, world)).run()
        assert res.decision is not None, f"a run ended without a decision: {res.reason}"
        runs += 1
        for key, value in run_costs(res).items():
            worst[key] = max(worst[key], value)
        for i in range(len(oracle.asked) - 1, len(prefix) - 1, -1):
            for answer in range(1, oracle.asked[i]):
                todo.append([*prefix, *([0] * (i - len(prefix))), answer])
    assert runs > 1
    return worst


@pytest.mark.parametrize("name", list(BY_HAND))
def test_bounds_on_each_clock_match_the_hand_computation(name: str) -> None:
    """verify's logical-clock bounds and the wall clock's beside them are the hand-worked ones."""
    text, logical, wall = BY_HAND[name]
    res = verify_tree(tree(text), clock="logical")
    assert res.proven and res.clock == "logical" and not res.unreached
    assert res.bounds == dict(sorted(logical.items()))
    assert res.wall_bounds == dict(sorted(wall.items()))
    on_wall = verify_tree(tree(text), clock="wall")
    assert on_wall.proven and on_wall.clock == "wall" and on_wall.bounds == res.wall_bounds


@pytest.mark.parametrize("name", list(BY_HAND))
def test_every_witness_replays_to_its_bound_on_a_logical_clock(name: str) -> None:
    """Each worst case is reached by a run of the Runner whose timeouts read a logical clock,
    following the witness answer for answer, in one of the worlds (every call instant, or a
    call outside any timeout just under a tick period)."""
    text, _, _ = BY_HAND[name]
    spec = tree(text)
    res = verify_tree(spec, clock="logical")
    assert set(res.witnesses) == set(res.bounds)
    for key, steps in res.witnesses.items():
        reached = []
        for world in WORLDS:
            oracle = _Witness(steps)
            got = Runner(spec, _context(spec, oracle, world)).run()
            if oracle.at == len(oracle.steps) and got.decision is not None:
                reached.append(run_costs(got).get(key, 0))
        assert res.bounds[key] in reached, (key, reached)


@pytest.mark.parametrize("name", ["deadline_012", "look_then_012", "look_for_a_second", "nested"])
def test_bounds_are_the_worst_of_every_run(name: str) -> None:
    """Every run of the model the search explores (each call at every length, each open
    deadline check both ways), enumerated on the Runner: the worst of each cost is verify's
    bound. Every run on a logical clock in either world stays within it."""
    text, logical, _ = BY_HAND[name]
    spec = tree(text)
    worst = _worst_of_every_run(spec, None)
    assert {k: worst.get(k, 0) for k in logical} == logical
    for world in WORLDS:
        on_clock = _worst_of_every_run(spec, world)
        assert all(on_clock.get(k, 0) <= v for k, v in logical.items()), (world, on_clock)


def test_a_wall_clock_witness_is_no_logical_clock_run() -> None:
    """The wall clock's 4-grasp witness answers "not yet" at the third entry after the start,
    0.15 s past a 0.12 s deadline started at 0 s: on a logical clock that run goes otherwise."""
    spec = tree(DEADLINE_012)
    wall = verify_tree(spec, clock="wall")
    steps = wall.witnesses["actions"]
    assert wall.bounds["actions"] == 4 and any(s["node"].endswith("#deadline") for s in steps)
    setup = Setup(spec, default_registry(), None, clock="logical")
    for world in WORLDS:
        got = replay_on_clock(setup, steps, world)
        assert got is None or got["actions"] < 4


def test_default_output_shows_the_wall_clock_figure_beside(tmp_path, capsys) -> None:
    """`bt-grasp verify` reads the logical clock by default and prints the wall clock's figure
    beside each that differs; `--clock wall` prints the wall clock's; --json carries the clock."""
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(DEADLINE_012))
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "actions          3 (4 on a wall clock)" in out
    assert "ticks            4 (5 on a wall clock)" in out
    assert main(["verify", str(path), "--clock", "wall"]) == 0
    out = capsys.readouterr().out
    assert "on a wall clock)" not in out and "any check a wall clock allows" in out
    assert main(["verify", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["clock"] == "logical" and data["bounds"]["actions"] == 3
    assert data["wall_clock_bounds"]["actions"] == 4


def test_a_tree_without_timeout_is_verified_once() -> None:
    """Without a timeout the clock changes nothing: the same result, no wall figures beside."""
    text = DEADLINE_012.replace("timeout: {seconds: 0.12, child: ", "force_failure: {child: ")
    logical, wall = verify_tree(tree(text), clock="logical"), verify_tree(tree(text), clock="wall")
    assert logical.bounds == wall.bounds and not logical.wall_bounds
    assert logical.runs_explored == wall.runs_explored


def test_an_unfinished_logical_search_leaves_the_wall_figures_saying_so(monkeypatch) -> None:
    """A logical-clock search stopped by its limit claims nothing: the wall clock's result (its
    bounds hold on every clock) answers, with a note that these are the wall clock's figures."""
    from bt_grasp.verifier import clocks

    stopped = clocks.verify_reference
    monkeypatch.setattr(clocks, "verify_reference", lambda setup, runs, limit: stopped(setup, 3, limit))
    res = verify_tree(tree(DEADLINE_012), clock="logical")
    assert res.proven and res.clock == "wall" and res.bounds["actions"] == 4
    assert res.clock_note.startswith("the logical-clock search did not finish")
    assert "wall clock's figures" in "\n".join(render(res, "t"))


def test_a_bound_no_clock_run_reaches_is_an_upper_bound(monkeypatch) -> None:
    """A bound whose witness no replay on a logical clock reaches is printed `<=` (an upper
    bound), never as reached by a run."""
    from bt_grasp.verifier import clocks

    monkeypatch.setattr(clocks, "WORLDS", ())  # no world to replay in: nothing is reached
    res = verify_tree(tree(DEADLINE_012), clock="logical")
    assert res.proven and set(res.unreached) == {"actions", "primitive:grasp", "ticks"}
    text = "\n".join(render(res, "t"))
    assert "<= 3 (4 on a wall clock)" in text and "no witness run found on a logical clock" in text
