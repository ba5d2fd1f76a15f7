"""Which clock a tree's timeouts read while it is verified: `verify --clock logical|wall`.

*wall*: a tick may last longer than its period, so every deadline check the clock leaves open
(after the timeout's start, before `tick_allowance` entries) is a choice the search answers both
ways (LogicalTimeout._due under an oracle). Its bounds hold for every timing; its witnesses are
runs of those answers, which a given clock may not produce.

*logical*: the Runner's LogicalClock decides each check, as in a simulated run: a tick lasts
one period, and a call adds the time its simulated result says at its end (NOMINAL_DURATION: a
primitive 2 s, a perception call 0.2 s; a running tick adds nothing more). The reference
search ticks the compiled tree itself with `RunContext.deadlines_by_clock`, so its states hold
the time left to each deadline and its witnesses replay to their bounds on that clock. Every
logical-clock run is a run of the wall-clock answers (a tick lasts at least one period), so the
wall bounds are never below the logical ones: both are reported where they differ.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bt_grasp.verifier.compiled.reference import verify_reference
from bt_grasp.verifier.replay import Setup
from bt_grasp.verifier.report import VerifyResult
from bt_grasp.verifier.symbolic.properties import PropertyResult

CLOCKS = ("logical", "wall")
# why the reference search answers (printed in the first line of the report)
_WHY = "the logical clock decides each deadline, as in a simulated run"


def has_timeouts(spec: Any) -> bool:
    return any(node.type == "timeout" for node in spec.root.walk())


def on_logical_clock(setup: Setup, wall: VerifyResult, max_runs: int,
                     time_limit: float | None) -> VerifyResult:
    """The tree verified on the logical clock, with the wall clock's bounds beside (`wall`: the
    result of the wall-clock search, already made). A logical search that does not finish within
    its limits leaves the wall result in force, saying so: its bounds still hold on any clock."""
    logical = verify_reference(setup, max_runs, time_limit)
    if not logical.complete:
        wall.clock_note = (f"the logical-clock search did not finish ({logical.runs_explored} partial "
                           "runs): these are the wall clock's figures, upper bounds on the logical clock")
        return wall
    logical.method, logical.why_reference = "reference", _WHY
    logical.clock = "logical"
    if wall.proven:
        logical.wall_bounds = dict(wall.bounds)
    elif logical.proven:
        logical.clock_note = f"on a wall clock: {wall.problem}"
    logical.properties = [_on_logical(p) for p in wall.properties]
    # `--rates` solves the wall clock's run graph: a deadline check is an open question there,
    # so each figure is an interval that holds the logical clock's value
    logical.graph, logical.graph_root = wall.graph, wall.graph_root
    logical.outcome_classes = wall.outcome_classes
    return logical


def _on_logical(prop: PropertyResult) -> PropertyResult:
    """A property checked over the wall clock's runs: one that holds there holds on the logical
    clock too (its runs are among them); a violation may need a timing only a wall clock gives."""
    if prop.holds is not False:
        return prop
    return replace(prop, holds=None, witness=[], ending="",
                   why="violated on a wall clock (`--clock wall` prints the run); the logical "
                       "clock's runs are not checked apart")
