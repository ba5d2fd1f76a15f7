"""Tick overhead: the same tree ticked by raw py_trees and by the bt_grasp runner, trace off and on.

Both trees: a repeat over a reactive sequence of 7 selectors, each with 5 failing and 1
succeeding condition, then a leaf that runs across ticks (RUNNING for `--running` ticks, then
SUCCESS), so every tick visits all 51 nodes below the repeat and most ticks end RUNNING. Every
configuration runs the same number of ticks. Prints ticks/s and the ratios measured in this run
(targets: bt_grasp with trace off <= 1.2x raw py_trees, trace on <= 1.5x).

    python bench/tick_overhead.py [--ticks 20000] [--repeats 3] [--running 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import py_trees
from py_trees.common import Status

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.nodes.base import Leaf
from bt_grasp.registry import NodeType, Port, default_registry
from bt_grasp.runner import Runner
from bt_grasp.spec import load_tree_text

GROUPS, LEAVES = 7, 6


class Busy(Leaf):
    """A leaf that runs across ticks: RUNNING `ticks` times, then SUCCESS (py_trees' TickCounter)."""

    TYPE = "busy"

    def initialise(self) -> None:
        self.ticks_running = 0

    def update(self) -> Status:
        self.ticks_running += 1
        return Status.RUNNING if self.ticks_running <= int(self.params.get("ticks", 0)) else Status.SUCCESS


BUSY_TYPE = NodeType("busy", "action", {"ticks": Port("ticks", "int", default=5, minimum=0)},
                     doc="bench only: RUNNING n ticks, then SUCCESS", factory=Busy)


def raw_tree(running: int) -> py_trees.behaviour.Behaviour:
    groups: list[py_trees.behaviour.Behaviour] = []
    for g in range(GROUPS):
        leaves = [py_trees.behaviours.Failure(f"c{g}_{i}") for i in range(LEAVES - 1)]
        leaves.append(py_trees.behaviours.Success(f"c{g}_ok"))
        groups.append(py_trees.composites.Selector(f"g{g}", memory=False, children=leaves))
    groups.append(py_trees.behaviours.TickCounter("busy", duration=running, completion_status=Status.SUCCESS))
    seq = py_trees.composites.Sequence("all", memory=False, children=groups)
    return py_trees.decorators.Repeat("loop", seq, num_success=-1)


def bt_yaml(ticks: int, running: int) -> str:
    lines = ["tree: overhead", f"budgets: {{max_ticks: {ticks}}}", "root:", "  repeat:",
             "    child:", "      sequence:", "        memory: false", "        children:"]
    for g in range(GROUPS):
        lines += ["          - selector:", "              memory: false", "              children:"]
        for i in range(LEAVES - 1):
            lines.append(f'                - label_is: {{id: c{g}_{i}, key: "{{flag}}", label: "no"}}')
        lines.append(f'                - label_is: {{id: c{g}_ok, key: "{{flag}}", label: "yes"}}')
    lines.append(f"          - busy: {{id: busy, ticks: {running}}}")
    return "\n".join(lines) + "\n"


def time_raw(ticks: int, running: int) -> float:
    root = raw_tree(running)
    start = time.perf_counter()
    for _ in range(ticks):
        root.tick_once()
    return time.perf_counter() - start


def time_bt(ticks: int, running: int, trace: bool) -> float:
    """Seconds for `ticks` ticks of the runner, set-up (compile, header) excluded as for raw."""
    default_registry().add(BUSY_TYPE, replace=True)
    spec = load_tree_text(bt_yaml(ticks, running), file="overhead.yaml")
    ctx = RunContext(registry=default_registry(), limits=EpisodeLimits(max_ticks=ticks),
                     blackboard=Blackboard({"flag": "yes"}))
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(spec, ctx, trace_path=str(Path(tmp) / "t.jsonl") if trace else None)
        runner._header()  # versions() reads package metadata once; not a per-tick cost
        start = time.perf_counter()
        res = runner.run()
        elapsed = time.perf_counter() - start
        lines = (Path(tmp) / "t.jsonl").read_text().count("\n") if trace else ticks + 2
    assert res.ticks == ticks and lines == ticks + 2, res.summary_line()
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--running", type=int, default=5, help="ticks the running leaf stays RUNNING")
    args = ap.parse_args()
    n, k = args.ticks, args.running
    times: dict[str, list[float]] = {"raw": [], "off": [], "on": []}
    for _ in range(args.repeats):  # interleaved, so a load change on the machine hits all three
        times["raw"].append(time_raw(n, k))
        times["off"].append(time_bt(n, k, trace=False))
        times["on"].append(time_bt(n, k, trace=True))
    raw, off, on = (min(times[key]) for key in ("raw", "off", "on"))
    print(f"nodes per tick: {1 + 1 + GROUPS * (1 + LEAVES) + 1} (one leaf RUNNING {k} ticks of every {k + 1})")
    print(f"raw py_trees          {n / raw:10.0f} ticks/s")
    print(f"bt_grasp, trace off   {n / off:10.0f} ticks/s   overhead x{off / raw:.2f}   (target <= 1.2)")
    print(f"bt_grasp, trace on    {n / on:10.0f} ticks/s   overhead x{on / raw:.2f}   (target <= 1.5)")
    print(f"tracing itself        trace on / trace off x{on / off:.2f}")


if __name__ == "__main__":
    main()
