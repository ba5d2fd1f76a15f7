"""Differential soundness of the verifier's bounds on many generated trees.

Draws `--trees` trees from the differential grammar (bt_grasp/testing/grammar.py: BT.CPP controls,
opaque RUNNING leaves, reactive composites with guards re-checked every tick, timeouts at different
clocks, includes, scoped budgets, small and large tick caps), plays `--runs` random-oracle episodes
of the real Runner on each, every call of a primitive running a random number of ticks up to its
max_ticks (so deadlines and failing guards halt running calls at random ticks;
bt_grasp/testing/running.py). A share of the runs (`--adversarial`, default a half) is
adversarial: every call runs its max_ticks, or each leaf is fixed at its longest or at one tick
(one branch at the maximum while another is cut), under outcomes leaning to failure (which drive
retries until a budget runs out). It counts every run that costs
more than `summarise()` allows for some key, or that ends on the tick cap / without a Decision on
a tree it proves to decide. The bounds come from `summary_bounds()`: summarise()'s bounds without
its witness search, which does not change them and would dominate the time. With `--verify`, the same runs are checked against
`verify_tree()` on the trees it proves, and each counterexample it gives is replayed on the Runner
(a real run: it must not decide). Exits 1 when any run outlasts a bound or a counterexample
decides (0: none did).

    python tools/perf/verify_soundness.py --trees 10000 --runs 1000 --verify
"""

from __future__ import annotations

import argparse
import copy
import time
from collections import Counter

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings

from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import RandomOracle, ScriptedOracle, scripts_of
from bt_grasp.testing.grammar import diff_tree_texts, load_text
from bt_grasp.testing.running import RunningOracle, adversarial_oracle, random_lengths
from bt_grasp.tick_budget import structural_ticks, tick_cap
from bt_grasp.verifier.replay import Setup
from bt_grasp.verifier.summary.bounds import summary_bounds
from bt_grasp.verifier.summary.witness import BiasedOracle, play, run_costs, success_outcomes

UNDECIDED = ("tick cap", "no decision")


FAIL_LEANS = (0.5, 0.8, 0.95, 1.0)  # adversarial runs: probability of a failing outcome


