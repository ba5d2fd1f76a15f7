"""Benchmark metrics on synthetic episode records: every definition pinned with known answers."""

from __future__ import annotations

import math

import pytest

from bt_grasp.bench.metrics import clutter_split, compute, group_metrics, perf_summary
from bt_grasp.bench.report import markdown
from bt_grasp.stats import wilson


def rec(method="clutter", perception="sim", lighting="easy", seed=0, episode=0, **kw):
    base = {"key": f"{method}|{perception}|{lighting}|256|{seed}|{episode}", "method": method,
            "perception": perception, "lighting": lighting, "image_size": 256, "seed": seed,
            "episode": episode, "high_clutter": False, "decision": "FINALIZE",
            "reason": "target in basket", "actions": 1, "pushes": 0, "retries": 0, "grounded": True,
            "grasps_executed": 1, "grasps_held": 1, "watchdog_judged": 1, "watchdog_agree": 1,
            "displaced": 0, "task_success": True, "wall": 2.0,
            "time": {"physics": 1.0, "render": 0.2, "perception": 0.6, "tree": 0.2, "reset": 0.5}}
    base.update(kw)
    return base


def test_grasping_sr_is_a_mean_of_per_episode_rates_over_episodes_with_grasps():
    recs = [rec(grasps_executed=4, grasps_held=1), rec(episode=1, grasps_executed=1, grasps_held=1),
            rec(episode=2, grasps_executed=0, grasps_held=0)]
    g = group_metrics(recs, "clutter", "sim", "easy", "all")
    assert g.grasping_sr == pytest.approx((0.25 + 1.0) / 2)  # not pooled 2/5, and ep 2 excluded
    assert g.grasping_episodes == 2


def test_rates_counts_and_decisions():
    recs = [rec(grounded=True, task_success=True, actions=3, pushes=1, retries=2, displaced=4),
            rec(episode=1, grounded=False, task_success=False, decision="WAIT_CLARIFY",
                reason="grasp attempts spent", actions=5, pushes=0, retries=0, displaced=0,
                watchdog_judged=2, watchdog_agree=1)]
    g = group_metrics(recs, "clutter", "sim", "easy", "all")
    assert g.episodes == 2 and g.errors == 0
    assert g.grounding_sr == 0.5 and g.task_sr == 0.5 and g.finalize == 0.5
    assert g.action_steps == 4.0 and g.pushes == 0.5 and g.retries == 1.0 and g.displaced == 2.0
    assert g.decisions == {"FINALIZE": 1, "WAIT_CLARIFY": 1}
    assert g.reasons["WAIT_CLARIFY: grasp attempts spent"] == 1
    assert g.watchdog_agreement == pytest.approx(2 / 3)
    lo, hi = g.task_ci
    assert 0 < lo < 0.5 < hi < 1


def test_compute_splits_by_clutter_mode_and_counts_errors_in_all_only():
    recs = [rec(high_clutter=True), rec(episode=1, high_clutter=False, task_success=False),
            {"key": "clutter|sim|easy|256|0|2", "method": "clutter", "perception": "sim",
             "lighting": "easy", "seed": 0, "episode": 2, "error": "RuntimeError: boom"}]
    cells = {g.clutter: g for g in compute(recs)}
    assert set(cells) == {"high", "low", "all"}
    assert cells["high"].task_sr == 1.0 and cells["low"].task_sr == 0.0
    assert cells["all"].episodes == 2 and cells["all"].errors == 1


def test_empty_cells_give_nan_not_zero():
    g = group_metrics([rec(grasps_executed=0, grasps_held=0, watchdog_judged=0, watchdog_agree=0)],
                      "open_loop", "sim", "easy", "all")
    assert math.isnan(g.grasping_sr) and math.isnan(g.watchdog_agreement)
    assert g.grasping_ci == g.watchdog_ci == (0.0, 1.0)  # no trials: the whole interval


