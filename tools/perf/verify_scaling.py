"""Verification time against tree size, per family, with the targets judged in the same run.

Families (every tree decides, so a verdict is a proof, a counterexample, or "incomplete"):
- shipped: trees/*.yaml and trees/mobile/*.yaml; target < 0.5 CPU s each, settled exactly
  (tests/test_verify_shipped.py asserts the exactness, this the time);
- parallel: `parallel` (each policy) of k branches retry{2}(grasp), k = 1..8, under the default
  budgets; target < 1 s each;
- chain: k steps in a sequence, each retry{2}(grasp -> evaluate_grasp -> switch on the label);
  target < 1 s at k = 32;
- nested: the same blocks each nested in the previous one's SUCCESS case (a tree file nests at
  most 200 levels, so k <= 16); no target, for comparison with earlier runs;
- random: trees of about 50-200 nodes with timeouts (0.5-8 s over calls of 300-600 ticks),
  parallels and reactive composites with guards; target < 2 s each at 150+ nodes, none unsettled;
- watch: a check repeated beside a task: parallel(success_on_one) of an unbounded repeat of a
  cheap leaf (lift, locate_object, a label condition) and a task (retry{3}(grasp ->
  evaluate_grasp) under 20 actions, then random bodies of about 50-200 nodes); target < 2 s
  each, none unsettled;
- nav2: the Nav2 navigate_w_replanning_and_recovery trees as BT.CPP v4 XML (tests/data/nav2), as
  written (a counterexample: FollowPath may stay RUNNING) and with a FollowPath that answers at
  once; target < 1 s each, the verdict replayed on the Runner.

Each row also prints the search's size: `runs`, the partial runs (advances) both first-pass
variants took, and `states`, the states of the run graph (0 when the search did not settle, or
the compositional summary answered first): they tell a large search from a costly step.

Times are verify_tree()'s CPU seconds (what `bt-grasp verify` spends), measured in this run: with
`--repeat N` each case is verified N times in a row and the least time is the case's (the run
least disturbed by other load on a shared machine; every run of a tree does the same work, its
verdict and counts are deterministic), the most is printed beside it. The summary's own time
(summary_bounds, no witness runs) is printed too. Writes a PNG plot (matplotlib, Agg).

    python tools/perf/verify_scaling.py --repeat 3 --plot verify_scaling.png
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from pathlib import Path
from typing import Any

import yaml

from bt_grasp.interop.btcpp_import import import_spec
from bt_grasp.spec.loader import load_tree, load_tree_text
from bt_grasp.testing.families import chain, nested, parallel, text
from bt_grasp.verifier.summary.bounds import summary_bounds
from bt_grasp.verifier_api import verify_tree

ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"shipped": 0.5, "parallel k<=8": 1.0, "chain k=32": 1.0, "random 150+": 2.0, "watch": 2.0,
           "nav2": 1.0}


# -- random trees (the structured families: bt_grasp/testing/families.py) ---------------------

LEAVES = ("grasp", "lift", "place", "open_gripper", "evaluate_grasp", "survey_scene", "push")
GUARDS = ({"label_is": {"key": "{grasp.outcome}", "label": "done"}},
          {"locate_object": {"target": "{goal.object}"}})


def random_tree(rng: random.Random, nodes: int) -> str:
    """A random tree of about `nodes` nodes: sequences, selectors, reactive composites with a
    guard, parallels, retries, repeats, timeouts, switches and budgets over world leaves, with
    decisions at the leaves."""

    def leaf() -> Any:
        r = rng.random()
        if r < 0.12:
            return {"finalize": {"reason": "r"}}
        if r < 0.2:
            return {"wait_clarify": {"reason": "r"}}
        if r < 0.3:
            return {"locate_object": {"target": "{goal.object}"}}
        return rng.choice(LEAVES)

    def node(budget: int) -> Any:
        if budget <= 1:
            return leaf()
        kind = rng.choice(["sequence", "selector", "sequence", "selector", "retry", "repeat", "timeout",
                           "timeout", "switch", "budget", "force_success", "parallel", "reactive"])
        if kind in ("sequence", "selector", "parallel"):
            k = rng.randint(2, 4)
            parts = [node(max(1, (budget - 1) // k)) for _ in range(k)]
            if kind == "parallel":
                return {"parallel": {"policy": rng.choice(["success_on_all", "success_on_one"]),
                                     "children": parts}}
            return {kind: {"children": parts}}
        if kind == "reactive":
            k = rng.randint(1, 3)
            parts = [node(max(1, (budget - 2) // k)) for _ in range(k)]
            return {rng.choice(["reactive_sequence", "reactive_selector"]):
                    {"children": [rng.choice(GUARDS), *parts]}}
        child = node(budget - 1)
        if kind == "retry":
            return {"retry": {"attempts": rng.randint(1, 3), "child": child}}
        if kind == "repeat":
            return {"repeat": {"times": rng.randint(1, 3), "child": child}}
        if kind == "timeout":
            return {"timeout": {"seconds": rng.choice([0.5, 3.0, 8.0]), "child": child}}
        if kind == "budget":
            return {"budget": {"actions": rng.randint(1, 3), "child": child}}
        if kind == "switch":
            return {"switch": {"on": "{grasp.outcome}", "cases": {"done": child},
                               "default": node(max(1, budget // 3))}}
        return {kind: {"child": child}}

    root = {"selector": {"children": [
        {"sequence": {"children": [node(nodes), {"finalize": {"reason": "body succeeded"}}]}},
        {"wait_clarify": {"reason": "body failed"}}]}}
    return text(f"random_{nodes}", root)


CHECKS = ("lift", {"locate_object": {"target": "{goal.object}"}},
          {"label_is": {"key": "{grasp.outcome}", "label": "done"}})
TASK = {"retry": {"attempts": 3, "child": {"sequence": {"children": ["grasp", "evaluate_grasp"]}}}}


def watch_tree(rng: random.Random, nodes: int, check: Any) -> str:
    """A random body (random_tree's, about `nodes` nodes; 0: the fixed task) run beside an
    unbounded repeat of `check` in a success_on_one parallel, under 20 actions."""
    if nodes:
        body = yaml.safe_load(random_tree(rng, nodes))["root"]["selector"]["children"][0]["sequence"]["children"][0]
    else:
        body = TASK
    watch = {"parallel": {"policy": "success_on_one", "children": [{"repeat": {"child": check}}, body]}}
    root = {"selector": {"children": [
        {"sequence": {"children": [watch, {"finalize": {"reason": "body succeeded"}}]}},
        {"wait_clarify": {"reason": "body failed"}}]}}
    doc = yaml.safe_load(text(f"watch_{nodes}", root))
    doc["budgets"] = {"actions": 20}
    return yaml.safe_dump(doc, sort_keys=False)


# -- timing -------------------------------------------------------------------------------------

def measure(family: str, label: str, spec: Any, args: argparse.Namespace, rows: list[dict]) -> None:
    nodes = sum(1 for _ in spec.root.walk())
    gc.collect()  # the last case's garbage is not this one's time
    t0 = time.process_time()
    summary_bounds(spec)
    t_bounds = time.process_time() - t0
    times = []
    for _ in range(max(1, args.repeat)):
        cpu0 = time.process_time()
        result = verify_tree(spec, max_runs=args.max_runs)
        times.append(time.process_time() - cpu0)
    cpu, most = min(times), max(times)
    verdict = ("PROVEN" if result.proven else "counterexample" if result.counterexample
               else "incomplete" if not result.complete else "NOT PROVEN")
    row = {"family": family, "case": label, "nodes": nodes, "bounds": t_bounds, "cpu": cpu,
           "verdict": verdict, "method": result.method, "ticks": result.bounds.get("ticks"),
           "actions": result.bounds.get("actions"), "settled": result.complete,
           "runs": result.runs_explored, "states": result.states}
    rows.append(row)
    print(f"{family:8s} {label:26s} {nodes:5d} {t_bounds:9.3f} {cpu:9.3f} {most:9.3f}  {verdict:14s} "
          f"{result.method:9s} ticks={row['ticks']} actions={row['actions']} "
          f"runs={row['runs']} states={row['states']}", flush=True)


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for family in dict.fromkeys(r["family"] for r in rows):
        pts = sorted((r["nodes"], r["cpu"]) for r in rows if r["family"] == family)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", label=family, alpha=0.7)
    by_limit: dict[float, list[str]] = {}
    for name, limit in TARGETS.items():
        by_limit.setdefault(limit, []).append(name)
    for limit, names in by_limit.items():
        ax.axhline(limit, color="grey", lw=0.6, ls="--")
        ax.text(0.01, limit * 1.06, "target: " + ", ".join(names), fontsize=6, color="grey",
                transform=ax.get_yaxis_transform())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("nodes in the tree")
    ax.set_ylabel("verify_tree CPU seconds")
    ax.set_title("bt-grasp verify: time per tree")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def judge(rows: list[dict]) -> dict[str, tuple[float | None, bool]]:
    """Per target: the slowest case in this run and whether every case was settled."""

    def worst(pick) -> tuple[float | None, bool]:
        picked = [r for r in rows if pick(r)]
        if not picked:
            return None, True
        return max(r["cpu"] for r in picked), all(r["settled"] for r in picked)

    return {
        "shipped": worst(lambda r: r["family"] == "shipped"),
        "parallel k<=8": worst(lambda r: r["family"] == "parallel"),
        "chain k=32": worst(lambda r: r["family"] == "chain" and r["case"] == "k=32"),
        "random 150+": worst(lambda r: r["family"] == "random" and r["nodes"] >= 150),
        "watch": worst(lambda r: r["family"] == "watch"),
        "nav2": worst(lambda r: r["family"] == "nav2"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-k", type=int, default=32, help="longest chain of steps")
    ap.add_argument("--max-parallel", type=int, default=8, help="most branches of a parallel")
    ap.add_argument("--max-nested", type=int, default=16, help="deepest nested chain (16 at most)")
    ap.add_argument("--random-sizes", type=int, nargs="*", default=[50, 100, 200])
    ap.add_argument("--random-per-size", type=int, default=5)
    ap.add_argument("--watch-per-size", type=int, default=1,
                    help="watch family: random bodies per size and check (the fixed task once)")
    ap.add_argument("--max-runs", type=int, default=200_000, help="as `bt-grasp verify`")
    ap.add_argument("--families", nargs="*",
                    default=["shipped", "parallel", "chain", "nested", "random", "watch", "nav2"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1,
                    help="verify each case N times; its time is the least (the most is printed)")
    ap.add_argument("--plot", default="verify_scaling.png", help="PNG path ('' for none)")
    args = ap.parse_args(argv)

    rows: list[dict] = []
    print("bounds s: summary_bounds() alone; cpu s: verify_tree() CPU seconds (what `bt-grasp verify` "
          f"spends), the least of {max(1, args.repeat)} runs; most s: the most")
    print(f"{'family':8s} {'case':26s} {'nodes':>5s} {'bounds s':>9s} {'cpu s':>9s} {'most s':>9s}  "
          "verdict        method")
    fam = set(args.families)
    if "shipped" in fam:
        for path in sorted([*(ROOT / "trees").glob("*.yaml"), *(ROOT / "trees" / "mobile").glob("*.yaml")]):
            measure("shipped", path.name, load_tree(str(path)), args, rows)
    if "parallel" in fam:
        for policy in ("success_on_all", "success_on_one"):
            for k in range(1, args.max_parallel + 1):
                measure("parallel", f"k={k} {policy}", load_tree_text(parallel(k, policy), "<parallel>"), args, rows)
    if "chain" in fam:
        k = 1
        while k <= args.max_k:
            measure("chain", f"k={k}", load_tree_text(chain(k), "<chain>"), args, rows)
            k *= 2
    if "nested" in fam:
        for k in (1, 2, 4, 8, args.max_nested):
            measure("nested", f"k={k}", load_tree_text(nested(k), "<nested>"), args, rows)
    if "random" in fam:
        rng = random.Random(args.seed)
        for size in args.random_sizes:
            for i in range(args.random_per_size):
                measure("random", f"{size} #{i}", load_tree_text(random_tree(rng, size), "<random>"), args, rows)
    if "watch" in fam:
        rng = random.Random(args.seed + 1)
        for size in (0, *args.random_sizes):
            for j in range(max(1, args.watch_per_size) if size else 1):
                for i, check in enumerate(CHECKS):
                    name = "task" if not size else str(size)
                    case = f"{name} #{j * len(CHECKS) + i}"
                    measure("watch", case, load_tree_text(watch_tree(rng, size, check), "<watch>"), args, rows)
    if "nav2" in fam:
        for path in sorted((ROOT / "tests" / "data" / "nav2").glob("*.xml")):
            measure("nav2", path.stem[-26:], import_spec(path), args, rows)
            # FollowPath answering at once: the navigator decides, and its bounds are proven
            sync = import_spec(path, outcomes={"FollowPath": ["success", "failure"]})
            measure("nav2", "sync " + path.stem[-21:], sync, args, rows)

    print("\ntargets (verify_tree CPU seconds, slowest case of the family in this run):")
    for name, (got, settled) in judge(rows).items():
        limit = TARGETS[name]
        verdict = ("not measured" if got is None else
                   "met" if got < limit and settled else "MISSED" + ("" if settled else " (unsettled)"))
        shown = "-" if got is None else f"{got:.3f} s"
        print(f"  {name:14s} < {limit:.1f} s: {shown:>9s}  {verdict}")
    unsettled = [r for r in rows if not r["settled"]]
    print(f"cases {len(rows)}, unsettled {len(unsettled)}"
          + "".join(f"\n  unsettled: {r['family']} {r['case']}" for r in unsettled))
    if args.plot:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
