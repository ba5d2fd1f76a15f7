"""Predicted probabilities (`verify --rates`) against the real Runner on many generated trees.

Draws `--trees` trees (the random-tree grammar, bt_grasp/testing/grammar.py; `--diff`: the
differential grammar, with BT.CPP controls, reactive composites and timeouts), gives every leaf
random outcome rates, predicts each ending's probability and the expected actions, perception
calls and ticks from the tree's run graph, and plays `--runs` Runner episodes with a stochastic
oracle drawing from the same rates: every prediction must fall in the observed 99 % interval
(about 1 % of them fall outside by chance alone; many more would be a wrong prediction). Calls
end at their first poll (the expected ticks are then an interval's lower end), or with
`--durations` every leaf whose calls span ticks gets a random mean duration and the Runner's
calls random lengths of that mean (the expected ticks a figure where no call is watched).

    python tools/perf/verify_rates.py --trees 200 --runs 2000 [--durations]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings

from bt_grasp.testing.chance_check import random_durations, random_rates, validate
from bt_grasp.testing.grammar import diff_tree_texts, load_text, tree_texts
from bt_grasp.verifier_api import verify_tree


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--runs", type=int, default=2000, help="Runner episodes per tree")
    ap.add_argument("--max-leaves", type=int, default=10)
    ap.add_argument("--diff", action="store_true", help="the differential grammar")
    ap.add_argument("--seed", type=int, default=0, help="seed of the tree generator (reproducible)")
    ap.add_argument("--durations", action="store_true",
                    help="mean call durations for the expected ticks, and calls of random lengths")
    args = ap.parse_args(argv)
    tally: Counter[str] = Counter()
    outside: list[str] = []
    start = time.perf_counter()
    texts = diff_tree_texts(max_leaves=args.max_leaves) if args.diff else tree_texts(args.max_leaves)

    @hypothesis.seed(args.seed)
    @settings(max_examples=args.trees, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(texts)
    def one(text: str) -> None:
        spec = load_text(text)
        res = verify_tree(spec, max_runs=20_000, upper=False)
        tally["trees"] += 1
        if not res.proven or res.graph is None:  # (docs/verify.md: where --rates answers)
            tally["not proven or no run graph (skipped)"] += 1
            return
        rng = random.Random(tally["trees"])
        rates = random_rates(spec, rng)
        if args.durations:
            random_durations(spec, rates, rng)
        try:
            check = validate(spec, res, rates, args.runs, seed=tally["trees"])
        except ValueError:  # a guard asked while calls run: no probabilities (chance.TimeMatters)
            tally["not proven or no run graph (skipped)"] += 1
            return
        tally["checked trees"] += 1
        tally["predictions"] += check.checked
        tally["point"] += check.point
        tally["outside"] += len(check.outside)
        tally["exact trees"] += check.exact
        tally["exact ticks"] += check.ticks_exact
        outside.extend(f"tree {tally['trees']}: {o}" for o in check.outside)

    one()
    wall = time.perf_counter() - start
    share = tally["outside"] / max(1, tally["predictions"])
    print(f"seed {args.seed} | trees {tally['trees']} (checked {tally['checked trees']}, skipped "
          f"{tally['not proven or no run graph (skipped)']} without a run graph or with time-dependent questions; exact {tally['exact trees']}, the rest "
          f"intervals) | runs per tree {args.runs} | "
          f"predictions {tally['predictions']} ({tally['point']} exact in (0, 1)) | outside the 99 % interval {tally['outside']} "
          f"({100 * share:.2f} %) | expected ticks a figure in {tally['exact ticks']} trees | time {wall:.1f} s")
    for line in outside[:20]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
