"""tools/perf/rates_vs_bench.py on a hand-made pair of bench outputs: the prediction from one
run's rates, the measured decision mix with its Wilson interval, the episode's reason worded as
the verifier words it, and the leaf whose rates moved between the runs."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import load_script

rates_vs_bench = load_script("tools/perf/rates_vs_bench.py")

RATES = """rates:
  locate_object: {found: %s, not_found: %s}
  grasp: {done: 1.0}
  lift: {done: 1.0}
  place: {done: 1.0}
"""


def _episode(decision: str, reason: str, success: bool) -> str:
    return json.dumps({"method": "open_loop", "tree": "trees/open_loop.yaml", "perception": "geometric",
                       "lighting": "easy", "target": "red cup", "decision": decision, "reason": reason,
                       "task_success": success, "actions": 1 if decision == "FINALIZE" else 0,
                       "perception_calls": 1, "ticks": 10 if decision == "FINALIZE" else 2})


def test_prediction_beside_measurement_with_intervals(tmp_path: Path, capsys) -> None:
    """open_loop FINALIZEs exactly when the target is found: 80 % from the first run's rates;
    the other run measured 3 of 4 (Wilson [30, 95] %), its 'not found: red cup' counted as the
    verifier's 'not found: target object'; its own rates (found 0.5) name locate_object."""
    dev, test = tmp_path / "dev", tmp_path / "test"
    dev.mkdir()
    test.mkdir()
    (dev / "rates-open_loop-geometric-easy.yaml").write_text(RATES % (0.8, 0.2))
    (test / "rates-open_loop-geometric-easy.yaml").write_text(RATES % (0.5, 0.5))
    (test / "results.jsonl").write_text("\n".join([
        _episode("FINALIZE", "driver reported success", True),
        _episode("FINALIZE", "driver reported success", True),
        _episode("FINALIZE", "driver reported success", False),
        _episode("WAIT_CLARIFY", "not found: red cup", False)]) + "\n")
    assert rates_vs_bench.main(["--rates", str(dev), "--measured", str(test)]) == 0
    out = capsys.readouterr().out
    assert "| **FINALIZE** | 80 % | 50 % | 3/4 = 75 % [30, 95] | yes |" in out
    assert "| not found: target object | 20 % | 50 % | 1/4 = 25 % [5, 70] | yes |" in out
    assert "| Task SR (target in the basket; predicted: FINALIZE) | 80 % | 50 % | 2/4 = 50 % [15, 85] | yes |" in out
    assert "| locate_object | found 0.80, not_found 0.20 | found 0.50, not_found 0.50 | 80 % → 50 % |" in out
    assert "| expected ticks (measured: mean, 95 % CI) | 1.0–" in out  # no durations: an interval
    assert "| 8.00 [" not in out and "| 8.0 [" in out  # 3 runs of 10 ticks, 1 of 2


def test_durations_make_the_expected_ticks_a_figure(tmp_path: Path, capsys) -> None:
    """With every call lasting 4 ticks (durations), open_loop's expected ticks are a figure: the
    found 80 % make 3 motions of 3 ticks beyond the first, 1 + 0.8 x 9 = 8.2."""
    dev, test = tmp_path / "dev", tmp_path / "test"
    dev.mkdir()
    test.mkdir()
    (dev / "rates-open_loop-geometric-easy.yaml").write_text(
        RATES % (0.8, 0.2) + "durations: {grasp: 4, lift: 4, place: 4}\n")
    (test / "results.jsonl").write_text(_episode("FINALIZE", "driver reported success", True) + "\n")
    assert rates_vs_bench.main(["--rates", str(dev), "--measured", str(test)]) == 0
    assert "| expected ticks (measured: mean, 95 % CI) | 8.2 | n/a |" in capsys.readouterr().out


def test_a_measured_rates_file_with_unattributed_calls_is_named(tmp_path: Path, capsys) -> None:
    """An older rates file of the measured run, with calls counted as `(unattributed)`: the
    comparison says how many, so its open leaves are not taken for the model's."""
    dev, test = tmp_path / "dev", tmp_path / "test"
    dev.mkdir()
    test.mkdir()
    (dev / "rates-open_loop-geometric-easy.yaml").write_text(RATES % (0.8, 0.2))
    (test / "rates-open_loop-geometric-easy.yaml").write_text(
        "source: {node_counts: {'(unattributed)': {calls: 3}}}\n" + RATES % (0.5, 0.5))
    (test / "results.jsonl").write_text(_episode("FINALIZE", "driver reported success", True) + "\n")
    assert rates_vs_bench.main(["--rates", str(dev), "--measured", str(test)]) == 0
    assert "counts 3 calls as `(unattributed)`" in capsys.readouterr().out
