"""tools/perf/contact_models.py: one episode under two contact models prints one row each, and
the shipped model reproduces a plain benchmark episode (the tool's hooks change nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ROOT

pytest.importorskip("airo_models")

# fields that are timings or bookkeeping, not outcomes of the episode
NOT_OUTCOME = {"wall", "time", "contact_model", "scene_cache", "trace"}


def test_contact_models_table_and_shipped_reproduces_a_bench_episode(tmp_path):
    from bt_grasp.bench.tasks import make_tasks
    from bt_grasp.bench.worker import close_worlds, run_task

    out = tmp_path / "records.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's bt_grasp, in any worktree
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "perf" / "contact_models.py"), "--episodes", "1",
                           "--image-size", "128", "--perception", "sim", "--candidates", "soft pads",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and "| sim |" in line]
    assert [r.split(" | ")[0] for r in rows] == ["| shipped", "| soft pads"], proc.stdout
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 10 and cells[2] == "1" and cells[5].endswith("] %"), row
    assert rows[0].rstrip(" |").endswith("1/1")  # the shipped model ends as itself
    records = {r["contact_model"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(records) == {"shipped", "soft pads"}

    task = make_tasks([str(ROOT / "trees" / "clutter.yaml")], [0], 1, ["easy"], ["sim"], 128)[0]
    try:
        plain = run_task(task)
    finally:
        close_worlds()
    shipped = records["shipped"]
    assert "error" not in plain and "error" not in shipped
    assert {k: v for k, v in shipped.items() if k not in NOT_OUTCOME} == \
           {k: v for k, v in plain.items() if k not in NOT_OUTCOME}


def test_a_candidate_is_the_drivers_own_switches_split_at_the_reset():
    """Candidates name contact.py's switches (no copy of its fields to fall out of step): those the
    reset builds into the world are set before it, the rest after it, on the same scene."""
    sys.path.insert(0, str(ROOT / "tools" / "perf"))
    try:
        import contact_models as cm
    finally:
        sys.path.remove(str(ROOT / "tools" / "perf"))
    both = cm.SOFT_PADS + cm.ROBOTIQ + cm.ANCHOR
    assert both.switched(at_build=True) == {"pad_stiffness_n_m": 3e4}
    assert both.switched(at_build=False) == {"finger_speed_mps": 0.05, "force_min_n": 20.0, "force_max_n": 235.0}
    assert both.friction_anchor and cm.SHIPPED.switched(True) == cm.SHIPPED.switched(False) == {}
    assert (cm.FINGER_LEAD + cm.FINGER_LEAD_10).switched(False) == {"finger_lead_m": 0.01}  # the later wins
    with pytest.raises(ValueError, match="not a contact.py switch: pad_stiffness"):
        cm.switches(pad_stiffness=3e4)
