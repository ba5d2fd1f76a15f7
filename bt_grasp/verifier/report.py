"""The verifier's result, its stable JSON form and the text a newcomer reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Printed under the table so that "-" and "unbounded" are never left unexplained.
_NO_STATIC = "-: no static bound (the structure alone does not bound ticks)"
_UNBOUNDED = ("unbounded: an unbounded repeat, a BT.CPP retry of -1, or a reactive/pipeline "
              "composite re-ticking it sits above; only the search bounds it")
_STATIC = "static bound: from the tree's structure and literal budgets alone, without the search"
_WALL_CLOCK = ("timeouts: a deadline may pass at any check a wall clock allows (a tick may last "
               "longer than its 0.05 s), and the search answers each check both ways: the bounds "
               "and witnesses cover wall-clock timings (`--clock logical`: the figures of a "
               "simulated run's clock, where a run may reach less)")
_LOGICAL_CLOCK = ("timeouts: on the logical clock (a tick lasts 0.05 s unless a call in it takes time) a "
                  "deadline may pass early (a call that takes long) and has passed by the last tick "
                  "entry the clock allows (ceil(seconds / 0.05) after a start before any call of its "
                  "tick, one more after one); each witness is replayed on a logical clock deciding the "
                  "deadlines; `--clock wall` covers every timing a wall clock allows")
# Each timeout's checks are answered on their own, so with two that can run at once a witness
# may pass the later deadline while the earlier one is "not yet": no one clock does that.
_TIMEOUTS_APART = ("several timeouts: each one's checks are answered on their own, so a witness may "
                   "combine answers no one clock gives (a later deadline passed, an earlier one not "
                   "yet); such a bound is an upper bound, its witness a run of the answers, not of a clock")
_MAX_STEPS_SHOWN = 40


@dataclass
class VerifyResult:
    proven: bool
    bounds: dict[str, int]
    runs_explored: int
    counterexample: list[dict[str, str]] | None
    problem: str | None = None
    path: list[str] = field(default_factory=list)
    unrouted: list[str] = field(default_factory=list)
    static_bounds: dict[str, int | None] = field(default_factory=dict)
    endings: dict[str, int] = field(default_factory=dict)
    complete: bool = True
    states: int = 0
    witnesses: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    # (steps before the loop, steps in the loop) when the counterexample repeats a loop
    loop: tuple[int, int] | None = None
    # "symbolic": the model's search; "reference": the compiled tree's own search (a node class
    # without a model: `why_reference`); "summary": compositional bounds, each reached by its witness;
    # "witness": a witness run of the summary past the tick cap, replayed, as the counterexample
    method: str = "search"
    why_reference: str = ""
    # the tick cap in force ({"value", "source": given | structure | default}) and, in words
    tick_cap: dict[str, Any] = field(default_factory=dict)
    tick_cap_text: str = ""
    longest: int | None = None  # the most ticks any run takes (the symbolic search), cap or not
    unreplayed: list[str] = field(default_factory=list)  # witnesses kept but not replayed
    # bounds that are upper bounds no witness run reached (the summary answered: method "summary")
    unreached: list[str] = field(default_factory=list)
    # node id -> ids from the root down to it (for printing steps as paths through the tree)
    node_paths: dict[str, list[str]] = field(default_factory=dict, repr=False)
    # the tree has a timeout: its deadline checks are answered as a wall clock may (see render)
    wall_clock: bool = False
    timeouts: int = 0  # how many timeout nodes the tree has (several: see _TIMEOUTS_APART)
    # the clock the timeouts read ("logical": the Runner's, as in a simulated run; "wall": every
    # timing a wall clock allows, see verifier/clocks.py), the wall clock's bounds beside the
    # logical clock's, and what else to know of the clock (a search that did not finish)
    clock: str = "wall"
    wall_bounds: dict[str, int] = field(default_factory=dict)
    clock_note: str = ""
    # the tree's properties, each HOLDS / VIOLATED (with a replayed witness) / NOT CHECKED
    properties: list[Any] = field(default_factory=list)
    # the exact search's run graph and its initial state (None when another way answered)
    graph: Any = field(default=None, repr=False, compare=False)
    graph_root: Any = field(default=None, repr=False, compare=False)
    # per leaf answered by one outcome per status: each answer -> the outcomes it stands for
    outcome_classes: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict, repr=False)

    @property
    def properties_hold(self) -> bool:
        return all(p.holds is True for p in self.properties)

    def to_json(self) -> dict[str, Any]:
        return {"proven": self.proven, "bounds": self.bounds, "runs_explored": self.runs_explored,
                "counterexample": self.counterexample, "problem": self.problem, "path": self.path,
                "unrouted": self.unrouted, "static_bounds": self.static_bounds,
                "endings": self.endings, "complete": self.complete, "states": self.states,
                "witnesses": self.witnesses, "tick_cap": self.tick_cap, "method": self.method,
                "longest_run_ticks": self.longest, "unreached": self.unreached,
                "wall_clock": self.wall_clock, "clock": self.clock,
                "wall_clock_bounds": self.wall_bounds, "clock_note": self.clock_note,
                "properties": [p.to_json() for p in self.properties]}

    def step_path(self, node: str) -> str:
        """'root > retry_1 > g' for the choice id 'g' (or 'g#duration')."""
        base, _, extra = node.partition("#")
        ids = self.node_paths.get(base, [base])
        return " > ".join(ids) + (f" ({extra})" if extra else "")


def _table(res: VerifyResult) -> list[str]:
    rows = [("bound", "worst case", "static bound")]
    notes = set()
    for key, value in res.bounds.items():
        if key not in res.static_bounds:
            static = "-"
            notes.add(_NO_STATIC)
        elif res.static_bounds[key] is None:
            static = "unbounded"
            notes.add(_UNBOUNDED)
        else:
            static = str(res.static_bounds[key])
        shown = f"<= {value}" if key in res.unreached else str(value)
        wall = res.wall_bounds.get(key, value)
        if wall != value:
            shown += f" ({wall} on a wall clock)"
        rows.append((key, shown, static))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    lines = [f"  {a:<{w0}}  {b:>{w1}}  {c}" for a, b, c in rows]
    return lines + [f"  {n}" for n in [_STATIC, *sorted(notes)]]


def _steps(res: VerifyResult, steps: list[dict[str, str]]) -> list[str]:
    """One line per step; a run of equal steps (a call going on tick after tick) as one line."""
    lines: list[str] = []
    i = 0
    while i < len(steps) and len(lines) < _MAX_STEPS_SHOWN:
        j = i + 1
        while j < len(steps) and steps[j] == steps[i]:
            j += 1
        s = steps[i]
        line = f"  {i + 1:>4}. {res.step_path(s['node'])} -> {s['outcome']}"
        if j - i > 2:
            lines.append(f"{line}  (steps {i + 1}-{j} alike)")
        else:
            j = i + 1
            lines.append(line)
        i = j
    if i < len(steps):
        lines.append(f"        ... {len(steps) - i} more steps (all in --json)")
    return lines


def _properties(res: VerifyResult) -> list[str]:
    """Each property's verdict; a violation with the run that shows it (replayed)."""
    if not res.properties:
        return []
    out = ["properties (over every run):"]
    for p in res.properties:
        verdict = {True: "HOLDS", False: "VIOLATED", None: "NOT CHECKED"}[p.holds]
        out.append(f"  {verdict:<11}  {p.name}: {p.text}")
        if p.holds is False:
            out.append(f"    witness (replayed on the Runner, ends {p.ending}):")
            out += ["  " + line for line in _steps(res, [s for s in p.witness
                                                        if not s["node"].endswith("#running")])]
        elif p.why:
            out.append(f"    ({p.why})")
    return out


