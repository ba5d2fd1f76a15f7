"""Watchdog against traces recorded from the PyBullet simulator (tests/data/watchdog).

The set was made with `bt-grasp watchdog record --robot ur5e_robotiq --n 48 --seed 2026
-o tests/data/watchdog`; labels are the simulator's ground truth (see bt_grasp/watchdog/ground_truth.py).
Its telemetry carries the wrist load. Targets: EMPTY recall >= 0.96, successes called EMPTY <= 2 %,
macro-F1 >= 0.9, no success called SLIP. (Held-out accuracy is measured on larger sets from other
seeds: docs/watchdog.md.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bt_grasp.outcomes import Label
from bt_grasp.profile import load_profile
from bt_grasp.watchdog.classify import StreamingClassifier, classify
from bt_grasp.watchdog.dataset import load_dataset
from bt_grasp.watchdog.evaluate import evaluate
from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.watchdog.thresholds import thresholds_from_profile

DATA = Path(__file__).parent / "data" / "watchdog"


@pytest.fixture(scope="module")
def traces():  # noqa: ANN201
    return load_dataset(DATA)


def test_recorded_set_covers_every_label(traces) -> None:  # noqa: ANN001
    assert len(traces) >= 36
    assert {t.label for t in traces} == set(Label)
    assert all(t.meta.get("robot") == "ur5e_robotiq" and t.meta.get("truth") for t in traces)


def test_regression_targets(traces) -> None:  # noqa: ANN001
    th = thresholds_from_profile(load_profile("ur5e_robotiq"))
    s = evaluate(traces, th)
    assert s.empty_recall() >= 0.96, s.table()
    assert s.success_called_empty() <= 0.02, s.table()
    assert s.macro_f1() >= 0.9, s.table()
    assert s.called("SUCCESS", "SLIP") == 0.0, s.table()


def test_deep_slips_are_caught_by_the_wrist_load(traces) -> None:  # noqa: ANN001
    """Slips that finger telemetry calls SUCCESS become SLIP once the wrist load is read."""
    th = thresholds_from_profile(load_profile("ur5e_robotiq"))
    slips = [tr for tr in traces if tr.label is Label.SLIP]
    with_load = [classify(tr.telemetry, th) for tr in slips]
    fingers_only = [classify(Telemetry(**{**tr.telemetry.to_dict(), "load": None}), th) for tr in slips]
    by_load = [v for v, f in zip(with_load, fingers_only, strict=True)
               if v.label is Label.SLIP and f.label is Label.SUCCESS]
    rules = {v.evidence["rule"] for v in by_load}
    assert "load_drop_at_rest" in rules and rules <= {"load_drop_at_rest", "wrist_pushed_up"}
    assert sum(v.label is Label.SLIP for v in with_load) > sum(f.label is Label.SLIP for f in fingers_only)


def test_streaming_equals_batch_on_recorded(traces) -> None:  # noqa: ANN001
    th = thresholds_from_profile(load_profile("ur5e_robotiq"))
    for tr in traces:
        sc = StreamingClassifier(th)
        for s in tr.telemetry.samples():
            sc.feed(s)
        assert sc.finish() == classify(tr.telemetry, th), tr.id


def test_record_on_the_simulator(tmp_path: Path) -> None:
    """A few live attempts, one per induced outcome: the recorder's ground truth and the Watchdog agree."""
    pytest.importorskip("pybullet")
    from bt_grasp.watchdog.cli import main

    prof = load_profile("ur5e_robotiq")
    assert main(["watchdog", "record", "--robot", str(prof.source), "--n", "6", "--seed", "11",
                 "-o", str(tmp_path), "-q"]) == 0
    got = load_dataset(tmp_path)
    assert len(got) == 6
    assert {t.meta["intent"] for t in got} == set(Label)
    s = evaluate(got, thresholds_from_profile(prof))
    assert s.accuracy() >= 4 / 6, s.table()