def test_clutter_split_counts_scenes_not_methods():
    recs = [rec(method=m, episode=e, high_clutter=e % 2 == 0) for m in ("a", "b") for e in range(4)]
    assert clutter_split(recs) == {"scenes": 4, "high": 2, "low": 2, "high_share": 0.5}


def test_perf_summary_shares_sum_to_one():
    s = perf_summary([rec(), rec(episode=1, wall=4.0, time={"physics": 2, "render": 1, "perception": 0.5,
                                                             "tree": 0.5, "reset": 1})])
    assert s["median_s"] == 3.0
    assert sum(s["shares"].values()) == pytest.approx(1.0)


def test_markdown_renders_every_metric_column():
    md = markdown([rec(), rec(method="open_loop"), rec(method="remove_all", high_clutter=True)])
    for col in ("Grounding SR", "Grasping SR", "Task SR", "Action Steps", "Pushes/ep", "Displaced/ep",
                "Retries/ep", "FINALIZE", "Watchdog agrees", "Launches/100 ep", "Median s/ep", "simulated"):
        assert col in md
    assert "| remove_all | sim | easy | high | 1 |" in md


# --- FINALIZE precision and the failure taxonomy -------------------------------------------------

def test_the_report_names_the_engine_its_episodes_ran_on():
    assert "PyBullet UR5e" in markdown([rec()])  # records without a driver ran the default arm
    md = markdown([rec(driver="mujoco_arm", robot="ur5e_robotiq_mujoco")])
    assert "MuJoCo UR5e" in md and "PyBullet" not in md and "TinyRenderer" not in md


def test_finalize_precision_counts_only_success_claims_and_is_undefined_without_any():
    recs = [rec(), rec(episode=1, task_success=False),  # a false "target in basket"
            rec(episode=2, reason="safe stop after a non-empty failed grasp", task_success=False),
            rec(episode=3, decision="WAIT_CLARIFY", reason="delivery not confirmed", task_success=True)]
    g = group_metrics(recs, "clutter", "sim", "easy", "all")
    assert g.finalize_claims == 2 and g.finalize_precision == pytest.approx(0.5)
    assert g.finalize_precision_ci == wilson(1, 2)
    none = group_metrics([rec(decision="WAIT_CLARIFY", reason="x")], "clutter", "sim", "easy", "all")
    assert none.finalize_claims == 0 and math.isnan(none.finalize_precision)


@pytest.mark.parametrize("fields, category", [
    ({}, "success"),
    ({"task_success": False}, "false FINALIZE"),
    ({"task_success": False, "decision": "WAIT_CLARIFY", "reason": "target not found", "grounded": False,
      "grounded_ever": False}, "grounding miss"),
    ({"task_success": False, "decision": "WAIT_CLARIFY", "reason": "x", "target": "red box",
      "attempts": [{"node": "grasp", "aimed": "blue box", "held": "blue box", "label": "SUCCESS", "executed": True}]},
     "wrong object grasped"),
    ({"task_success": False, "decision": "WAIT_CLARIFY", "reason": "x", "target": "red box",
      "attempts": [{"node": "grasp", "aimed": "red box", "held": None, "label": "EMPTY", "executed": True}]},
     "grasp failed"),
    ({"task_success": False, "decision": "WAIT_CLARIFY", "reason": "x", "target": "red box",
      "attempts": [{"node": "grasp", "aimed": "red box", "held": "blue box", "label": "SUCCESS", "executed": True},
                   {"node": "grasp", "aimed": "red box", "held": None, "label": "EMPTY", "executed": True}]},
     "grasped a neighbour of a visible target"),
    ({"task_success": False, "decision": "WAIT_CLARIFY", "reason": "x", "pushes": 2, "attempts": []},
     "push ineffective"),
    ({"task_success": False, "decision": "WAIT_CLARIFY", "reason": "action budget spent (10 grasp/push actions)",
      "attempts": []}, "search budget spent"),
    ({"task_success": False, "decision": "WAIT_CLARIFY", "reason": "action budget spent (10 grasp/push actions)",
      "pushes": 2, "actions": 10, "grasp_calls": 8, "target": "red box",
      "attempts": [{"node": "grasp_hider", "aimed": "green lid", "held": "green lid", "label": "SUCCESS",
                    "executed": True}]}, "search budget spent"),
    ({"task_success": False, "decision": "WAIT_CLARIFY", "reason": "action budget spent (10 grasp/push actions)",
      "pushes": 6, "actions": 10, "attempts": []}, "push ineffective"),
    ({"task_success": False, "decision": "WAIT_CLARIFY", "reason": "search and grasp attempts spent",
      "target_left_table": True, "target": "red box",
      "attempts": [{"node": "grasp", "aimed": "red box", "held": "red box", "label": "SUCCESS", "executed": True}]},
     "target left the table"),
])
def test_every_episode_gets_one_taxonomy_category(fields, category):
    """Pushes name a failure only when they were at least half of the actions; a budget spent
    mostly on grasps of other objects is a search that spent it."""
    from bt_grasp.bench.metrics import taxonomy

    assert taxonomy(rec(**fields))["category"] == category


