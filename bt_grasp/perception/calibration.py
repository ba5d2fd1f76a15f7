"""Perception values set by measuring scenes, each with where it came from: one table, read by code.

Why a table: which scenes and figures set a threshold is a fact about the value, to be reviewed
and updated with it, not a comment in the code that reads it; the code says why the value
matters. "Calibration scenes" are the clutter benchmark's dev seeds (bt_grasp/bench/splits.py):
seed 0 (200 episodes, both lightings, 512²) set most values, seed 1 checked later rules.
Values the code takes from geometry (a catalogue size, a gripper stroke) are not here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Calibrated:
    """A measured setting: its value and the scenes and figures that set it."""

    value: float
    source: str


_SEED0 = "calibration scenes (seed 0, both lightings)"

TABLE: dict[str, Calibrated] = {
    # grounding.py, ties.py, fits.py
    "ACCEPT": Calibrated(0.6, f"{_SEED0}, every object named as a goal (2,400 queries): a lone candidate at "
                              "0.55-0.65 was right 64 % (N=44), above 0.8 99 % (N=1,661); 0.6 instead of 0.45 "
                              "cut confident wrong answers from 81 to 38 for 37 right ones"),
    "AMBIGUOUS": Calibrated(0.8, f"{_SEED0}, the same 2,400 queries: the best was right 98 % with no runner-up "
                                 "(N=1,802), 95-97 % with one below 0.7 x the best (N=106), 90 % at 0.7-0.8 (N=38), "
                                 "59-67 % at 0.8 or above (N=122)"),
    "DECISIVE_FIT": Calibrated(0.85, f"{_SEED0}, every visible object named as a goal (5,874 queries): 82 former "
                                     "questions answered, 75 right"),
    "DECISIVE_MARGIN": Calibrated(0.15, "set with DECISIVE_FIT, on the same 5,874 queries"),
    "NOUN_FLOOR_OCCLUDED": Calibrated(0.1, f"{_SEED0}, 5,874 goals in view and 14,630 names not in view: goals "
                                           "right 261 -> 281, wrong answers 100 -> 92, questions 229 -> 264, names "
                                           "not in view answered 10.0 % -> 10.5 % (against the full-view levels)"),
    "FIT_REF_OCCLUDED": Calibrated(0.25, "set with NOUN_FLOOR_OCCLUDED; below 0.25 the names not in view answered "
                                         "grew faster than the goals found"),
    # split_merge.py, geometric.py (fragments)
    "MERGE_KEEP": Calibrated(0.65, f"{_SEED0}: segmentation precision 0.91 -> 0.95 at the same recall against "
                                   "0.8 (at 0.8 a large duck's halves stayed apart); as the fragment-join test, "
                                   "joins of two objects of one colour fell from 19 of 78 to 3"),
    # normals.py (both off by default)
    "EDGE_STEP_M": Calibrated(0.004, "set from geometry (half an 8 mm step, under the link break and the valley "
                                     "depth), not tuned; with the edges on see EDGE_ANGLE_DEG"),
    "EDGE_ANGLE_DEG": Calibrated(40.0, "set from geometry, not tuned; with the edges on, dev seeds 0, 1, 11, 12 "
                                       "(400 scenes, both lightings, 512²): segmentation precision 94.6 -> 94.3 %, "
                                       "recall 94.9 -> 94.9 % (5 more of 6,270 objects), grounding 322 -> 328 (3 "
                                       "scenes in both lightings, none lost), survey time +29 %; so off. Cutting "
                                       "at outward folds too: precision 88.0 %"),
    "FACE_STEP_M": Calibrated(0.01, "set from geometry (above a brick's 2 mm studs), not tuned; with the face veto "
                                    "on, the same 400 scenes: precision 94.6 -> 94.3 %, recall 94.9 -> 95.0 % (11 "
                                    "more of 6,270 objects), grounding unchanged, survey time +11 %; so off"),
    # vocabulary.py: leaning objects
    "RECT_FACE_SHARE": Calibrated(0.45, "200 calibration scenes (seed 0, hard lighting): leaning boxes fitting "
                                        "'can' were 54 of the 471 naming errors; 22 remain with this rule"),
    "RECT_FACE_FILL": Calibrated(0.9, "set with RECT_FACE_SHARE (a rectangle fills 1, a disc 0.785)"),
    "RECT_FACE_WEIGHT": Calibrated(0.75, "set with RECT_FACE_SHARE"),
    "END_FACE_SHARE": Calibrated(0.36, "calibration scenes (seeds 0 and 1, easy lighting): a leaning can's or "
                                       "puck's largest face holds a median 41 % / 47 % of its points, a leaning "
                                       "duck's or mug's largest near-flat patch 28-34 %"),
    "DISC_SHARE": Calibrated(0.2, "set with END_FACE_SHARE"),
    "DISC_ASPECT": Calibrated(0.93, "set with END_FACE_SHARE (a disc's bounding rectangle: 1)"),
    "NO_CYLINDER_WEIGHT": Calibrated(0.6, "calibration scenes (seeds 0 and 1, easy lighting): leaning cans / "
                                          "pucks without cylinder evidence 3 % / 7 %, ducks, mugs and teddy bears "
                                          "54-72 %"),
    "UNSEEN_COLOUR_DIVISOR": Calibrated(8.0, "colour words right about 95 % of the time (f656b4f, seed 1: "
                                             "95.4 / 94.0 %, easy / hard)"),
    # features.py
    "LYING_CYLINDER_SHARE": Calibrated(0.7, f"{_SEED0}: points on one circle for 61 % of lying cans, under 3 % "
                                            "of other nouns, 10 % of lego bricks"),
    "EDGE_SCALE": Calibrated(0.06, "calibration scenes (seed 0, 60 scenes, easy, occluded segments only): the "
                                   "free edge's circle-minus-lines share had medians +0.44 upright cans, +0.31 "
                                   "pucks, -0.21 cubes, -0.29 boxes, -0.6 bars"),
    # nodes/evidence.py (the delivery check reads grounding scores)
    "CONFIDENT_SCORE": Calibrated(0.6, "development scenes (seeds 0-2, both lightings): every FINALIZE on a pick "
                                       "grounded below it (0.46, 0.47) delivered a wrong same-coloured object, "
                                       "every right one was grounded at 0.88 or more"),
    "RIVAL_SHARE": Calibrated(0.8, "the ratio of AMBIGUOUS, on its 2,400 queries: with a runner-up at 0.8 x the "
                                   "best or more, the best was right only 59-67 % (N=122)"),
    # colour.py
    "FIXTURE_V80": Calibrated(0.64, "the basket floor's 80th-percentile value in every calibration frame with "
                                    "the floor in view (easy lighting)"),
    "BROWN_V80": Calibrated(0.64, f"{_SEED0}: brown (and the purple duck that looks brown) under 0.57, red and "
                                  "orange above 0.8"),
}


def value(name: str) -> float:
    """The calibrated value of `name` (KeyError for a name not in the table)."""
    return TABLE[name].value
