"""Which clock a tree's timeouts read while it is verified: `verify --clock logical|wall`.

Either way, under the search's oracle a deadline check the clock leaves open is answered both
ways (a call may take long, so a deadline may pass early), and the deadline is certain at the
last tick entry the clock allows (LogicalTimeout.limit):

*wall*: a tick may last longer than its period by itself, so `tick_allowance` entries after the
start (ceil(seconds / period) + 1).

*logical* (the clock of a simulated run): a tick lasts exactly its period unless a call in it
takes time, so a timeout started before any call of its tick has its deadline pass
ceil(seconds / period) entries after its start; one started after such a call, one entry later
(the call may have taken up to a period). The reference search ticks the compiled tree with
`RunContext.logical_deadlines`. Each bound's witness is then replayed on the Runner with a
logical clock deciding every deadline (`CallTimes`: the calls take the time a world may give
them, not their simulated time); a bound no such replay reaches is reported as an upper bound
(`unreached`, printed `<=`), never as reached.

Every logical-clock run is a wall-clock run, so the wall bounds are never below the logical
ones: both are reported where they differ. A wall-clock counterexample from a witness run past
the tick cap (method "witness") that replays past the cap on the logical clock too is the answer
on that clock without its search.
"""

from __future__ import annotations

from dataclasses import replace

from bt_grasp.context import LogicalClock, RunContext
from bt_grasp.runner import Runner
from bt_grasp.verifier.compiled.reference import verify_reference
from bt_grasp.verifier.replay import Setup
from bt_grasp.verifier.report import VerifyResult
from bt_grasp.verifier.summary.proof import undecided
from bt_grasp.verifier.summary.witness import run_costs
from bt_grasp.verifier.symbolic.properties import PropertyResult

# why the reference search answers (printed in the first line of the report)
_WHY = "the logical clock: each deadline passes by the last tick a logical clock allows"
# The worlds a witness is replayed in: every call instant, or a call ticked outside any timeout
# taking just under a tick period (a timeout started after it begins late in its tick).
WORLDS = ("instant", "late start")
_JUST_UNDER = 0.98  # of a tick period


class CallTimes(LogicalClock):
    """The Runner's logical clock, with each call taking the time its `world` gives instead of
    its simulated time: 0 s (instant), or just under a tick period for a call with no timeout
    running above it (late start). A tick still lasts at least its period."""

    def __init__(self, world: str) -> None:
        super().__init__()
        self.world = world
        self.ctx: RunContext | None = None

    def advance(self, seconds: float) -> None:
        """A call ended: it took the world's time (a call that takes none in simulation, none)."""
        if seconds > 0 and self.world == "late start" and self.ctx is not None and not self.ctx.deadlines:
            super().advance(_JUST_UNDER * self.tick_period)

    def end_tick(self, tick_start: float) -> None:
        super().advance(tick_start + self.tick_period - self.now)


class _Following:
    """The witness's answers in order, deadline checks left out (the clock decides them); a
    call going on that the witness does not name ends at once (the search's short form)."""

    def __init__(self, steps: list[dict[str, str]]) -> None:
        self.steps = [(s["node"], s["outcome"]) for s in steps if not s["node"].endswith("#deadline")]
        self.at = 0
        self.diverged = False

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        want = self.steps[self.at] if self.at < len(self.steps) else None
        if want is not None and want[0] == node_id and want[1] in alphabet:
            self.at += 1
            return want[1]
        if want is None or not node_id.endswith("#running"):
            self.diverged = True
        return alphabet[0]


def replay_on_clock(setup: Setup, steps: list[dict[str, str]], world: str) -> dict[str, int] | None:
    """The costs of the witness `steps` replayed on the Runner with a logical clock deciding each
    deadline in `world` (WORLDS); None when the run does not follow the witness."""
    oracle, clock = _Following(steps), CallTimes(world)
    ctx = setup.context(oracle)
    ctx.clock, ctx.logical_deadlines, ctx.deadlines_by_clock = clock, False, True
    clock.ctx = ctx
    res = Runner(setup.spec, ctx).run()
    if oracle.diverged or oracle.at < len(oracle.steps):
        return None
    return dict(run_costs(res))


def on_logical_clock(setup: Setup, wall: VerifyResult, max_runs: int,
                     time_limit: float | None) -> VerifyResult:
    """The tree verified on the logical clock, with the wall clock's bounds beside (`wall`: the
    result of the wall-clock search, already made). A logical search that does not finish within
    its limits leaves the wall result in force, saying so: its bounds still hold on any clock."""
    if wall.method == "witness" and wall.counterexample:
        # a run past the cap that replays so on the logical clock too settles it without a search
        steps = [(step["node"], step["outcome"]) for step in wall.counterexample]
        again = undecided(setup, steps)
        if again is not None:
            again.runs_explored, again.clock = wall.runs_explored, "logical"
            return again
    logical = verify_reference(setup, max_runs, time_limit)
    if not logical.complete:
        wall.clock_note = (f"the logical-clock search did not finish ({logical.runs_explored} partial "
                           "runs): these are the wall clock's figures, upper bounds on the logical clock")
        return wall
    logical.method, logical.why_reference = "reference", _WHY
    logical.clock = "logical"
    if logical.proven:
        _replayed_on_clock(setup, logical)
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


def _replayed_on_clock(setup: Setup, result: VerifyResult) -> None:
    """Keep a bound as reached only if its witness, replayed with a logical clock deciding the
    deadlines, reaches it in one of WORLDS; else it is an upper bound (`unreached`)."""
    replays: dict[tuple[tuple[tuple[str, str], ...], str], dict[str, int]] = {}

    def costs(steps: list[dict[str, str]], world: str) -> dict[str, int]:
        """One replay per witness and world: bounds often share their witness run."""
        key = (tuple((s["node"], s["outcome"]) for s in steps), world)
        if key not in replays:
            replays[key] = replay_on_clock(setup, steps, world) or {}
        return replays[key]

    for key, value in result.bounds.items():
        steps = result.witnesses.get(key)
        if steps is None or key in result.unreplayed or value == 0:  # every run reaches 0
            continue
        if not any(costs(steps, world).get(key, 0) == value for world in WORLDS):
            result.unreached.append(key)
    if result.unreached:
        result.clock_note = ("<=: no witness run found on a logical clock (every call instant, or "
                             "one just under a tick before a timeout starts) reaches it: an upper bound")


def _on_logical(prop: PropertyResult) -> PropertyResult:
    """A property checked over the wall clock's runs: one that holds there holds on the logical
    clock too (its runs are among them); a violation may need a timing only a wall clock gives."""
    if prop.holds is not False:
        return prop
    return replace(prop, holds=None, witness=[], ending="",
                   why="violated on a wall clock (`--clock wall` prints the run); the logical "
                       "clock's runs are not checked apart")
