"""Each on-demand benchmark in bench/ still runs: a tiny smoke case, no timing asserted."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT

CASES = {
    "tick_overhead": ["--ticks", "200", "--repeats", "1"],
    "watchdog": ["--n", "20", "--repeat", "1"],
    "episode_perf": ["--perception", "sim", "--episodes", "1", "--image-size", "256"],
    "ablation_watchdog": ["--n", "1"],
}
EXPECT = {"tick_overhead": "overhead x", "watchdog": "samples/s", "episode_perf": "median",
          "ablation_watchdog": "clutter"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_benchmark_script_runs_and_prints_its_figures(name):
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / f"{name}.py"), *CASES[name]],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert EXPECT[name] in proc.stdout, proc.stdout[-2000:]
