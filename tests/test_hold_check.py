"""Hold check on carrying motions: an object dropped during lift or place is never a delivery."""

from __future__ import annotations

import numpy as np
from helpers import ROOT, run_oracle

from bt_grasp.oracles import ScriptedOracle
from bt_grasp.spec.loader import load_tree
from bt_grasp.watchdog.hold import hold_lost, holding_samples
from bt_grasp.watchdog.telemetry import Phase, Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds

TH = WatchdogThresholds()
DT = 1 / 80


def _carry(aperture: list[float], effort: list[float], commanded: list[float] | None = None) -> Telemetry:
    n = len(aperture)
    commanded = commanded or [0.0] * n
    return Telemetry(t=np.arange(n) * DT, aperture_m=np.asarray(aperture) * 0.085,
                     aperture_norm=np.asarray(aperture, float), commanded_aperture=np.asarray(commanded, float),
                     effort=np.asarray(effort, float), velocity=np.zeros(n), ee_height=np.linspace(0.1, 0.3, n),
                     phase=np.full(n, int(Phase.MICRO_LIFT)))


def test_steady_hold_is_not_lost() -> None:
    lost, why = hold_lost(_carry([0.5] * 60, [0.6] * 60), TH)
    assert not lost, why


def test_fingers_collapsing_to_the_stop_with_no_effort_is_a_drop() -> None:
    tel = _carry([0.5] * 30 + [0.0] * 30, [0.6] * 30 + [0.0] * 30)
    lost, why = hold_lost(tel, TH)
    assert lost and "dropped" in why


def test_a_dip_shorter_than_the_settle_window_is_not_a_drop() -> None:
    tel = _carry([0.5] * 30 + [0.0] * 3 + [0.5] * 30, [0.6] * 30 + [0.0] * 3 + [0.6] * 30)
    assert not hold_lost(tel, TH)[0]


def test_an_empty_gripper_after_the_release_command_is_expected() -> None:
    """place opens the gripper at the end: samples after the open command are not judged."""
    n_hold, n_open = 40, 40
    tel = _carry([0.5] * n_hold + [0.0] * n_open, [0.6] * n_hold + [0.0] * n_open,
                 commanded=[0.0] * n_hold + [1.0] * n_open)
    assert holding_samples(tel) == n_hold
    assert not hold_lost(tel, TH)[0]


def test_empty_telemetry_is_not_called_a_drop() -> None:
    assert not hold_lost(Telemetry.empty(), TH)[0]


# --- the tree: clutter.yaml routes a drop to a retry, never to "target in basket" --------------

def _clutter():
    return load_tree(ROOT / "trees" / "clutter.yaml")


def test_clutter_retries_after_a_drop_and_then_delivers() -> None:
    oracle = ScriptedOracle({"locate": ["found", "found"], "is_occluded": ["failure"],
                             "grasp": ["done", "done"], "watchdog": ["SUCCESS", "SUCCESS"],
                             "watchdog#semantic": ["ok", "ok"], "deliver/lift": ["dropped", "done"],
                             "deliver/place": ["done"], "deliver/confirm": ["delivered"]}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert res.decision.value == "FINALIZE" and res.reason == "target in basket"
    called = [node for node, _ in oracle.choices]
    assert called.count("grasp") == 2 and "deliver/reopen_after_lift_drop" in called


def test_clutter_never_reports_delivery_when_every_carry_drops() -> None:
    oracle = ScriptedOracle({"is_occluded": ["failure"] * 4, "watchdog": ["SUCCESS"] * 4,
                             "watchdog#semantic": ["ok"] * 4, "deliver/lift": ["done"] * 4,
                             "deliver/place": ["dropped"] * 4}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert res.decision.value == "WAIT_CLARIFY" and res.reason == "search and grasp attempts spent"


def test_a_failed_lift_that_is_not_a_drop_asks_for_help() -> None:
    oracle = ScriptedOracle({"is_occluded": ["failure"], "watchdog": ["SUCCESS"], "watchdog#semantic": ["ok"],
                             "deliver/lift": ["infeasible"]}, fallback="done")
    res = run_oracle(_clutter(), oracle)
    assert res.decision.value == "WAIT_CLARIFY" and res.reason == "lift or place failed"


def test_dropped_is_an_outcome_only_where_the_hold_is_checked() -> None:
    from bt_grasp.default_registry import default_registry

    lift = default_registry().get("lift")
    assert "dropped" not in lift.alphabet({})
    assert "dropped" in lift.alphabet({"check_hold": True})
