"""Witness runs for the summary bounds: real Runner episodes under biased choice oracles.

A bound is only as good as a run that reaches it. This module plays a fixed number of episodes
on the real Runner, each with an oracle that leans towards failures (which drive retries and
recoveries), successes (which drive repeats) or RUNNING, and keeps, for every cost key, the
outcome sequence of the costliest run. The sequences replay exactly with a per-node scripted
oracle, because which leaf is asked next depends only on the outcomes given so far. Calls that
may span ticks are asked `<id>#running` each tick (RunContext.explore_running): the policies
that lean to RUNNING keep every call running to its maximum, the longest runs there are.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.interop.nodes import OUTCOME_STATUS
from bt_grasp.registry import Registry
from bt_grasp.runner import EpisodeResult, Runner
from bt_grasp.tick_budget import episode_limits

# (probability of a failing outcome, probability of "running" where a leaf may answer it); a
# negative second number -q: each call either runs to its maximum (probability q) or ends at
# once, so that some branches of a parallel finish early while others run long
POLICIES = ((0.5, 0.3), (0.9, 0.1), (1.0, 0.0), (0.8, 0.5), (0.2, 0.2), (0.0, 0.0), (0.7, 0.0),
            (0.95, 0.9), (0.2, -0.5), (0.5, -0.5), (0.1, -0.3), (0.8, -0.7))


def run_costs(res: EpisodeResult) -> Counter[str]:
    """The cost vector of one run, in the keys of Summary.bounds."""
    c: Counter[str] = Counter({"actions": res.actions, "ticks": res.ticks,
                          "perception": res.counters["perception_calls"]})
    for name, n in res.counters["primitive_calls"].items():
        c[f"primitive:{name}"] = n
    return c


def success_outcomes(spec: Any, registry: Registry) -> dict[str, set[str]]:
    """Leaf id -> the outcomes that make it succeed (what the biased oracle avoids or prefers)."""
    from bt_grasp.nodes.catalog import LEAF_CLASSES

    out: dict[str, set[str]] = {}
    for node in spec.root.walk():
        nt = registry.get(node.type)
        if nt is None or nt.kind in ("composite", "decorator"):
            continue
        if node.type in ("opaque_action", "opaque_condition"):
            out[node.id] = {o for o, s in OUTCOME_STATUS.items() if s.value == "SUCCESS"}
            continue
        cls = nt.factory if isinstance(nt.factory, type) else LEAF_CLASSES.get(nt.name)
        out[node.id] = set(getattr(cls, "SUCCESS_OUTCOMES", ()) or ())
    return out


class BiasedOracle:
    """Random outcomes, leaning towards failure with `fail_p` and towards RUNNING with `run_p`."""

    def __init__(self, seed: int, fail_p: float, run_p: float, successes: dict[str, set[str]]) -> None:
        self.rng = random.Random(seed)
        self.fail_p, self.run_p = fail_p, run_p
        self.successes = successes
        self.choices: list[tuple[str, str]] = []
        self.running: dict[str, bool] = {}  # leaf -> its call goes on (per-call lengths)

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        rng = self.rng
        if node_id.endswith("#duration"):
            pick = alphabet[0] if rng.random() < 0.8 else alphabet[-1]
        elif node_id.endswith("#running") and self.run_p < 0:  # drawn once per call
            if node_id not in self.running:
                self.running[node_id] = rng.random() < -self.run_p
            pick = "running" if self.running[node_id] else "ends"
            if pick == "ends":
                del self.running[node_id]
        elif node_id.endswith("#running"):  # a call that may span ticks: policies that lean to
            # RUNNING let every call run to its maximum (the longest runs), the others end soon
            pick = "running" if self.run_p >= 0.5 or rng.random() < self.run_p else "ends"
        elif "running" in alphabet and rng.random() < self.run_p:
            pick = "running"
        else:
            options = [o for o in alphabet if o != "running"] or list(alphabet)
            good = self.successes.get(node_id, set())
            bad = [o for o in options if o not in good]
            fine = [o for o in options if o in good]
            pool = bad if (bad and (not fine or rng.random() < self.fail_p)) else (fine or options)
            pick = rng.choice(pool)
        self.choices.append((node_id, pick))
        return pick


class PerLeafOracle(BiasedOracle):
    """Each leaf fixed for the whole run: it fails (or succeeds) every call, and every call runs
    its longest (or ends at once), drawn per leaf. The worst case of a check repeated beside a
    task needs one leaf at each extreme: the check ending at once and succeeding every tick, the
    task failing after its longest calls."""

    def __init__(self, seed: int, successes: dict[str, set[str]], actions: set[str] | None = None) -> None:
        """`actions`: leaves that spend actions; given, they fail after their longest calls and
        every other leaf succeeds at once (the task / check split), else drawn at random."""
        super().__init__(seed, 0.5, 0.0, successes)
        self.fails: dict[str, bool] = {}
        self.long: dict[str, bool] = {}
        if actions is not None:
            for leaf in successes:
                self.fails[leaf] = self.long[leaf] = leaf in actions

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        leaf, _, question = node_id.partition("#")
        rng = self.rng
        if question == "running":
            if leaf not in self.long:
                self.long[leaf] = rng.random() < 0.5
            pick = "running" if self.long[leaf] else "ends"
        elif question:
            return super().choose(node_id, alphabet)
        else:
            if leaf not in self.fails:
                self.fails[leaf] = rng.random() < 0.5
            options = [o for o in alphabet if o != "running"] or list(alphabet)
            good = self.successes.get(leaf, set())
            pool = [o for o in options if (o in good) != self.fails[leaf]] or options
            pick = rng.choice(pool)
        self.choices.append((node_id, pick))
        return pick


@dataclass
class Found:
    best: dict[str, int] = field(default_factory=dict)
    witnesses: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    undecided: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    runs: int = 0
    work: int = 0  # play_work of the episodes played


def play(spec: Any, registry: Registry, oracle: Any, goal: dict[str, Any] | None = None) -> EpisodeResult:
    """One episode of the real Runner against `oracle`, with the spec's budgets."""
    goal = goal if goal is not None else dict(getattr(spec, "goal", {}) or {})
    initial = {f"goal.{k}": v for k, v in goal.items()} or {"goal.object": "target object"}
    ctx = RunContext(registry=registry, limits=episode_limits(spec, registry),
                     oracle=oracle, blackboard=Blackboard(initial), explore_running=True)
    return Runner(spec, ctx).run()


