"""Each performance tool in tools/perf/ still runs: a tiny smoke case, no timing asserted."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from helpers import ROOT

PERF = ROOT / "tools" / "perf"

CASES = {
    "tick_overhead": ["--ticks", "200", "--repeats", "1"],
    "watchdog": ["--n", "20", "--repeat", "1"],
    "episode_perf": ["--perception", "sim", "--episodes", "1", "--image-size", "256"],
    "ablation_watchdog": ["--n", "1"],
    "halt_latency": ["--halts", "3", "--repeats", "1"],
    "watchdog_live": ["--n", "3", "--repeat", "1"],
    "physics_settings": ["--episodes", "1", "--image-size", "128", "--settings", "pyramid"],
    "launch_trace": ["--image-size", "128", "--perception", "sim", "--body", "small white can", "--at", "2.0",
                     "--before", "0.05", "--after", "0.05"],
    "low_side_close": ["--heights", "9.5", "--misalign", "10"],
}
EXPECT = {"tick_overhead": "overhead x", "watchdog": "samples/s", "episode_perf": "median",
          "ablation_watchdog": "clutter", "halt_latency": "polled / blocking wall ratio",
          "watchdog_live": "naive / incremental", "physics_settings": "physics floor",
          "launch_trace": "v=(", "low_side_close": "held"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_benchmark_script_runs_and_prints_its_figures(name):
    proc = subprocess.run([sys.executable, str(PERF / f"{name}.py"), *CASES[name]],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert EXPECT[name] in proc.stdout, proc.stdout[-2000:]


def test_perception_eval_scores_scenes_and_resumes(tmp_path):
    """One scene per lighting at 256²: the table prints every measure; a rerun adds nothing."""
    args = [sys.executable, str(PERF / "perception_eval.py"), "--scenes", "1", "--image-size", "256",
            "--out", str(tmp_path)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for measure in ("segmentation precision", "segmentation recall", "naming: colour word",
                    "naming: category word", "naming: size word", "grounding, target visibility", "survey ms"):
        assert measure in proc.stdout, proc.stdout[-2000:]
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2 and (tmp_path / "table.md").exists()
    again = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert again.returncode == 0 and len((tmp_path / "results.jsonl").read_text().splitlines()) == 2


def test_perception_replay_records_then_replays_the_same_outputs(tmp_path):
    """One episode per backend at 256²: the second run reads the frames and prints the same digest."""
    args = [sys.executable, str(PERF / "perception_replay.py"), "--frames", str(tmp_path / "f.pkl"),
            "--episodes", "1", "--image-size", "256"]
    runs = [subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT) for _ in range(2)]
    for proc in runs:
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "ms/frame" in proc.stdout, proc.stdout[-2000:]
    digests = [next(line for line in proc.stdout.splitlines() if line.startswith("digest")) for proc in runs]
    assert digests[0] == digests[1]


def test_verify_soundness_bench_runs_and_prints_its_summary():
    proc = subprocess.run([sys.executable, str(PERF / "verify_soundness.py"), "--trees", "3",
                           "--runs", "5", "--verify", "--verify-max-runs", "200"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(r"trees 3 \| runs 15 \(adversarial \d+\) \| summarise violations 0", proc.stdout), \
        proc.stdout[-2000:]
    assert "runs longer than the cap 0" in proc.stdout, proc.stdout[-2000:]


def test_verify_scaling_bench_runs_and_plots(tmp_path):
    png = tmp_path / "scaling.png"
    proc = subprocess.run([sys.executable, str(PERF / "verify_scaling.py"), "--max-k", "2",
                           "--max-parallel", "2", "--max-nested", "2", "--random-sizes", "20",
                           "--random-per-size", "1", "--max-runs", "2000", "--families", "parallel",
                           "chain", "nested", "random", "--plot", str(png)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "targets" in out and "parallel k<=8" in out, out[-2000:]
    # the two-branch parallel under default budgets: proven, 4 grasps at most
    assert out.count("PROVEN") >= 4 and "actions=4" in out, out[-2000:]
    assert png.stat().st_size > 0


def test_launch_trace_names_the_line_of_a_bad_tree_and_exits_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("tree: x\nroot:\n  sequence:\n    children:\n      - grasp: {target: 3}\n")
    proc = subprocess.run([sys.executable, str(PERF / "launch_trace.py"), "--tree", str(bad), "--image-size", "64"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith(f"{bad}:5:"), proc.stderr[-500:]
