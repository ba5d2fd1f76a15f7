"""CI smoke of `bt-grasp bench`: one episode per shipped tree at 256², two local workers; every
metric computed, tables and plots rendered, failed episodes keep their traces (remove_all's
episode 0 fails, the others succeed); then resuming."""

from __future__ import annotations

import json
import math

import pytest
import yaml
from helpers import ROOT

from bt_grasp.bench.metrics import compute
from bt_grasp.bench.results import load_records
from bt_grasp.cli import main
from bt_grasp.verifier.probability.rates import load_rates

TREES = [str(ROOT / "trees" / n) for n in ("clutter.yaml", "open_loop.yaml", "remove_all.yaml")]
EPISODES = 1  # episode 1 of remove_all alone would double the module's time


@pytest.fixture(scope="module")
def bench_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    code = main(["bench", "--trees", *TREES, "--seeds", "0", "--episodes", str(EPISODES),
                 "--lighting", "easy", "--perception", "sim", "--workers", "2",
                 "--image-size", "256", "--out", str(out), "--no-progress"])
    assert code == 0
    return out


def test_every_episode_has_a_complete_record(bench_out):
    recs = load_records(bench_out / "results.jsonl")
    assert len(recs) == 3 * EPISODES
    assert not [r for r in recs if "error" in r], [r.get("error") for r in recs]
    fields = ("grounded", "grasps_executed", "grasps_held", "task_success", "actions", "pushes",
              "displaced", "retries", "decision", "reason", "high_clutter", "wall", "time",
              "grounded_ever", "attempts", "taxonomy", "aim_hit", "aim_held")
    for r in recs:
        for f in fields:
            assert f in r, (r["key"], f)
        assert r["decision"] in ("FINALIZE", "WAIT_CLARIFY")
        assert set(r["time"]) >= {"physics", "render", "perception", "tree"}
        if not r["task_success"]:  # traces are kept for failed episodes only
            assert r["trace"] and json.loads(open(r["trace"]).readline())["type"] == "header"
        else:
            assert "trace" not in r
    # every grasp the arm ran is scored from ground truth, whether it ran in one call or across
    # ticks: a delivered target was held by a grasp
    for r in recs:
        assert r["grasps_executed"] <= r["grasp_calls"] and len(r["attempts"]) <= r["grasp_calls"]
        if r["task_success"]:
            assert r["grasps_executed"] >= 1 and r["grasps_held_target"] >= 1, r["key"]
        # every grasp the arm ran was planned on a perceived object, whatever leaf asked for it
        assert all(a["aimed"] is not None for a in r["attempts"] if a["executed"]), r["attempts"]
    assert sum(r["watchdog_judged"] for r in recs) >= 1
    # same seed, same scene for every method
    by_scene = {}
    for r in recs:
        by_scene.setdefault(r["episode"], set()).add(r["target"])
    assert all(len(t) == 1 for t in by_scene.values())


def test_every_metric_is_computed_and_the_report_renders(bench_out):
    recs = load_records(bench_out / "results.jsonl")
    cells = [g for g in compute(recs) if g.clutter == "all"]
    assert {g.method for g in cells} == {"clutter", "open_loop", "remove_all"}
    for g in cells:
        assert g.episodes == EPISODES
        for v in (g.grounding_sr, g.task_sr, g.action_steps, g.pushes, g.displaced, g.retries, g.finalize):
            assert not math.isnan(v)
        assert sum(g.decisions.values()) == EPISODES
    md = (bench_out / "report.md").read_text()
    assert f"| clutter | sim | easy | all | {EPISODES} |" in md and "Median s/ep" in md
    assert "FINALIZE precision" in md and "## Failure taxonomy" in md
    for png in ("success_all.png", "decisions.png"):
        assert (bench_out / png).read_bytes()[:4] == b"\x89PNG"


def test_the_measured_rates_are_a_rates_file_per_method(bench_out):
    """rates.yaml indexes one rates file per method, each readable by `verify --rates`, with
    the counts of what the episodes' leaves answered beside the rates, every answer attributed
    to its leaf (clutter's delivery check too), and the mean ticks per call of each type."""
    index = yaml.safe_load((bench_out / "rates.yaml").read_text())["methods"]
    assert set(index) == {f"{m}-sim-easy" for m in ("clutter", "open_loop", "remove_all")}
    for entry in index.values():
        rates = load_rates(bench_out / entry["file"])
        assert entry["episodes"] == EPISODES
        assert rates.counts["grasp"] and set(rates.table) == set(rates.counts)
        for key, row in rates.counts.items():
            assert rates.table[key] == {o: n / sum(row.values()) for o, n in row.items()}
        assert "(unattributed)" not in entry["node_counts"]
        assert all(ticks >= 1 for ticks in rates.durations.values())
        assert rates.durations["grasp"] > 1  # a grasp's motion spans ticks
    finalized = [r for r in load_records(bench_out / "results.jsonl")
                 if r["method"] == "clutter" and r["decision"] == "FINALIZE"]
    assert finalized and "deliver/confirm" in index["clutter-sim-easy"]["node_counts"]


def test_a_rerun_skips_finished_episodes(bench_out):
    before = (bench_out / "results.jsonl").read_text()
    code = main(["bench", "--trees", *TREES, "--seeds", "0", "--episodes", str(EPISODES),
                 "--lighting", "easy", "--perception", "sim", "--workers", "2",
                 "--image-size", "256", "--out", str(bench_out), "--no-progress"])
    assert code == 0
    assert (bench_out / "results.jsonl").read_text() == before
