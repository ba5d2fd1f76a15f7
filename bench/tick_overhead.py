"""Tick overhead: the same 50-node tree ticked by raw py_trees and by the bt_grasp runner.

Both trees: a repeat over a reactive sequence of 7 selectors, each with 5 failing and 1
succeeding condition, so every tick visits all 50 nodes below the repeat. Prints ticks/s and the
ratios measured in this run (target: bt_grasp with trace off <= 1.2x raw py_trees).

    python bench/tick_overhead.py [--ticks 20000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import py_trees

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.runner import Runner
from bt_grasp.spec.loader import load_tree_text

GROUPS, LEAVES = 7, 6


def raw_tree() -> py_trees.behaviour.Behaviour:
    groups = []
    for g in range(GROUPS):
        leaves = [py_trees.behaviours.Failure(f"c{g}_{i}") for i in range(LEAVES - 1)]
        leaves.append(py_trees.behaviours.Success(f"c{g}_ok"))
        groups.append(py_trees.composites.Selector(f"g{g}", memory=False, children=leaves))
    seq = py_trees.composites.Sequence("all", memory=False, children=groups)
    return py_trees.decorators.Repeat("loop", seq, num_success=-1)


def bt_yaml(ticks: int) -> str:
    lines = ["tree: overhead", f"budgets: {{max_ticks: {ticks}}}", "root:", "  repeat:",
             "    child:", "      sequence:", "        memory: false", "        children:"]
    for g in range(GROUPS):
        lines += ["          - selector:", "              memory: false", "              children:"]
        for i in range(LEAVES - 1):
            lines.append(f'                - label_is: {{id: c{g}_{i}, key: "{{flag}}", label: "no"}}')
        lines.append(f'                - label_is: {{id: c{g}_ok, key: "{{flag}}", label: "yes"}}')
    return "\n".join(lines) + "\n"


def time_raw(ticks: int) -> float:
    root = raw_tree()
    start = time.perf_counter()
    for _ in range(ticks):
        root.tick_once()
    return time.perf_counter() - start


def time_bt(ticks: int, trace: bool) -> float:
    spec = load_tree_text(bt_yaml(ticks), file="overhead.yaml")
    ctx = RunContext(registry=default_registry(), limits=EpisodeLimits(max_ticks=ticks),
                     blackboard=Blackboard({"flag": "yes"}))
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(spec, ctx, trace_path=str(Path(tmp) / "t.jsonl") if trace else None)
        start = time.perf_counter()
        res = runner.run()
        elapsed = time.perf_counter() - start
    assert res.ticks == ticks, res.summary_line()
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    n = args.ticks
    raw = min(time_raw(n) for _ in range(args.repeats))
    off = min(time_bt(n, trace=False) for _ in range(args.repeats))
    on = min(time_bt(max(n // 10, 100), trace=True) for _ in range(args.repeats)) * n / max(n // 10, 100)
    print(f"nodes per tick: {1 + 1 + GROUPS * (1 + LEAVES)}")
    print(f"raw py_trees          {n / raw:10.0f} ticks/s")
    print(f"bt_grasp, trace off   {n / off:10.0f} ticks/s   overhead x{off / raw:.2f}")
    print(f"bt_grasp, trace on    {n / on:10.0f} ticks/s   overhead x{on / raw:.2f}")


if __name__ == "__main__":
    main()
