"""`verify --clock logical|wall`: on the logical clock every worst case is a run the Runner makes.

The trees here were worked out by hand on the logical clock (a tick lasts 0.05 s; a simulated
call adds its nominal time at its end: a grasp 2 s, a perception call 0.2 s; a running tick adds
nothing more) and on a wall clock (a deadline of S seconds is certain ceil(S / 0.05) + 1 tick
entries after its start and may pass at any check before). Each witness is replayed on the
Runner with the logical clock deciding the deadlines, answer for answer, and every run of the
small trees is enumerated on the Runner to show the bounds are the worst case, not one run.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from typing import Any

import pytest

from bt_grasp.blackboard import Blackboard
from bt_grasp.cli import main
from bt_grasp.context import LogicalClock, RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import SequenceOracle
from bt_grasp.runner import EpisodeResult, Runner
from bt_grasp.tick_budget import episode_limits
from bt_grasp.verifier.core import run_costs, verify_tree
from bt_grasp.verifier.report import render
from tests.helpers import tree

GOAL = {"goal.object": "target object"}  # what verify puts on the blackboard without a goal

# The tree: one grasp ends at 2 s, past the 0.12 s deadline, so one attempt fits on the
# logical clock; a wall clock may keep the deadline "not yet" for 3 more tick entries (4 grasps).
DEADLINE_012 = """
    tree: grasp_within_a_deadline
    budgets: {actions: 10}
    root: {selector: {children: [
        sequence: {children: [
            timeout: {seconds: 0.12, child: {retry: {attempts: 10, child: {sequence: {children: [grasp, evaluate_grasp]}}}}},
            finalize: {reason: held}]},
        wait_clarify: {reason: no grasp in time}]}}
"""
# 5 s: grasps end at 2 and 4 s, the third starts at 4 s (left 1 s) and ends past the deadline: 3.
# Ticks: one grasp running from the start meets the deadline at entry 101 (100 ticks of 0.05 s);
# a wall clock may hold it "not yet" up to entry 101 after the start, which is tick 102.
DEADLINE_5 = DEADLINE_012.replace("0.12", "5.0")
# Perception calls of 0.2 s: the fifth ends at 1.0 s, the deadline, in tick 5.
LOOK_FOR_A_SECOND = """
    tree: look_for_a_second
    root: {selector: {children: [
        sequence: {children: [
            timeout: {seconds: 1.0, child: {retry: {attempts: 10, child: {locate_object: {target: "{goal.object}"}}}}},
            finalize: {reason: found}]},
        wait_clarify: {reason: not found in time}]}}
"""
# The timeout starts at 0.2 s inside tick 1 (after a perception call): its deadline at 0.5 s is
# met at the entry of tick 8 on both clocks (a tick of 0.2 s, then 6 of 0.05 s); one grasp fits
# on the logical clock, five (the retry's attempts) on a wall clock.
LOOK_THEN_GRASP = """
    tree: look_then_grasp_in_time
    budgets: {actions: 5}
    root: {selector: {children: [
        sequence: {children: [
            locate_object: {target: "{goal.object}"},
            timeout: {seconds: 0.3, child: {retry: {attempts: 5, child: {sequence: {children: [grasp, evaluate_grasp]}}}}},
            finalize: {reason: held}]},
        wait_clarify: {reason: no grasp in time}]}}
"""

# Nested: the outer deadline (0.15 s) comes first on any one clock, at the entry of tick 4; a
# wall clock may hold it "not yet" up to entry 4 after its start (tick 5).
NESTED = """
    tree: nested
    root: {selector: {children: [
        sequence: {children: [
            timeout: {id: outer, seconds: 0.15, child: {timeout: {id: inner, seconds: 0.3, child: grasp}}},
            finalize: {reason: held}]},
        wait_clarify: {reason: late}]}}
