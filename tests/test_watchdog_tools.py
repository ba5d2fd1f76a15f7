"""Watchdog dataset format, evaluation, calibration and CLI (synthetic traces: fast, no simulator)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from bt_grasp.errors import UserError
from bt_grasp.outcomes import LABELS, Label
from bt_grasp.watchdog.calibrate import calibrate, fit, write_profile
from bt_grasp.watchdog.cli import add_watchdog_parser, main
from bt_grasp.watchdog.dataset import Trace, load_dataset, read_index, save_trace, split
from bt_grasp.watchdog.evaluate import Scores, confusion, evaluate, plot_confusion
from bt_grasp.watchdog.synthetic import synth_dataset
from bt_grasp.watchdog.thresholds import WatchdogThresholds, thresholds_from_profile


def _write(tmp: Path, n: int = 60, seed: int = 0) -> Path:
    for i, (label, tel) in enumerate(synth_dataset(n, seed=seed)):
        save_trace(tmp, Trace(id=f"{i:05d}", label=label, telemetry=tel,
                              meta={"fault": None, "seed": seed, "robot": "synthetic", "noise": {}}))
    return tmp


def test_dataset_roundtrip(tmp_path: Path) -> None:
    d = _write(tmp_path, 12)
    entries = read_index(d)
    assert len(entries) == 12 and {"id", "file", "label", "n_samples", "format"} <= set(entries[0])
    traces = load_dataset(d)
    orig = synth_dataset(12, seed=0)
    for tr, (label, tel) in zip(traces, orig, strict=True):
        assert tr.label is label
        np.testing.assert_array_equal(tr.telemetry.t, tel.t)
        np.testing.assert_array_equal(tr.telemetry.phase, tel.phase)
    train, test = split(traces, 0.5, seed=1)
    assert len(train) + len(test) == 12 and {t.label for t in test} == set(Label)


def test_bad_index_line_names_file_and_line(tmp_path: Path) -> None:
    d = _write(tmp_path, 3)
    with open(d / "index.jsonl", "a") as fh:
        fh.write('{"id": "x", "label": "MAYBE", "file": "x.npz"}\n')
    with pytest.raises(UserError) as exc:
        read_index(d)
    assert "index.jsonl:4" in str(exc.value)
    with pytest.raises(UserError):
        read_index(tmp_path / "nope")


def test_scores() -> None:
    truth = ["SUCCESS"] * 10 + ["EMPTY"] * 10
    pred = ["SUCCESS"] * 9 + ["EMPTY"] + ["EMPTY"] * 9 + ["SLIP"]
    s = Scores(confusion(truth, pred))
    assert s.empty_recall() == pytest.approx(0.9)
    assert s.success_called_empty() == pytest.approx(0.1)
    assert s.precision()["EMPTY"] == pytest.approx(0.9)
    # macro-F1 over labels present in the ground truth (SUCCESS, EMPTY)
    assert s.macro_f1() == pytest.approx((2 * 0.9 / 1.9 + 0.9) / 2, abs=1e-9)
    assert "macro-F1" in s.table() and len(s.summary()["confusion"]) == len(LABELS)


def test_evaluate_and_png(tmp_path: Path) -> None:
    traces = load_dataset(_write(tmp_path, 30))
    s = evaluate(traces, WatchdogThresholds())
    assert s.n == 30
    png = plot_confusion(s, tmp_path / "m.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calibrate_recovers_from_bad_thresholds(tmp_path: Path) -> None:
    traces = load_dataset(_write(tmp_path, 90))
    bad = WatchdogThresholds(hold_effort_min=0.9, closed_eps=0.005)
    before = evaluate(traces, bad).macro_f1()
    fitted, evals = fit(traces, bad, rounds=1, grid={"hold_effort_min": [0.2, 0.3, 0.5, 0.9],
                                                     "closed_eps": [0.005, 0.02, 0.04]})
    after = evaluate(traces, fitted).macro_f1()
    assert evals > 0 and after > before
    res = calibrate(traces, bad, test_frac=0.3, rounds=1)
    assert "held-out after" in res.report()


def test_write_profile_keeps_the_rest(tmp_path: Path) -> None:
    p = tmp_path / "r.yaml"
    p.write_text("# my robot\nname: r\ndriver: pybullet_arm  # the sim\ncamera:\n  T_cam_base: [[1,0,0,0],[0,1,0,0],"
                 "[0,0,1,0],[0,0,0,1]]\nwatchdog:\n  closed_eps: 0.05  # old\n  latency_s: 0.03\n"
                 "# about driver options\ndriver_options:\n  telemetry_hz: 80\n")
    th = WatchdogThresholds(closed_eps=0.02, latency_s=0.03)
    write_profile(p, th, comment="fitted by bt-grasp watchdog calibrate on test")
    text = p.read_text()
    assert text.startswith("# my robot\nname: r\ndriver: pybullet_arm  # the sim\n")
    assert "# about driver options\ndriver_options:\n  telemetry_hz: 80\n" in text
    data = yaml.safe_load(text)
    assert data["watchdog"]["closed_eps"] == 0.02 and data["watchdog"]["latency_s"] == 0.03
    assert thresholds_from_profile(data).closed_eps == 0.02
    write_profile(p, th, comment="fitted by bt-grasp watchdog calibrate on test")  # idempotent
    assert p.read_text() == text
    q = tmp_path / "s.yaml"
    q.write_text("name: s\ndriver: pybullet_arm\n")
    write_profile(q, th)
    assert yaml.safe_load(q.read_text())["watchdog"]["closed_eps"] == 0.02


def test_cli_parser_and_handlers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ap = argparse.ArgumentParser()
    add_watchdog_parser(ap.add_subparsers(dest="cmd"))
    args = ap.parse_args(["watchdog", "record", "--robot", "x.yaml", "--n", "5", "-o", "out"])
    assert args.n == 5 and args.out == "out" and callable(args.func)
    d = _write(tmp_path / "tr", 30)
    assert main(["watchdog", "eval", str(d), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 30 and Path(out["png"]).exists()
    assert main(["watchdog", "eval", str(tmp_path / "missing")]) == 2
    assert "no index.jsonl" in capsys.readouterr().err
    assert main(["watchdog", "record", "--n", "0", "-o", str(tmp_path / "o")]) == 2


def test_shipped_profiles_watchdog_sections_parse() -> None:
    from bt_grasp.profile import ROBOTS_DIR, load_profile

    for path in sorted(ROBOTS_DIR.glob("*.yaml")):
        th = thresholds_from_profile(load_profile(str(path)))
        assert th.empty_effort_max < th.hold_effort_min


def test_record_builds_the_profile_s_simulated_arm_or_says_why_not(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from bt_grasp.errors import BackendUnavailable
    from bt_grasp.profile import load_profile
    from bt_grasp.watchdog.cli import _driver_factory

    assert callable(_driver_factory(load_profile("ur5e_robotiq")))
    with pytest.raises(UserError, match="use pybullet_arm or mujoco_arm"):
        _driver_factory(load_profile("stretch3"))
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mujoco" else real(name, *a))
    with pytest.raises(BackendUnavailable, match=r"pip install 'bt_grasp\[mujoco\]'"):
        _driver_factory(load_profile("ur5e_robotiq_mujoco"))  # before anything is recorded


def test_the_recorder_s_rotations_are_bullet_s_to_the_bit() -> None:
    """They replace pybullet calls in the recorder: a PyBullet recording must not change by one bit."""
    pb = pytest.importorskip("pybullet")
    from bt_grasp.watchdog.rotations import matrix_of, quat_from_euler, yaw_of

    rng = np.random.default_rng(0)
    for i in range(3000):
        euler = [float(v) for v in rng.uniform(-4.0, 4.0, 3)]
        if i % 3 == 0:
            euler[:2] = [np.pi, 0.0]  # the recorder's top-down grasps
        elif i % 3 == 1:
            euler[:2] = [0.0, 0.0]    # its objects' yaw
        q = quat_from_euler(*euler)
        assert q == pb.getQuaternionFromEuler(euler)
        assert yaw_of(q) == pb.getEulerFromQuaternion(q)[2]
        assert matrix_of(q).reshape(9).tolist() == list(pb.getMatrixFromQuaternion(q))


def test_calibrate_writes_which_seeds_it_fitted_not_where_the_traces_were(tmp_path: Path) -> None:
    d = _write(tmp_path / "traces", 60, seed=7)
    from bt_grasp.profile import ROBOTS_DIR

    prof = tmp_path / "p.yaml"
    prof.write_text((ROBOTS_DIR / "ur5e_robotiq.yaml").read_text())
    assert main(["watchdog", "calibrate", str(d), "-o", str(prof), "--rounds", "1"]) == 0
    text = prof.read_text()
    assert "# fitted by bt-grasp watchdog calibrate on seed 7 (n=60, held-out macro-F1" in text
    assert str(tmp_path) not in text


def test_calibrate_into_a_new_file_starts_from_the_shipped_profile(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`-o NEW.yaml` (no such file yet): the whole of --robot's profile, with fitted thresholds."""
    from bt_grasp.profile import load_profile

    d = _write(tmp_path / "traces", 60, seed=7)
    new = tmp_path / "my_robot.yaml"
    assert main(["watchdog", "calibrate", str(d), "-o", str(new), "--rounds", "1"]) == 0
    assert "(from ur5e_robotiq)" in capsys.readouterr().out
    written, shipped = load_profile(str(new)), load_profile("ur5e_robotiq")
    assert written.driver == shipped.driver and written.gripper == shipped.gripper
    assert "# fitted by bt-grasp watchdog calibrate on seed 7" in new.read_text()
    assert main(["watchdog", "calibrate", str(d), "-o", str(tmp_path / "s.yaml"), "--robot", "stretch3",
                 "--rounds", "1"]) == 0
    assert load_profile(str(tmp_path / "s.yaml")).driver == "stretch"


def test_calibrate_refuses_to_write_thresholds_it_could_not_score(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Too few traces for a held-out EMPTY: one line, exit 2, no file written."""
    d = _write(tmp_path / "traces", 6, seed=7)
    new = tmp_path / "my_robot.yaml"
    assert main(["watchdog", "calibrate", str(d), "-o", str(new), "--rounds", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "could not be scored" in err and "watchdog record" in err
    assert not new.exists()
    nowhere = tmp_path / "robots" / "mine.yaml"
    assert main(["watchdog", "calibrate", str(d), "-o", str(nowhere)]) == 2
    assert "no folder" in capsys.readouterr().err and not nowhere.parent.exists()
