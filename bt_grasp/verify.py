"""Exhaustive termination check and worst-case bounds, run on the compiled tree itself.

A choice oracle answers every world-touching leaf with one outcome of its alphabet. Runs are
enumerated depth-first by replaying a prefix of choices from the start (stateless search): each
run takes the first untried alternative at its deepest open choice point. States are fingerprinted
at tick boundaries; a state already explored is not explored again (its worst suffix is reused),
and a state repeating inside one run is a loop. A run must end in a Decision; ending without one,
hitting the tick cap or looping is a counterexample.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from py_trees.behaviour import Behaviour
from py_trees.common import Status

from bt_grasp.blackboard import Blackboard, ref_key
from bt_grasp.compile import compile_tree
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.registry import Registry, default_registry
from bt_grasp.trace import jsonable

COST_KEYS_FIXED = ("actions", "ticks")


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

    def to_json(self) -> dict[str, Any]:
        return {"proven": self.proven, "bounds": self.bounds, "runs_explored": self.runs_explored,
                "counterexample": self.counterexample, "problem": self.problem, "path": self.path,
                "unrouted": self.unrouted, "static_bounds": self.static_bounds,
                "endings": self.endings, "complete": self.complete, "states": self.states}


class _Pruned(Exception):
    """The run reached a state whose future is already known."""

    def __init__(self, fingerprint: str) -> None:
        super().__init__(fingerprint)
        self.fingerprint = fingerprint


class _Loop(Exception):
    """The run reached a state it was already in: repeating its choices never ends."""


def keys_read(spec: Any, registry: Registry) -> set[str]:
    """Blackboard keys some node of the tree reads (input ports holding "{key}" references).

    Only these can influence the future, so the state fingerprint ignores every other key.
    """
    keys: set[str] = set()
    for node in spec.root.walk():
        nt = registry.get(node.type)
        for name, value in node.params.items():
            port = nt.ports.get(name) if nt else None
            key = ref_key(value)
            if key is not None and (port is None or port.type != "key"):
                keys.add(key)
    return keys


def _fingerprint(root, ctx: RunContext, with_clock: bool, read: set[str]) -> str:
    """Everything that can influence the future of the episode, as one string.

    A node that is not RUNNING is re-initialised before it is ticked again, so its exact
    finished status and remembered child cannot matter — except under a parallel, which skips
    children that already succeeded.
    """
    nodes = []
    for node in root.iterate():
        running = node.status.value == "RUNNING"
        parent = node.parent
        keep_status = running or (parent is not None and "Parallel" in type(parent).__name__)
        cur = getattr(node, "current_child", None) if running else None
        extra = getattr(node, "fingerprint_state", None)
        nodes.append((node.status.value if keep_status else "idle",
                      cur.name if cur is not None else None,
                      getattr(node, "successes", None) if running else None,
                      getattr(getattr(node, "chosen", None), "name", None) if running else None,
                      extra() if callable(extra) else None))
    board = {k: jsonable(v) for k, v in ctx.blackboard.items() if k in read}
    led = ctx.ledger
    state = [nodes, board, led.actions, led.perception_streak, led.retry_starts, led.scoped_actions,
             ctx.decision.value if ctx.decision else None]
    if with_clock:
        state.append(round(ctx.clock.now, 6))
    return json.dumps(state, sort_keys=True, default=str)


def _summarise_local(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Behaviour):
        return "@" + value.name
    return type(value).__name__


def _frames_fingerprint(frame, stop_code) -> list:
    """The tick's call stack (code, instruction, locals) from a choice point up to the runner.

    Together with the tree's persistent state this is the complete state mid-tick: py_trees
    composites keep their loop position (index, child, previous) in generator locals.
    """
    out = []
    while frame is not None and frame.f_code is not stop_code:
        out.append((frame.f_code.co_qualname, frame.f_lasti,
                    sorted((k, _summarise_local(v)) for k, v in frame.f_locals.items())))
        frame = frame.f_back
    return out


def _tick_root(root) -> list[str]:
    return [f"{n.name}:{n.status.value}" for n in root.tick()]


class _Explorer:
    """Replays a prefix of choices, then explores; owns the memo shared by all runs."""

    def __init__(self, spec: Any, registry: Registry, limits: EpisodeLimits,
                 initial: dict[str, Any], with_clock: bool) -> None:
        self.spec, self.registry, self.limits = spec, registry, limits
        self.initial, self.with_clock = initial, with_clock
        self.memo: dict[str, Counter] = {}
        self.read = keys_read(spec, registry)

    def run(self, prefix: list[int]) -> tuple[Counter, list, str | None, list[str], str | None]:
        """One run: (total cost, trail, problem, last tick path, ending)."""
        trail: list[tuple[str, tuple[str, ...], int]] = []
        visited: list[tuple[str, Counter]] = []
        seen: set[str] = set()
        ctx = RunContext(registry=self.registry, limits=self.limits,
                         blackboard=Blackboard(dict(self.initial)))
        root = compile_tree(self.spec, ctx)
        memo, with_clock, read = self.memo, self.with_clock, self.read
        stop_code = _tick_root.__code__

        class Oracle:
            def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
                i = len(trail)
                if i >= len(prefix):
                    fp = _fingerprint(root, ctx, with_clock, read) + json.dumps(
                        _frames_fingerprint(sys._getframe(1), stop_code), default=str)
                    if fp in seen:
                        raise _Loop()
                    if fp in memo:
                        raise _Pruned(fp)
                    seen.add(fp)
                    visited.append((fp, _costs(ctx)))
                idx = prefix[i] if i < len(prefix) else 0
                trail.append((node_id, alphabet, idx))
                return alphabet[idx]

        ctx.oracle = Oracle()
        problem = None
        ending = None
        path: list[str] = []
        total: Counter | None = None
        tick_states: set[str] = set()
        try:
            while True:
                if ctx.tick >= self.limits.max_ticks:
                    problem = f"tick cap ({self.limits.max_ticks}) reached: the tree loops"
                    break
                ctx.tick += 1
                path = _tick_root(root)
                ctx.clock.advance(ctx.clock.tick_period)
                ctx.publish_tick_events()
                if ctx.decision is not None:
                    ending = f"{ctx.decision.value}: {ctx.reason}"
                    break
                if root.status in (Status.SUCCESS, Status.FAILURE):
                    problem = f"root ended {root.status.value} without a decision"
                    break
                fp = _fingerprint(root, ctx, with_clock, read)
                if fp in tick_states:
                    raise _Loop()
                tick_states.add(fp)
        except _Loop:
            problem = "the tree returns to an earlier state with the same choices: it can loop forever"
        except _Pruned as pruned:
            total = _cadd(_costs(ctx), memo[pruned.fingerprint])
            ending = "(merged with an explored state)"
        if total is None:
            total = _costs(ctx)
        for fp, cost in visited:
            memo[fp] = _cmax(memo.get(fp, Counter()), _csub(total, cost))
        return total, trail, problem, path, ending


def _costs(ctx: RunContext) -> Counter:
    c: Counter = Counter({"actions": ctx.ledger.actions, "ticks": ctx.tick})
    for name, n in ctx.ledger.primitive_calls.items():
        c[f"primitive:{name}"] = n
    c["perception"] = ctx.ledger.perception_calls
    return c


def _cmax(a: Counter, b: Counter) -> Counter:
    out = Counter(a)
    for k, v in b.items():
        out[k] = max(out[k], v)
    return out


def _csub(a: Counter, b: Counter) -> Counter:
    return Counter({k: a[k] - b.get(k, 0) for k in a})


def _cadd(a: Counter, b: Counter) -> Counter:
    out = Counter(a)
    for k, v in b.items():
        out[k] = out[k] + v
    return out


def verify_tree(spec: Any, registry: Registry | None = None, max_runs: int = 200_000,
                goal: dict[str, Any] | None = None) -> VerifyResult:
    """Explore every run of `spec` (a TreeSpec) against the choice oracle."""
    registry = registry or getattr(spec, "registry", None) or default_registry()
    budgets = spec.budgets
    limits = EpisodeLimits(budgets.actions, budgets.perception_streak, budgets.max_ticks)
    with_clock = any(n.type == "timeout" for n in spec.root.walk())
    goal = goal if goal is not None else dict(getattr(spec, "goal", {}) or {})
    initial = {f"goal.{k}": v for k, v in goal.items()} or {"goal.object": "target object"}
    explorer = _Explorer(spec, registry, limits, initial, with_clock)

    worst: Counter = Counter()
    endings: Counter = Counter()
    prefix: list[int] = []
    runs = 0
    counterexample = None
    problem = None
    path: list[str] = []
    while True:
        runs += 1
        total, trail, run_problem, last_path, ending = explorer.run(prefix)
        worst = _cmax(worst, total)
        if ending:
            endings[ending] += 1
        if run_problem is not None:
            problem = run_problem
            counterexample = [{"node": n, "outcome": alpha[i]} for n, alpha, i in trail]
            path = last_path
            break
        nxt = None
        for i in range(len(trail) - 1, -1, -1):
            _, alpha, idx = trail[i]
            if idx + 1 < len(alpha):
                nxt = [t[2] for t in trail[:i]] + [idx + 1]
                break
        if nxt is None:
            break
        if runs >= max_runs:
            problem = f"exploration limit ({max_runs} runs) reached before every run was checked"
            break
        prefix = nxt

    proven = problem is None
    bounds = {k: int(v) for k, v in sorted(worst.items())}
    for key in COST_KEYS_FIXED:
        bounds.setdefault(key, 0)
    return VerifyResult(
        proven=proven, bounds=bounds, runs_explored=runs, counterexample=counterexample,
        problem=problem, path=path, unrouted=unrouted_labels(spec, registry),
        static_bounds=static_bounds(spec, registry), endings=dict(endings),
        complete=proven or counterexample is not None, states=len(explorer.memo))


# -- static analysis ---------------------------------------------------------------------------

def _writers(spec: Any, registry: Registry) -> dict[str, set[str]]:
    """Blackboard key -> outcome names that leaves can write there."""
    out: dict[str, set[str]] = {}
    for node in spec.root.walk():
        nt = registry.get(node.type)
        if nt is None or not nt.outcome_port:
            continue
        raw = node.params.get(nt.outcome_port) or nt.ports[nt.outcome_port].default
        key = ref_key(raw) or str(raw)
        out.setdefault(key, set()).update(nt.alphabet(node.params))
    return out


def unrouted_labels(spec: Any, registry: Registry) -> list[str]:
    """'switch_id: LABEL' for every label a writer can produce that a switch has no case for."""
    writers = _writers(spec, registry)
    missing = []
    for node in spec.root.walk():
        if node.type != "switch" or node.default is not None:
            continue
        key = ref_key(node.params.get("on")) or str(node.params.get("on"))
        for label in sorted(writers.get(key, set()) - set(map(str, node.cases))):
            missing.append(f"{node.id}: {label}")
    return missing


def static_bounds(spec: Any, registry: Registry) -> dict[str, int | None]:
    """Worst-case calls per primitive from the structure and the literal budgets alone.

    None means the structure alone does not bound it (an unbounded repeat, or a reactive
    composite re-ticking world calls while a later child runs).
    """
    inf = None

    from bt_grasp.interop.nodes import may_run, static_counts

    def can_run(node) -> bool:
        return may_run(node, registry)

    def _kids(node):
        kids = list(node.children) + list(node.cases.values())
        if node.default is not None:
            kids.append(node.default)
        return kids

    def combine(a: dict, b: dict, op) -> dict:
        out = dict(a)
        for k, v in b.items():
            out[k] = op(out[k], v) if k in out else v
        return out

    def add(x, y):
        return None if x is inf or y is inf else x + y

    def mx(x, y):
        return None if x is inf or y is inf else max(x, y)

    def scale(d: dict, n):
        return {k: (None if v is inf or n is inf else v * n) for k, v in d.items()}

    def count(node) -> dict:
        nt = registry.get(node.type)
        if nt is None:
            return {}
        if nt.kind not in ("composite", "decorator"):
            if node.type in ("opaque_action", "opaque_condition"):
                return {f"primitive:btcpp.{node.params.get('btcpp_id')}": 1}
            if nt.kind == "primitive":
                return {f"primitive:{nt.name}": 1}
            if nt.perception:
                return {"perception": 1}
            return {}
        kids = _kids(node)
        interop = static_counts(node, [count(c) for c in kids], registry)
        if interop is not None:
            return interop
        if node.type == "switch":
            out: dict = {}
            for child in kids:
                out = combine(out, count(child), mx)
            return out
        if node.type in ("sequence", "selector") and not node.params.get("memory", True):
            seen_runner = False
            out = {}
            for child in reversed(kids):
                c = count(child)
                if seen_runner and c:
                    c = {k: inf for k in c}
                out = combine(out, c, add)
                seen_runner = seen_runner or can_run(child)
            return out
        out = {}
        for child in kids:
            out = combine(out, count(child), add)
        if node.type == "retry":
            return scale(out, int(node.params["attempts"]))
        if node.type == "repeat":
            times = node.params.get("times")
            return scale(out, int(times) if times is not None else inf) if out else out
        if node.type == "budget":
            cap = int(node.params["actions"])
            return {k: (cap if (v is inf or v > cap) and _is_action(k, registry) else v)
                    for k, v in out.items()}
        if nt.name not in ("sequence", "selector", "parallel", "timeout", "inverter",
                           "force_success", "force_failure"):
            return scale(out, inf) if out and can_run(node) else out
        return out

    counts = count(spec.root)
    budget = spec.budgets.actions
    action_keys = [k for k in counts if _is_action(k, registry)]
    total_actions = 0
    for k in action_keys:
        counts[k] = budget if counts[k] is inf else min(counts[k], budget)
        total_actions += counts[k]
    counts["actions"] = min(total_actions, budget)
    counts.setdefault("perception", 0)
    return dict(sorted(counts.items()))


def _is_action(key: str, registry: Registry) -> bool:
    nt = registry.get(key.split(":", 1)[1]) if key.startswith("primitive:") else None
    return bool(nt and nt.counts_as_action)