class MutantOracle(BiasedOracle):
    """Replays a run's per-node outcome queues with one outcome changed, then answers at random:
    a step of the local search that climbs towards a bound."""

    def __init__(self, seed: int, base: list[tuple[str, str]], at: int, outcome: str,
                 successes: dict[str, set[str]]) -> None:
        super().__init__(seed, 0.7, 0.3, successes)
        self.queues: dict[str, list[str]] = {}
        for i, (node, out) in enumerate(base):
            self.queues.setdefault(node, []).append(outcome if i == at else out)

        self.last: dict[str, str] = {}

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        queue = self.queues.get(node_id)
        if queue and queue[0] in alphabet:
            pick = queue.pop(0)
        elif node_id in self.last and self.rng.random() < 0.7:
            pick = self.last[node_id]  # past the old run: keep doing what this leaf did last
        else:
            pick = super().choose(node_id, alphabet)
            self.choices.pop()
        self.last[node_id] = pick
        self.choices.append((node_id, pick))
        return pick


def play_work(res: EpisodeResult, nodes: int) -> int:
    """The work of one episode, for the witness search's budget: its ticks, plus the tree's nodes
    (compiling and starting a run costs about as much per node as a tick of the run)."""
    return res.ticks + nodes


def _record(found: Found, res: EpisodeResult, choices: list[tuple[str, str]], nodes: int) -> None:
    found.runs += 1
    found.work += play_work(res, nodes)
    if "tick cap" in res.reason or "no decision" in res.reason:
        found.undecided.append((res.reason, list(choices)))
    for key, value in run_costs(res).items():
        if value > found.best.get(key, -1):
            found.best[key] = int(value)
            found.witnesses[key] = list(choices)


def search(spec: Any, registry: Registry, runs: int, climbs: int = 0,
           targets: dict[str, int | None] | None = None, seed: int = 0,
           work: int | None = None) -> Found:
    """Play `runs` biased episodes, then up to `climbs` local-search steps (one changed outcome in
    the best run of a key still below its target) while the episodes have cost at most `work`
    (play_work; None: no limit); keep the costliest run per key and every run that ended without
    a Decision. Every limit is a count, so the same tree always gives the same runs."""
    found = Found()
    nodes = sum(1 for _ in spec.root.walk())
    successes = success_outcomes(spec, registry)
    action_leaves = {node.id for node in spec.root.walk()
                     if (nt := registry.get(node.type)) is not None and nt.counts_as_action}
    alphabets: dict[str, tuple[str, ...]] = {}
    for node in spec.root.walk():
        nt = registry.get(node.type)
        if nt is not None and nt.kind not in ("composite", "decorator"):
            alphabets[node.id] = tuple(nt.alphabet(node.params))
    for i in range(runs):
        fail_p, run_p = POLICIES[i % len(POLICIES)]
        if i % 4 == 3:  # every fourth run: leaf by leaf at the extremes (PerLeafOracle)
            oracle: BiasedOracle = PerLeafOracle(seed * 100_003 + i, successes,
                                                 action_leaves if i == 3 else None)
        else:
            oracle = BiasedOracle(seed * 100_003 + i, fail_p, run_p, successes)
        _record(found, play(spec, registry, oracle), oracle.choices, nodes)
    rng = random.Random(seed)
    targets = targets or {}
    for step in range(climbs):
        if work is not None and found.work > work:
            break
        open_keys = [k for k, v in targets.items() if v is not None and found.best.get(k, 0) < v
                     and found.witnesses.get(k)]
        if not open_keys:
            break
        key = open_keys[step % len(open_keys)]
        base = found.witnesses[key]
        at = rng.randrange(len(base))
        node, old = base[at]
        options = [o for o in (alphabets.get(node) or ()) if o != old]
        failing = [o for o in options if o not in successes.get(node, set())]
        if failing and rng.random() < 0.6:
            options = failing  # failures drive retries and recoveries
        if node.endswith("#running"):
            options = ["ends" if old == "running" else "running"]
        elif node.endswith("#duration") or node.endswith("#semantic"):
            options = [o for o in ("instant", "overruns deadline", "ok", "veto") if o != old]
        if not options:
            continue
        oracle = MutantOracle(seed * 7919 + step, base, at, rng.choice(options), successes)
        _record(found, play(spec, registry, oracle), oracle.choices, nodes)
    return found
