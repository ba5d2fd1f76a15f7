"""Dev and test seeds are disjoint: `--split dev|test` picks or checks the seeds of
`bt-grasp bench` and tools/perf/perception_eval.py, and the spent test seeds are documented."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from helpers import ROOT

from bt_grasp.bench.splits import DEV_SEEDS, SPENT_TEST_SEEDS, TEST_RANGE, fresh_test_seeds, seeds_for
from bt_grasp.cli import main
from bt_grasp.errors import UserError


def test_without_a_split_the_seeds_are_as_given_or_the_default():
    assert seeds_for(None, None, [0]) == [0]
    assert seeds_for(None, [7, 1003], [0]) == [7, 1003]  # no split: any seed, as before


def test_a_split_alone_runs_its_own_seeds():
    """dev: the seeds tuned on so far; test: the lowest test seed never reported on."""
    assert seeds_for("dev", None, [0]) == list(DEV_SEEDS) == [0, 1, 2, 3, 4, 5]
    lowest_unspent = min(set(TEST_RANGE) - set(SPENT_TEST_SEEDS))
    assert seeds_for("test", None, [0]) == fresh_test_seeds() == [lowest_unspent]
    assert all(s not in SPENT_TEST_SEEDS and s in TEST_RANGE for s in fresh_test_seeds(3))


@pytest.mark.parametrize(("split", "seeds", "what"), [
    ("test", [999, 3], "--seeds 3 is a dev seed, not a test one"),
    ("dev", [500], "--seeds 500 is a test seed, not a dev one"),
    # episode seed = base + 1000 × episode: base 1003 would replay base 3's scenes
    ("test", [1003], "so 1003 repeats base 3's scenes"),
    ("dev", [-1], "lie in 0-999"),
])
def test_seeds_outside_the_split_are_one_line_errors(split, seeds, what):
    with pytest.raises(UserError) as err:
        seeds_for(split, seeds, [0])
    assert what in str(err.value) and "\n" not in str(err.value)


def test_the_spent_test_seeds_are_the_documented_ones():
    """docs/benchmark.md lists the spent test seeds ("Spent test seeds: none" or seeds and
    ranges such as "500–509, 512"), and they are the ones the code refuses."""
    doc = (ROOT / "docs" / "benchmark.md").read_text()
    m = re.search(r"Spent test seeds: ([^.\n(]+)", doc)
    assert m is not None
    listed: list[int] = []
    for first, last in re.findall(r"(\d+)(?:–(\d+))?", m.group(1)):
        listed.extend(range(int(first), int(last or first) + 1))
    assert tuple(listed) == SPENT_TEST_SEEDS


def test_bench_refuses_a_seed_outside_its_split(capsys):
    code = main(["bench", "--split", "test", "--seeds", "0", "--trees", "clutter", "--episodes", "1",
                 "--no-progress", "-o", "/nonexistent/never-written"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "--seeds 0 is a dev seed, not a test one" in err


def test_bench_on_the_test_split_runs_a_fresh_test_seed(tmp_path):
    code = main(["bench", "--split", "test", "--trees", "clutter", "--episodes", "1", "--perception", "sim",
                 "--image-size", "128", "--workers", "1", "--no-progress", "--no-traces", "-o", str(tmp_path)])
    assert code == 0
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["seed"] for r in rows] == fresh_test_seeds()


def test_perception_eval_on_the_test_split_scores_a_fresh_test_seed(tmp_path):
    script = str(ROOT / "tools" / "perf" / "perception_eval.py")
    bad = subprocess.run([sys.executable, script, "--split", "dev", "--seed", "500", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert bad.returncode == 2 and "--seeds 500 is a test seed, not a dev one" in bad.stderr
    ok = subprocess.run([sys.executable, script, "--split", "test", "--scenes", "1", "--lighting", "easy",
                         "--image-size", "128", "--out", str(tmp_path)],
                        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert ok.returncode == 0, ok.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["seed"] for r in rows] == fresh_test_seeds()
    assert "grounding, target visibility" in ok.stdout and "segmentation recall" in ok.stdout
