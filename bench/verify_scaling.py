"""Verification time against tree size: summarise() (compositional) and verify_tree() (search).

Families: the k-block chain retry{2}(grasp -> evaluate_grasp -> switch SUCCESS: next block),
a selector of n such branches, random trees up to 200 nodes, the shipped trees (trees/*.yaml)
and the Nav2 navigators (tests/data/nav2/*.xml, as written and with a FollowPath that answers at
once). Both methods are timed in the same run; the ratio is verify_tree time / summarise time.
The speed targets (TARGETS) are judged on verify_tree's CPU time, which is what `bt-grasp verify`
spends; verify_tree is cut at --verify-max-runs runs and skipped above --verify-max-nodes nodes
for the generated families. Writes a PNG plot (matplotlib, Agg).

    python bench/verify_scaling.py --max-k 16 --max-n 32 --plot verify_scaling.png
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bt_grasp.interop.btcpp_import import import_spec  # noqa: E402
from bt_grasp.spec.loader import load_tree, load_tree_text  # noqa: E402
from bt_grasp.verifier.bounds import summarise, summary_bounds  # noqa: E402
from bt_grasp.verify import verify_tree  # noqa: E402

TARGETS = {"shipped": 1.0, "chain k=16": 1.0, "random 200": 5.0, "nav2": 1.0}
# Generated trees get a tick cap with room for every call to run its max_ticks (a primitive's
# call spans up to hundreds of ticks), so that the verdicts are proofs, not tick-cap findings.
ROOM = {"max_ticks": 100_000}


# -- tree families ------------------------------------------------------------------------------

def block(i: int, on_success: dict[str, Any]) -> dict[str, Any]:
    """retry{2}(grasp -> evaluate_grasp -> switch on the label: SUCCESS -> `on_success`)."""
    return {"retry": {"id": f"retry_{i}", "attempts": 2, "child": {"sequence": {"id": f"try_{i}", "children": [
        {"grasp": {"id": f"grasp_{i}", "execution": f"{{g{i}.execution}}", "outcome": f"{{g{i}.outcome}}"}},
        {"evaluate_grasp": {"id": f"check_{i}", "execution": f"{{g{i}.execution}}", "label": f"{{g{i}.label}}"}},
        {"switch": {"id": f"route_{i}", "on": f"{{g{i}.label}}", "cases": {"SUCCESS": on_success},
                    "default": {"force_failure": {"id": f"again_{i}",
                                                  "child": {"open_gripper": {"id": f"open_{i}"}}}}}},
    ]}}}}


def wrap(body: dict[str, Any]) -> dict[str, Any]:
    return {"selector": {"id": "episode", "children": [body, {"wait_clarify": {"id": "give_up"}}]}}


def chain(k: int) -> str:
    body: dict[str, Any] = {"finalize": {"id": "done"}}
    for i in range(k, 0, -1):
        body = block(i, body)
    return yaml.safe_dump({"tree": f"chain_{k}", "budgets": ROOM, "root": wrap(body)}, sort_keys=False)


def fan(n: int) -> str:
    branches = [block(i, {"finalize": {"id": f"done_{i}"}}) for i in range(1, n + 1)]
    body = {"selector": {"id": "branches", "children": branches}}
    return yaml.safe_dump({"tree": f"selector_{n}", "budgets": ROOM, "root": wrap(body)}, sort_keys=False)


LEAVES = ("grasp", "lift", "place", "open_gripper", "evaluate_grasp", "survey_scene", "push")


def random_tree(rng: random.Random, nodes: int) -> str:
    """A random tree of about `nodes` nodes: sequences, selectors, retries, repeats, timeouts,
    switches and budgets over world leaves, with decisions at the leaves."""
    count = [0]

    def leaf() -> Any:
        count[0] += 1
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
        count[0] += 1
        kind = rng.choice(["sequence", "selector", "sequence", "selector", "retry", "repeat",
                           "timeout", "switch", "budget", "force_success"])
        if kind in ("sequence", "selector"):
            k = rng.randint(2, 4)
            parts = [max(1, (budget - 1) // k)] * k
            return {kind: {"children": [node(p) for p in parts]}}
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

    body = node(nodes)
    doc = {"tree": f"random_{nodes}", "budgets": ROOM, "root": {"selector": {"children": [
        {"sequence": {"children": [body, {"finalize": {"reason": "body succeeded"}}]}},
        {"wait_clarify": {"reason": "body failed"}}]}}}
    return yaml.safe_dump(doc, sort_keys=False)


# -- timing -------------------------------------------------------------------------------------

def timed(fn, *args, **kwargs) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def measure(family: str, label: str, spec: Any, args: argparse.Namespace, rows: list[dict]) -> None:
    nodes = sum(1 for _ in spec.root.walk())
    _, t_bounds = timed(summary_bounds, spec)
    summary, t_sum = timed(summarise, spec)
    row = {"family": family, "case": label, "nodes": nodes, "summarise": t_sum, "bounds": t_bounds,
           "verify": None, "verify_cpu": None,
           "proven": None, "decides": summary.decides, "ticks": summary.bounds.get("ticks"),
           "actions": summary.bounds.get("actions")}
    if family in ("shipped", "nav2") or nodes <= args.verify_max_nodes:
        cpu0 = time.process_time()
        result, t_ver = timed(verify_tree, spec, max_runs=args.verify_max_runs)
        row["verify"], row["verify_cpu"], row["proven"] = t_ver, time.process_time() - cpu0, result.proven
        row["complete"], row["method"] = result.complete, result.method
        row["ticks"], row["actions"] = result.bounds.get("ticks"), result.bounds.get("actions")
    rows.append(row)
    ver = "skipped" if row["verify"] is None else f"{row['verify']:8.3f}"
    cpu = "" if row["verify_cpu"] is None else f"{row['verify_cpu']:8.3f}"
    ratio = "" if row["verify"] is None else f"{row['verify'] / max(t_sum, 1e-9):8.1f}x"
    print(f"{family:8s} {label:22s} {nodes:5d} {t_bounds:9.3f} {t_sum:9.3f} {ver:>9s} {cpu:>9s} {ratio:>9s}  "
          f"decides={summary.decides} verify_proven={row['proven']} ticks={row['ticks']} "
          f"actions={row['actions']}", flush=True)


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for family in dict.fromkeys(r["family"] for r in rows):
        pts = sorted((r["nodes"], r["summarise"], r["verify_cpu"]) for r in rows if r["family"] == family)
        line = ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"summarise: {family}")
        ver = [(p[0], p[2]) for p in pts if p[2] is not None]
        if ver:
            ax.plot([v[0] for v in ver], [v[1] for v in ver], "x--", color=line[0].get_color(),
                    label=f"verify_tree (CPU): {family}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("nodes in the tree")
    ax.set_ylabel("seconds")
    ax.set_title("bt-grasp verification time")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-k", type=int, default=16, help="longest chain of blocks")
    ap.add_argument("--max-n", type=int, default=32, help="widest selector of blocks")
    ap.add_argument("--random-sizes", type=int, nargs="*", default=[25, 50, 100, 200])
    ap.add_argument("--random-per-size", type=int, default=3)
    ap.add_argument("--verify-max-runs", type=int, default=200_000, help="as `bt-grasp verify`")
    ap.add_argument("--verify-max-nodes", type=int, default=400,
                    help="time verify_tree on generated trees up to this many nodes")
    ap.add_argument("--no-shipped", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default="verify_scaling.png")
    args = ap.parse_args(argv)

    rows: list[dict] = []
    print("bounds s: summary_bounds() (no witness runs); summ. s: summarise() (bounds + witness search);"
          " verify s / cpu s: verify_tree() (what `bt-grasp verify` runs), wall and CPU seconds;"
          " ratio: verify_tree / summarise (wall)")
    print(f"{'family':8s} {'case':22s} {'nodes':>5s} {'bounds s':>9s} {'summ. s':>9s} {'verify s':>9s} "
          f"{'cpu s':>9s} {'ratio':>9s}")
    for k in range(1, args.max_k + 1):
        measure("chain", f"k={k}", load_tree_text(chain(k), "<chain>"), args, rows)
    n = 1
    while n <= args.max_n:
        measure("selector", f"n={n}", load_tree_text(fan(n), "<selector>"), args, rows)
        n *= 2
    rng = random.Random(args.seed)
    for size in args.random_sizes:
        for i in range(args.random_per_size):
            measure("random", f"{size} #{i}", load_tree_text(random_tree(rng, size), "<random>"), args, rows)
    if not args.no_shipped:
        for path in sorted((ROOT / "trees").rglob("*.yaml")):
            if "subtrees" in path.parts:
                continue
            measure("shipped", path.name, load_tree(str(path)), args, rows)
        for path in sorted((ROOT / "tests" / "data" / "nav2").glob("*.xml")):
            measure("nav2", path.stem[-22:], import_spec(path), args, rows)
            # FollowPath answering at once: the navigator decides, and its bounds are proven
            sync = import_spec(path, outcomes={"FollowPath": ["success", "failure"]})
            measure("nav2", "sync " + path.stem[-17:], sync, args, rows)

    print("\ntargets (verify_tree CPU seconds, worst case in this run; wall clock depends on load):")
    verified = [r for r in rows if r["verify_cpu"] is not None]

    def worst(pick) -> float | None:
        return max((r["verify_cpu"] for r in verified if pick(r)), default=None)

    got_by = {
        "shipped": worst(lambda r: r["family"] == "shipped"),
        "chain k=16": worst(lambda r: r["case"] == "k=16"),
        "random 200": worst(lambda r: r["family"] == "random" and r["nodes"] >= 150),
        "nav2": worst(lambda r: r["family"] == "nav2"),
    }
    for name, limit in TARGETS.items():
        got = got_by[name]
        verdict = "not measured" if got is None else ("met" if got < limit else "MISSED")
        shown = "-" if got is None else f"{got:.3f} s"
        print(f"  {name:11s} < {limit:.0f} s: {shown:>9s}  {verdict}")
    print(f"  (summarise, slowest case: {max(r['summarise'] for r in rows):.3f} s)")
    print(f"  (bounds alone, slowest case: {max(r['bounds'] for r in rows):.3f} s)")
    both = [r for r in rows if r["verify"] is not None]
    if both:
        total_s = sum(r["summarise"] for r in both)
        total_v = sum(r["verify"] for r in both)
        print(f"cases timed by both: {len(both)}; verify_tree / summarise total time ratio "
              f"{total_v / max(total_s, 1e-9):.1f}x")
    if args.plot:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
