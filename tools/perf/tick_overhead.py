"""Tick overhead: the same tree ticked by raw py_trees and by the bt_grasp runner, trace off and on.

Both trees: a repeat over a reactive sequence of 7 selectors, each with 5 failing and 1
succeeding condition, then a leaf that runs across ticks: in bt_grasp an `open_gripper`
primitive whose motion a stub driver runs for `--running` control periods (started, polled once
per tick, its event emitted when it ends), in raw py_trees a TickCounter RUNNING as many ticks.
Every tick visits all 51 nodes below the repeat. Every configuration runs the same number of
ticks, interleaved. Prints ticks/s and the ratios measured in this run (targets: bt_grasp with
trace off <= 1.2x raw py_trees, trace on <= 1.5x).

    python tools/perf/tick_overhead.py [--ticks 4000] [--repeats 15] [--running 5]

Times are CPU seconds of this process (time.process_time: user + system, so the trace's writes
count, and far steadier than wall time on a loaded machine). The ratios of the fastest rounds
are the headline (least disturbed by other load); with 3 or
more repeats, the mean of the per-round ratios and its 95 % confidence interval follow.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import py_trees
from py_trees.common import Status

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import EpisodeLimits, RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.motion import MotionHalted, SteppedMotion
from bt_grasp.runner import Runner
from bt_grasp.spec.loader import load_tree_text
from bt_grasp.watchdog.telemetry import Telemetry

GROUPS, LEAVES = 7, 6
PERIOD = 0.05


class StubStreamingDriver:
    """A streaming driver without physics: every primitive runs `periods` control periods."""

    name = "stub"
    control_period = PERIOD

    def __init__(self, periods: int) -> None:
        self.periods = periods

    def start(self, primitive: str, /, **kwargs: Any) -> SteppedMotion:
        ran = [0]

        def steps() -> Generator[None, None, Execution]:
            try:
                for _ in range(self.periods):
                    ran[0] += 1
                    yield
            except MotionHalted as halt:
                return Execution(Telemetry.empty(), ran[0] * PERIOD, halt.fault)
            return Execution(Telemetry.empty(), ran[0] * PERIOD, None)

        return SteppedMotion(primitive, steps(), Telemetry.empty, lambda: ran[0] * PERIOD)

    def stop(self) -> None:
        pass


def raw_tree(running: int) -> py_trees.behaviour.Behaviour:
    groups: list[py_trees.behaviour.Behaviour] = []
    for g in range(GROUPS):
        leaves = [py_trees.behaviours.Failure(f"c{g}_{i}") for i in range(LEAVES - 1)]
        leaves.append(py_trees.behaviours.Success(f"c{g}_ok"))
        groups.append(py_trees.composites.Selector(f"g{g}", memory=False, children=leaves))
    busy = py_trees.behaviours.TickCounter("busy", duration=running, completion_status=Status.SUCCESS)
    groups.append(py_trees.decorators.FailureIsSuccess("busy_ok", busy))
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
    lines.append("          - force_success: {child: {open_gripper: {id: busy}}}")
    return "\n".join(lines) + "\n"


def time_raw(ticks: int, running: int) -> float:
    root = raw_tree(running)
    start = time.process_time()
    for _ in range(ticks):
        root.tick_once()
    return time.process_time() - start


def time_bt(ticks: int, running: int, trace: bool) -> tuple[float, int]:
    """Seconds for `ticks` ticks of the runner, set-up (compile, header) excluded as for raw; and
    the ticks in which the primitive was RUNNING (read from the trace; 0 without one)."""
    spec = load_tree_text(bt_yaml(ticks, running), file="overhead.yaml")
    ctx = RunContext(registry=default_registry(), limits=EpisodeLimits(max_ticks=ticks),
                     driver=StubStreamingDriver(running), blackboard=Blackboard({"flag": "yes"}))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        runner = Runner(spec, ctx, trace_path=str(path) if trace else None)
        runner._header()  # versions() reads package metadata once; not a per-tick cost
        start = time.process_time()
        res = runner.run()
        elapsed = time.process_time() - start
        records = [json.loads(line) for line in path.read_text().splitlines()] if trace else []
    assert res.ticks == ticks, res.summary_line()
    assert not trace or len(records) == ticks + 2
    busy = sum(["busy", "RUNNING"] in rec.get("visited", []) for rec in records)
    return elapsed, busy


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and Student-t 95 % confidence interval."""
    from scipy import stats

    mean = statistics.fmean(values)
    half = stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / len(values) ** 0.5
    return mean, mean - half, mean + half


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=4000)
    ap.add_argument("--repeats", type=int, default=15,
                    help="rounds; many short rounds give the fastest ones a chance of a quiet machine")
    ap.add_argument("--running", type=int, default=5, help="ticks the running leaf stays RUNNING")
    args = ap.parse_args()
    n, k = args.ticks, args.running
    times: dict[str, list[float]] = {"raw": [], "off": [], "on": []}
    busy = 0
    for _ in range(args.repeats):  # interleaved, so a load change on the machine hits all three
        times["raw"].append(time_raw(n, k))
        times["off"].append(time_bt(n, k, trace=False)[0])
        seconds, busy = time_bt(n, k, trace=True)
        times["on"].append(seconds)
    raw, off, on = (min(times[key]) for key in ("raw", "off", "on"))
    print(f"nodes per tick: {1 + 1 + GROUPS * (1 + LEAVES) + 2}; the primitive was RUNNING in {busy} of {n} "
          f"ticks (polled {k} control periods per call)")
    print(f"raw py_trees          {n / raw:10.0f} ticks per CPU second")
    print(f"bt_grasp, trace off   {n / off:10.0f} ticks per CPU second   overhead x{off / raw:.2f}   (target <= 1.2)")
    print(f"bt_grasp, trace on    {n / on:10.0f} ticks per CPU second   overhead x{on / raw:.2f}   (target <= 1.5)")
    print(f"tracing itself        trace on / trace off x{on / off:.2f}")
    if args.repeats >= 3:  # the spread of the paired per-round ratios (same load within a round)
        for name, a, b in (("trace off / raw", "off", "raw"), ("trace on / raw", "on", "raw"),
                           ("trace on / off", "on", "off")):
            ratios = [x / y for x, y in zip(times[a], times[b], strict=True)]
            mean, low, high = mean_ci(ratios)
            print(f"per round {name:16s} mean x{mean:.2f}  95% CI [{low:.2f}, {high:.2f}]  (n={len(ratios)})")

if __name__ == "__main__":
    main()