def render(res: VerifyResult, name: str, witness: str | None = None) -> list[str]:
    """The report as lines of text; `witness`: also print the run reaching that bound."""
    if res.method == "summary" and res.unreached:
        out = [f"{name}: bounds from the tree's structure, which proves every run decides within "
               f"the tick cap; the search did not settle the tree within its time ({res.runs_explored} "
               "partial runs: stretches of a run from one choice to the next), so bounds marked <= "
               "are upper bounds no witness run reached; `verify --exact` searches on until every "
               "bound is exact"]
    elif res.method == "summary":
        out = [f"{name}: bounds from the tree's structure; the structure proves every run decides "
               f"within the tick cap, and each bound's witness, replayed, reaches it"]
    elif res.method == "witness":
        out = [f"{name}: the search did not settle the tree within its time ({res.runs_explored} "
               "partial runs: stretches of a run from one choice to the next); a witness run of the "
               "tree's structure does not decide within the tick cap"]
    else:
        how = {"symbolic": ", time left symbolic",
               "reference": f", the compiled tree itself ({res.why_reference})"}.get(res.method, "")
        out = [f"{name}: explored {res.runs_explored} partial runs (stretches of a run from one choice "
               f"to the next), {res.states} distinct states{how}"]
    if res.tick_cap_text:
        out.append(res.tick_cap_text)
    if res.clock == "logical" and res.timeouts:
        out.append(_LOGICAL_CLOCK + ("" if res.wall_bounds == res.bounds or not res.wall_bounds else
                                     "; where a wall clock allows more, the table says so"))
    elif res.wall_clock and res.bounds:
        out.append(_WALL_CLOCK)
        if res.timeouts > 1:
            out.append(_TIMEOUTS_APART)
    if res.clock_note:
        out.append(f"clock: {res.clock_note}")
    if res.bounds:
        reached = "a witness run" + (" whose deadline checks are answered as a wall clock may"
                                     if res.wall_clock else "")
        out.append(f"worst case over every run (each reached by {reached}; "
                   "`--witness KEY` prints it):" if not res.unreached else
                   "worst case over every run (<=: an upper bound; the others reached by a witness "
                   "run, `--witness KEY` prints it):")
        out += _table(res)
        for key in res.unreplayed:
            out.append(f"  ({key}: its witness, {res.bounds[key]} ticks long, is replayed on the "
                       "Runner by `verify --replay-all`)")
    if res.endings:
        out.append("ways a run ends (how often the search reached each):" if res.method != "summary"
                   else "ways the witness runs end:")
        for reason, n in sorted(res.endings.items(), key=lambda kv: -kv[1]):
            out.append(f"  {n:>6} x  {reason}")
    for label in res.unrouted:
        out.append(f"warning: switch {label} is not routed (the switch fails on it)")
    if witness is not None:
        if witness in res.witnesses:
            out.append(f"witness for {witness} = {res.bounds[witness]} "
                       "(outcomes chosen, each as the path from the root to the leaf):")
            out += _steps(res, res.witnesses[witness]) or ["        (no choices: every run reaches it)"]
        else:
            out.append(f"no witness named {witness!r}; known: {', '.join(res.witnesses) or 'none'}")
    out += _properties(res)
    if res.proven:
        out.append("PROVEN: every run ends in FINALIZE or WAIT_CLARIFY")
    elif res.counterexample is None:
        out.append(f"NOT PROVEN: {res.problem}")
    else:
        out.append(f"COUNTEREXAMPLE: {res.problem}")
        if not res.counterexample:  # nothing is chosen: the tree alone goes round (or fails) every run
            out.append("  no outcome is chosen on the way: every run does this, whatever the robot "
                       "and perception answer (a loop of conditions, decorators and terminals only)")
            if res.path:
                out.append("  last tick visited: " + " ".join(res.path))
            return out
        out.append("  the run, as outcomes chosen (each step: the path from the root to the leaf);"
                   " replay it with bt_grasp.oracles.ScriptedOracle:")
        if res.loop is not None:
            start, length = res.loop
            out += _steps(res, res.counterexample[:start + length])
            out.append(f"        steps {start + 1}-{start + length} repeat until the tick cap "
                       f"({len(res.counterexample)} steps in all, every one in --json)")
        else:
            out += _steps(res, res.counterexample)
        if res.path:
            out.append("  last tick visited: " + " ".join(res.path))
    return out
