"""CPU seconds that properties and `--rates` add to verifying a tree (default: clutter.yaml).

The search itself is timed too, for scale; each figure is process CPU time (not wall), best of
`--repeat`, so that other load on the machine changes it little.

    python tools/perf/verify_clutter_cost.py --rates docs/examples/verify/clutter_rates.yaml
"""

from __future__ import annotations

import argparse
import time

import bt_grasp.verifier.core as core
from bt_grasp.resources import TREES, shipped_path
from bt_grasp.spec.loader import load_tree
from bt_grasp.verifier.probability.report import load_rates, rate_tree


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default="clutter")
    ap.add_argument("--rates", default="docs/examples/verify/clutter_rates.yaml")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    spec = load_tree(shipped_path(TREES, args.tree) or args.tree)
    rates = load_rates(args.rates, spec.registry)
    checked = core.property_results
    spent: list[float] = []

    def timed(*a: object) -> object:
        t = time.process_time()
        out = checked(*a)  # type: ignore[arg-type]
        spent.append(time.process_time() - t)
        return out

    core.property_results = timed  # type: ignore[assignment]
    search, props, chance = [], [], []
    for _ in range(args.repeat):
        t = time.process_time()
        res = core.verify_tree(spec, upper=False)
        search.append(time.process_time() - t - spent[-1])
        props.append(spent[-1])
        t = time.process_time()
        got = rate_tree(res, spec, rates)
        chance.append(time.process_time() - t)
    kind = getattr(got, "method", got)
    print(f"{spec.name}: {res.states} states | search {min(search):.2f} CPU s | properties "
          f"({len(res.properties)}) {min(props):.2f} CPU s | --rates ({kind}) {min(chance):.2f} CPU s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
