"""How long `bt-grasp --help` takes, against a bare interpreter start in the same run.

Target: under 0.5 s. Sub-command modules are imported only when their command is named, so the
top-level help needs neither numpy nor pybullet. Prints medians of N runs and their ratio:

    python tools/perf/cli_startup.py [--repeats 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET_S = 0.5


def _median_seconds(argv: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    base = _median_seconds([sys.executable, "-c", "pass"], args.repeats)
    cases = {"bt-grasp --help": ["--help"], "bt-grasp run --help": ["run", "--help"],
             "bt-grasp bench --help": ["bench", "--help"]}
    print(f"python -c pass: {base * 1000:.0f} ms (median of {args.repeats})")
    for name, argv in cases.items():
        t = _median_seconds([sys.executable, "-m", "bt_grasp.cli", *argv], args.repeats)
        verdict = "met" if t < TARGET_S else "NOT met"
        print(f"{name}: {t * 1000:.0f} ms = {t / base:.1f} x python start-up "
              f"(target < {TARGET_S * 1000:.0f} ms: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