"""

BY_HAND = {  # tree -> (bounds on the logical clock, bounds on a wall clock)
    "deadline_012": (DEADLINE_012, {"actions": 1, "primitive:grasp": 1, "perception": 0, "ticks": 4},
                     {"actions": 4, "primitive:grasp": 4, "perception": 0, "ticks": 5}),
    "deadline_5": (DEADLINE_5, {"actions": 3, "primitive:grasp": 3, "perception": 0, "ticks": 101},
                   {"actions": 10, "primitive:grasp": 10, "perception": 0, "ticks": 102}),
    "look_for_a_second": (LOOK_FOR_A_SECOND, {"actions": 0, "perception": 5, "ticks": 5},
                          {"actions": 0, "perception": 5, "ticks": 6}),
    "look_then_grasp": (LOOK_THEN_GRASP, {"actions": 1, "primitive:grasp": 1, "perception": 1, "ticks": 8},
                        {"actions": 5, "primitive:grasp": 5, "perception": 1, "ticks": 8}),
    "nested": (NESTED, {"actions": 1, "primitive:grasp": 1, "perception": 0, "ticks": 4},
               {"actions": 1, "primitive:grasp": 1, "perception": 0, "ticks": 5}),
}


def _context(spec: Any, oracle: Any) -> RunContext:
    """A run under `oracle` whose timeouts read the logical clock, as in a simulated run."""
    registry = default_registry()
    return RunContext(registry=registry, limits=episode_limits(spec, registry), oracle=oracle,
                      blackboard=Blackboard(dict(GOAL)), clock=LogicalClock(),
                      explore_running=True, deadlines_by_clock=True)


def _replay(spec: Any, steps: list[dict[str, str]]) -> EpisodeResult:
    """The witness, answer for answer (SequenceOracle: another question than the one recorded,
    or one after the end, fails the replay)."""
    oracle = SequenceOracle([(s["node"], s["outcome"]) for s in steps])
    res = Runner(spec, _context(spec, oracle)).run()
    assert len(oracle.choices) == len(steps), "the run ended before the witness did"
    return res


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


def _worst_of_every_run(spec: Any) -> Counter[str]:
    """The most of each cost over every run the Runner makes on the logical clock: every
    answer of every question (each call at every length), enumerated depth first."""
    worst: Counter[str] = Counter()
    todo: list[list[int]] = [[]]
    runs = 0
    while todo:
        prefix = todo.pop()
        oracle = _Enumerating(prefix)
        res = Runner(spec, _context(spec, oracle)).run()
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
    assert res.proven and res.clock == "logical"
    assert res.bounds == dict(sorted(logical.items()))
    assert res.wall_bounds == dict(sorted(wall.items()))
    on_wall = verify_tree(tree(text), clock="wall")
    assert on_wall.proven and on_wall.clock == "wall" and on_wall.bounds == res.wall_bounds


@pytest.mark.parametrize("name", list(BY_HAND))
def test_every_witness_replays_to_its_bound_on_the_logical_clock(name: str) -> None:
    """Each worst case is reached by a run of the Runner whose timeouts read the logical clock,
    following the witness answer for answer (no deadline is ever answered by the oracle)."""
    text, _, _ = BY_HAND[name]
    spec = tree(text)
    res = verify_tree(spec, clock="logical")
    assert set(res.witnesses) == set(res.bounds)
    for key, steps in res.witnesses.items():
        assert not any(s["node"].endswith("#deadline") for s in steps)
        got = _replay(spec, steps)
        assert got.decision is not None
        assert run_costs(got).get(key, 0) == res.bounds[key], key


@pytest.mark.parametrize("name", ["deadline_012", "look_for_a_second", "look_then_grasp", "nested"])
def test_bounds_are_the_worst_of_every_logical_clock_run(name: str) -> None:
    """Every run of the Runner on the logical clock, each call at every length it may run,
    enumerated: the worst of each cost is verify's bound (sound and reached)."""
    text, logical, _ = BY_HAND[name]
    worst = _worst_of_every_run(tree(text))
    assert {k: worst.get(k, 0) for k in logical} == logical


def test_a_wall_clock_witness_is_no_logical_clock_run() -> None:
    """The wall clock's 4-grasp witness keeps the deadline "not yet" after a 2 s grasp: on the
    logical clock the deadline has passed then, and the run gives up after one grasp."""
    spec = tree(DEADLINE_012)
    wall = verify_tree(spec, clock="wall")
    steps = wall.witnesses["actions"]
    assert wall.bounds["actions"] == 4 and any(s["node"].endswith("#deadline") for s in steps)
    oracle = SequenceOracle([(s["node"], s["outcome"]) for s in steps])
    res = Runner(spec, _context(spec, oracle)).run()
    assert run_costs(res)["actions"] == 1 and len(oracle.choices) < len(steps)
    assert res.reason == "no grasp in time"


def test_default_output_shows_the_wall_clock_figure_beside(tmp_path, capsys) -> None:
    """`bt-grasp verify` reads the logical clock by default and prints the wall clock's figure
    beside each that differs; `--clock wall` prints the wall clock's; --json carries the clock."""
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(DEADLINE_012))
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "actions          1 (4 on a wall clock)" in out
    assert "ticks            4 (5 on a wall clock)" in out
    assert main(["verify", str(path), "--clock", "wall"]) == 0
    out = capsys.readouterr().out
    assert "(4 on a wall clock)" not in out and "any check a wall clock allows" in out
    assert main(["verify", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["clock"] == "logical" and data["bounds"]["actions"] == 1
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