def test_a_neighbour_grasp_names_the_neighbours_held_most_often_first():
    from bt_grasp.bench.metrics import taxonomy

    attempts = [{"node": "grasp", "aimed": "green ball", "held": h, "executed": True}
                for h in ("red can", "blue box", "red can", None)]
    out = taxonomy(rec(task_success=False, decision="WAIT_CLARIFY", reason="action budget spent",
                       target="green ball", attempts=attempts))
    assert out == {"category": "grasped a neighbour of a visible target", "detail": "red can ×2, blue box ×1"}


def test_aim_accuracy_pools_holds_of_the_aimed_object_over_holds_and_skips_records_without_aims():
    recs = [rec(aim_hit=3, aim_held=4), rec(episode=1, aim_hit=0, aim_held=1),
            rec(episode=2)]  # a record from before aims were recorded: not counted as a miss
    g = group_metrics(recs, "clutter", "sim", "easy", "all")
    assert (g.aim_hit, g.aim_held, g.aim_episodes) == (3, 5, 2)
    assert g.aim_accuracy == pytest.approx(0.6) and g.aim_ci == wilson(3, 5)
    md = markdown(recs)
    assert "## Aim" in md and "| clutter | sim | easy | all | 2 | 60% (" in md and "n=5)" in md
    assert "## Aim" not in markdown([rec()])  # no aims recorded, no table


def test_report_shows_ci_and_n_on_rates_and_na_for_undefined():
    md = markdown([rec(decision="WAIT_CLARIFY", reason="x", task_success=False, grounded=False,
                       grounded_ever=False)])
    assert "n/a (n=0)" in md and "(0%–79%, n=1)" in md
    assert "## Failure taxonomy" in md and "grounding miss" in md


def test_launches_are_counted_per_hundred_episodes_and_per_episode():
    thrown = [{"body": "red mug", "speed": 2.4, "phase": "close", "primitive": "grasp", "clock": 3.1}]
    g = group_metrics([rec(launches=thrown * 2), rec(episode=1), rec(episode=2, launches=thrown),
                       rec(episode=3)], "clutter", "sim", "easy", "all")
    assert (g.launches, g.launch_episodes) == (3, 2)
    assert g.launches_per_100 == pytest.approx(75.0)
    assert group_metrics([rec()], "clutter", "sim", "easy", "all").launches_per_100 == 0.0


def test_grip_jumps_are_counted_apart_from_launches_and_shown_beside_them():
    jump = [{"body": "red mug", "speed": 1.5, "phase": "hold", "primitive": "grasp", "clock": 3.1}]
    records = [rec(grip_jumps=jump), rec(episode=1)]
    g = group_metrics(records, "clutter", "sim", "easy", "all")
    assert (g.launches, g.grip_jumps) == (0, 1)
    assert "0.0 (+1 in the grip)" in markdown(records)
