"""The perceiver's vocabulary is configuration: a robot profile's `perception: {vocabulary: FILE}`
and `bt-grasp run --vocabulary FILE` choose it, and `bt-grasp bench --robot` perceives in the
profile's; mistakes are one line at their place."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ROOT

from bt_grasp.cli import main
from bt_grasp.errors import UserError
from bt_grasp.profile import load_profile
from bt_grasp.world import build_world

EXAMPLE = ROOT / "docs" / "examples" / "workshop_vocabulary.yaml"


def _profile(tmp_path: Path, perception: str) -> Path:
    text = (ROOT / "robots" / "ur5e_robotiq.yaml").read_text()
    path = tmp_path / "robot.yaml"
    path.write_text(text + f"\nperception: {perception}\n")
    return path


def test_a_profile_names_its_vocabulary_relative_to_itself(tmp_path) -> None:
    """perception: {vocabulary: FILE}: the backend stays geometric, the file is found beside the
    profile, and the world's perceiver reads goals in its words."""
    (tmp_path / "words.yaml").write_text(EXAMPLE.read_text())
    prof = load_profile(str(_profile(tmp_path, "{vocabulary: words.yaml}")))
    assert prof.perception == "geometric" and prof.perception_vocabulary == str((tmp_path / "words.yaml").resolve())
    world = build_world(prof, image_size=64)
    try:
        assert [c.name for c in world.perceiver.vocabulary.categories] == ["spool", "sponge", "marble"]
    finally:
        world.close()


def test_run_takes_a_vocabulary_file_over_the_profiles(tmp_path, capsys) -> None:
    """--vocabulary FILE: a catalogue word the file does not hold ("mug") is not found."""
    code = main(["run", str(ROOT / "trees" / "open_loop.yaml"), "--goal", "Grasp the red mug",
                 "--vocabulary", str(EXAMPLE), "--image-size", "128"])
    assert code == 0 and "WAIT_CLARIFY: not found: red mug" in capsys.readouterr().out


@pytest.mark.parametrize("perception, message", [
    ("{vocabulary: nope.yaml}", "perception.vocabulary: no vocabulary file"),
    ("{backend: geometric, words: x.yaml}", "perception.words: unknown key 'words'"),
])
def test_profile_mistakes_are_one_line_at_their_place(tmp_path, perception: str, message: str) -> None:
    path = _profile(tmp_path, perception)
    line = path.read_text().count("\n")
    with pytest.raises(UserError) as err:
        load_profile(str(path))
    assert message in str(err.value) and str(err.value).startswith(f"{path}:{line}:")


def test_a_bad_vocabulary_file_on_the_command_line_is_one_line_with_exit_2(tmp_path, capsys) -> None:
    bad = tmp_path / "v.yaml"
    bad.write_text("sizes: [small]\ncategories: {thing: {body: blob, sizes: {small: [0.1, 0.1, 0.1]}, colours: [red]}}\n")
    code = main(["run", str(ROOT / "trees" / "open_loop.yaml"), "--vocabulary", str(bad)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith(f"{bad}:2:") and "unknown 'blob'" in err[0]


def test_bench_with_a_profile_vocabulary_runs_in_its_words(tmp_path, capsys) -> None:
    """One episode end to end: the scene's target, named in catalogue words the profile's
    vocabulary does not hold, is never grounded, so the episode ends "not found"."""
    import json

    (tmp_path / "words.yaml").write_text(EXAMPLE.read_text())
    robot = _profile(tmp_path, "{vocabulary: words.yaml}")
    out = tmp_path / "bench"
    code = main(["bench", "--trees", "open_loop", "--episodes", "1", "--image-size", "96", "--workers", "1",
                 "--robot", str(robot), "--no-progress", "--no-traces", "-o", str(out)])
    rec = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert code == 0 and "error" not in rec
    assert rec["decision"] == "WAIT_CLARIFY" and rec["reason"].startswith("not found")


def test_bench_with_a_broken_profile_vocabulary_stops_before_any_episode(tmp_path, capsys) -> None:
    bad = tmp_path / "v.yaml"
    bad.write_text("sizes: [small]\ncategories: {thing: {body: blob, sizes: {small: [0.1, 0.1, 0.1]}, colours: [red]}}\n")
    robot = _profile(tmp_path, "{vocabulary: v.yaml}")
    code = main(["bench", "--trees", "open_loop", "--episodes", "1", "--robot", str(robot), "--no-progress",
                 "-o", str(tmp_path / "bench")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith(f"{bad}:2:")
    assert not (tmp_path / "bench" / "results.jsonl").exists()
