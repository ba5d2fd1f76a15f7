"""Scoring an episode from ground truth: what the record says about where the target ended."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bt_grasp.bench.score import score_episode


class _Driver:
    """Ground truth as a scoring driver exposes it: one target, its final pose given."""

    def __init__(self, final_z: float) -> None:
        self.spec = SimpleNamespace(visibility=0.8, high_clutter=False)
        self._final = (0.5, 0.0, final_z)

    def task(self) -> str:
        return "red box"

    def object_names(self) -> dict[int, str]:
        return {7: "red box"}

    def object_pose(self, name: str):
        return (self._final, (0, 0, 0, 1)) if name == "red box" else None

    def object_in_basket(self, name: str) -> bool:
        return False

    def launches(self) -> list[dict]:
        return [{"body": "red box", "speed": 3.2, "phase": "close", "primitive": "grasp", "clock": 1.5}]

    def grip_jumps(self) -> list[dict]:
        return [{"body": "red box", "speed": 1.4, "phase": "hold", "primitive": "grasp", "clock": 2.0}]


def _score(final_z: float) -> dict:
    result = SimpleNamespace(events=[], counters={}, decision=SimpleNamespace(value="WAIT_CLARIFY"),
                             reason="search and grasp attempts spent", ticks=10, clock=3.0, actions=6)
    probe = SimpleNamespace(locates=[{"text": "red box", "found": True, "body": 7, "name": "red box",
                                      "purity": 1.0}], grasps=[])
    return score_episode(_Driver(final_z), result, probe, before={"red box": [0.5, 0.0, 0.02]})


@pytest.mark.parametrize("final_z, left", [(0.02, False), (0.09, False), (-0.1, False), (-3.0, True)])
def test_a_target_that_fell_off_the_table_is_scored_as_lost_not_as_a_failed_search(final_z, left):
    rec = _score(final_z)
    assert rec["target_left_table"] is left
    assert (rec["taxonomy"]["category"] == "target left the table") is left


def test_the_record_keeps_every_launch_the_driver_measured():
    rec = _score(0.02)
    assert rec["launches"] == [{"body": "red box", "speed": 3.2, "phase": "close", "primitive": "grasp",
                                "clock": 1.5}]
    assert [j["phase"] for j in rec["grip_jumps"]] == ["hold"]  # kept apart, never dropped