def oracle_for(spec, registry, seed: int, adversarial: bool, successes: dict):
    """Random outcomes and call lengths, or an adversarial run (see the module docstring)."""
    if not adversarial:
        return RunningOracle(RandomOracle(seed), spec, random_lengths(seed))
    lean = FAIL_LEANS[(seed // 2) % len(FAIL_LEANS)]
    return adversarial_oracle(BiasedOracle(seed, lean, 0.0, successes), spec, seed)


def check(spec, checks: list[tuple[str, dict, bool]], runs: int, tally: Counter,
          examples: list[str], text: str, adversarial: float = 0.5) -> None:
    """Play `runs` episodes on the Runner once (the first `adversarial` share adversarial) and
    hold each against every (tag, bounds, must decide) of `checks` (the runs of a seed are the
    same for every check)."""
    registry = getattr(spec, "registry", None) or default_registry()
    successes = success_outcomes(spec, registry)
    hard = round(runs * adversarial)
    for seed in range(runs):
        res = play(spec, registry, oracle_for(spec, registry, seed, seed < hard, successes))
        tally["adversarial runs"] += seed < hard
        costs = run_costs(res)
        for tag, bounds, must_decide in checks:
            _hold(res, costs, bounds, must_decide, tally, tag, examples, text, seed)


def check_cap(spec, runs: int, tally: Counter, examples: list[str], text: str,
              adversarial: float) -> None:
    """A tree with no budgets.max_ticks runs under the cap derived from its structure: played
    with the cap lifted above it, no run may take more ticks than that cap."""
    cap = tick_cap(spec)
    if cap.source not in ("structure", "default floor"):
        return
    bound = structural_ticks(spec)
    tally["trees under a structural cap"] += 1
    lifted = copy.deepcopy(spec)
    lifted.budgets.max_ticks = int(bound) + 100
    registry = getattr(spec, "registry", None) or default_registry()
    successes = success_outcomes(spec, registry)
    hard = round(runs * adversarial)
    for seed in range(runs):
        res = play(lifted, registry, oracle_for(lifted, registry, seed, seed < hard, successes))
        tally["structural cap runs"] += 1
        if res.ticks > bound:
            tally["structural cap violations"] += 1
            if len(examples) < 3:
                examples.append(f"[structural cap] seed {seed}: ticks={res.ticks} > {bound:.0f}\n{text}")


def replay_counterexample(spec, result, tally: Counter, examples: list[str], text: str) -> None:
    """A counterexample of verify_tree() replayed on the Runner: it must not decide."""
    registry = getattr(spec, "registry", None) or default_registry()
    steps = [(s["node"], s["outcome"]) for s in result.counterexample]
    res = Setup(spec, registry, None).replay(ScriptedOracle(scripts_of(steps)))
    tally["counterexamples"] += 1
    tally[f"counterexamples by {result.method}"] += 1
    if not any(w in res.reason for w in UNDECIDED):
        tally["counterexample violations"] += 1
        if len(examples) < 3:
            examples.append(f"[counterexample, {result.method}] replays to '{res.reason}'\n{text}")


def _hold(res, costs, bounds: dict, must_decide: bool, tally: Counter, tag: str,
          examples: list[str], text: str, seed: int) -> None:
    """One run against one set of bounds: counted, and kept as an example if it exceeds them."""
    tally[f"{tag} runs"] += 1
    tally[f"{tag} ticks"] += res.ticks
    tally[f"{tag} halts"] += sum(1 for e in res.events if e.metadata.get("halted"))
    bad = [f"{k}={v}>{bounds.get(k, 0)}" for k, v in costs.items()
           if bounds.get(k, 0) is not None and v > bounds.get(k, 0)]
    if must_decide and any(w in res.reason for w in UNDECIDED):
        bad.append(f"'{res.reason}' on a tree proven to decide")
    if bad:
        tally[f"{tag} violations"] += 1
        if len(examples) < 3:
            examples.append(f"[{tag}] seed {seed}: {', '.join(bad)}\n{text}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=1000, help="random runs per tree")
    ap.add_argument("--max-leaves", type=int, default=10)
    ap.add_argument("--adversarial", type=float, default=0.5,
                    help="share of the runs with every call at its longest (or longest/cut mixes)")
    ap.add_argument("--verify", action="store_true", help="also check verify_tree() on each tree")
    ap.add_argument("--verify-max-runs", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0, help="seed of the tree generator (reproducible)")
    args = ap.parse_args(argv)

    tally: Counter = Counter()
    examples: list[str] = []
    start = time.perf_counter()
    t_summary = 0.0

    @hypothesis.seed(args.seed)
    @settings(max_examples=args.trees, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(diff_tree_texts(max_leaves=args.max_leaves))
    def one(text: str) -> None:
        nonlocal t_summary
        spec = load_text(text)
        t0 = time.perf_counter()
        summary = summary_bounds(spec)
        t_summary += time.perf_counter() - t0
        tally["trees"] += 1
        tally["reactive trees"] += "reactive_" in text or "memory: false" in text
        tally[f"decides={summary.decides}"] += 1
        checks = [("summarise", summary.bounds, summary.decides is True)]
        if args.verify:
            from bt_grasp.verifier_api import verify_tree

            result = verify_tree(spec, max_runs=args.verify_max_runs)
            tally[f"verify proven={result.proven}"] += 1
            if result.proven:
                checks.append(("verify_tree", result.bounds, True))
            elif result.counterexample is not None:
                replay_counterexample(spec, result, tally, examples, text)
        check(spec, checks, args.runs, tally, examples, text, args.adversarial)
        check_cap(spec, args.runs, tally, examples, text, args.adversarial)

    one()
    wall = time.perf_counter() - start
    runs = tally["summarise runs"]
    print(f"seed {args.seed} | trees {tally['trees']} | runs {runs} (adversarial {tally['adversarial runs']})"
          f" | summarise violations {tally['summarise violations']}"
          f" | time {wall:.1f} s (summarise {t_summary:.1f} s)")
    print(f"trees with a reactive composite {tally['reactive trees']} | ticks run {tally['summarise ticks']}"
          f" | running calls halted {tally['summarise halts']}")
    print(f"trees under a structural cap {tally['trees under a structural cap']} | runs with the cap lifted"
          f" {tally['structural cap runs']} | runs longer than the cap {tally['structural cap violations']}")
    print("decides: " + ", ".join(f"{k.split('=')[1]} {v}" for k, v in sorted(tally.items())
                                  if k.startswith("decides=")))
    if args.verify:
        print(f"verify_tree: proven {tally['verify proven=True']} / {tally['trees']} trees, "
              f"runs checked {tally['verify_tree runs']}, violations {tally['verify_tree violations']}")
        print(f"verify_tree counterexamples {tally['counterexamples']} (by the witness search "
              f"{tally['counterexamples by witness']}), replayed deciding {tally['counterexample violations']}")
    for ex in examples:
        print("---\n" + ex)
    # A run longer than a bound is a soundness bug: exit 1 so scripts and CI see it, not only a count.
    violations = sum(v for k, v in tally.items() if k.endswith("violations"))
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
