"""Values set by measuring scenes live in one table (perception/calibration.py), each with its
source, and the code reads them from it; code comments say why, not which run showed it."""

from __future__ import annotations

import re
from pathlib import Path

from bt_grasp.nodes import evidence
from bt_grasp.perception import colour, features, grounding, split_merge, vocabulary
from bt_grasp.perception.calibration import TABLE, value

PERCEPTION = Path(__file__).resolve().parent.parent / "bt_grasp" / "perception"
NODES = PERCEPTION.parent / "nodes"  # leaves that judge perception's scores (evidence.py)
# How a run's figures read in prose: "calibration scenes", "seed 0", "54 of 471", "N=44".
RUN_FIGURES = re.compile(r"calibration scenes|\bseeds? \d|\d+ of (the )?\d+|N=\d")


def test_every_calibrated_value_says_where_it_came_from():
    assert TABLE and all(len(c.source) > 20 for c in TABLE.values())


def test_every_calibrated_value_is_read_by_the_code():
    code = "\n".join(p.read_text() for folder in (PERCEPTION, NODES) for p in folder.glob("*.py")
                     if p.name != "calibration.py")
    unread = [name for name in TABLE if f'value("{name}")' not in code]
    assert unread == []


def test_the_code_uses_the_tables_values():
    assert grounding.ACCEPT == value("ACCEPT") and grounding.AMBIGUOUS == value("AMBIGUOUS")
    assert split_merge.MERGE_KEEP == value("MERGE_KEEP")
    assert vocabulary.RECT_FACE_SHARE == value("RECT_FACE_SHARE")
    assert features.EDGE_SCALE == value("EDGE_SCALE") and colour.FIXTURE_V80 == value("FIXTURE_V80")
    assert evidence.CONFIDENT_SCORE == value("CONFIDENT_SCORE") and evidence.RIVAL_SHARE == value("RIVAL_SHARE")


def test_no_perception_module_but_the_table_cites_a_runs_figures():
    cited = [f"{p.name}:{i}" for p in sorted(PERCEPTION.glob("*.py")) if p.name != "calibration.py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if RUN_FIGURES.search(line)]
    assert cited == []
