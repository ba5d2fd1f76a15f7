"""Smoke of `bt-grasp bench --instructions`: one scene, two forms, the open-loop tree at 128²;
each form's record says what was asked and how it was scored, and report.md has a table per form."""

from __future__ import annotations

import pytest
from helpers import ROOT

from bt_grasp.bench.results import load_records
from bt_grasp.cli import main

FORMS = ("name", "absent")


@pytest.fixture(scope="module")
def bench_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_forms")
    code = main(["bench", "--trees", str(ROOT / "trees" / "open_loop.yaml"), "--seeds", "0", "--episodes", "1",
                 "--workers", "1", "--image-size", "128", "--out", str(out), "--no-progress",
                 "--instructions", *FORMS])
    assert code == 0
    return out


def test_each_form_runs_on_the_same_scene_with_its_own_instruction(bench_out) -> None:
    recs = {r["form"]: r for r in load_records(bench_out / "results.jsonl")}
    assert set(recs) == set(FORMS) and not [r for r in recs.values() if "error" in r]
    assert len({r["target"] for r in recs.values()}) == 1, "one scene, one target, whatever the words"
    assert recs["name"]["instruction"] == f"Grasp the {recs['name']['target']}"
    assert recs["name"]["referents"] == [recs["name"]["target"]]
    absent = recs["absent"]
    assert absent["referents"] == [] and not absent["finalize_true"]
    assert absent["right_decision"] == (absent["decision"] == "WAIT_CLARIFY"
                                        and absent["reason"].startswith("not found"))
    for r in recs.values():
        assert r["key"].endswith(f"|{r['form']}") and isinstance(r["form_grounded"], bool)


def test_the_report_has_a_table_per_form(bench_out) -> None:
    text = (bench_out / "report.md").read_text()
    assert "## Instructions (referring expressions)" in text
    for form in FORMS:
        assert f"### {form}" in text
