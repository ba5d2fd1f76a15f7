"""tools/aim_replay.py: each grasp that held a neighbour of its aim gets the first cause that
applies, from what the simulator saw during that grasp; test seeds are refused."""

from __future__ import annotations

import pytest
from helpers import load_script

AIM = {"aimed": "green ball", "held": "red can", "executed": True, "plan": {"at": [0.50, 0.00, 0.03]}}
BALL, CAN = (0.50, 0.00, 0.035), (0.56, 0.00, 0.05)


@pytest.mark.parametrize("log, want", [
    # the ball moved 3 cm while the fingers came down and closed
    ({"after_close": {"green ball": (0.53, 0.0, 0.035)}, "first_body": "green ball", "first_phase": "approach"},
     "rolled"),
    ({"first_body": "red can", "first_phase": "approach"}, "finger on a neighbour"),
    ({"first_body": "green ball", "first_phase": "close", "closed_on": [["green ball"], ["red can"]]},
     "closed on a neighbour"),
    ({"closed_on": [["green ball"], ["green ball"]]}, "micro-lift"),
    ({}, "other"),
])
def test_a_neighbour_hold_gets_the_first_cause_that_applies(log, want):
    tool = load_script("tools/aim_replay.py")
    entry = tool.GraspLog(start={"green ball": BALL, "red can": CAN},
                          after_close=log.pop("after_close", {"green ball": BALL, "red can": CAN}), **log)
    assert tool.cause(AIM, entry) == want


def test_a_plan_on_a_mask_of_two_bodies_is_a_merged_mask_before_anything_else():
    tool = load_script("tools/aim_replay.py")
    entry = tool.GraspLog(start={"green ball": BALL}, first_body="red can", first_phase="approach")
    assert tool.cause({**AIM, "aimed_purity": 0.74}, entry) == "merged mask"


def test_a_grasp_point_far_from_the_aimed_object_is_off_the_aim():
    tool = load_script("tools/aim_replay.py")
    entry = tool.GraspLog(start={"green ball": (0.45, 0.0, 0.035)}, after_close={"green ball": (0.45, 0.0, 0.035)})
    assert tool.cause(AIM, entry) == "off the aim"


def test_test_seeds_and_missing_results_files_are_refused_in_one_line(capsys, tmp_path):
    tool = load_script("tools/aim_replay.py")
    assert tool.main(["--seed", "620"]) == 2
    assert tool.main(["--from", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "test seed" in err[0] and "no such results file" in err[1]
