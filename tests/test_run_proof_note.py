"""`bt-grasp run` says once, on stderr, when the tree it runs is not PROVEN; proven trees are
remembered so the check costs nothing the second time; verify explains a choice-free loop."""

from __future__ import annotations

import pytest

from bt_grasp.cli import main
from bt_grasp.proof_note import cache_dir, unproven_note

LOOP = "tree: loop\nroot:\n  repeat:\n    child: survey_scene\n"
SPIN = ("tree: spin\nbudgets: {max_ticks: 50}\nroot:\n  repeat:\n    child:\n      force_success:\n"
        "        child:\n          label_is: {key: \"{grasp.label}\", label: SUCCESS}\n")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_an_unproven_tree_gets_one_warning_line_naming_the_command_that_shows_why(tmp_path):
    tree = tmp_path / "loop.yaml"
    tree.write_text(LOOP)
    note = unproven_note(str(tree))
    assert note == (f"{tree}: warning: not PROVEN (a run can end without a decision); the run may end on "
                    f"the tick cap or with no decision (bt-grasp verify {tree} shows why)")
    assert not cache_dir().exists() or not any(cache_dir().iterdir())  # never remembered as proven


def test_a_proven_tree_gets_no_warning_and_is_remembered(tmp_path):
    from bt_grasp.resources import tree_path

    assert unproven_note(tree_path("open_loop")) is None
    assert len(list(cache_dir().iterdir())) == 1
    assert unproven_note(tree_path("open_loop")) is None and len(list(cache_dir().iterdir())) == 1


def test_a_tree_that_does_not_load_is_left_to_the_run_to_report(tmp_path):
    tree = tmp_path / "bad.yaml"
    tree.write_text("tree: t\nroot: grap\n")
    assert unproven_note(str(tree)) is None


def test_run_prints_the_warning_once_on_stderr(tmp_path, capsys):
    tree = tmp_path / "loop.yaml"
    tree.write_text(LOOP)
    main(["run", str(tree), "--image-size", "64", "--json"])
    captured = capsys.readouterr()
    assert captured.err.count("warning: not PROVEN") == 1 and "not PROVEN" not in captured.out


def test_verify_explains_a_loop_without_choices(tmp_path, capsys):
    tree = tmp_path / "spin.yaml"
    tree.write_text(SPIN)
    assert main(["verify", str(tree)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2].startswith("COUNTEREXAMPLE: loop")
    assert out[-1].startswith("  no outcome is chosen on the way: every run does this")


def test_the_key_follows_the_tree_s_files_includes_too(tmp_path):
    """The same files give the same key; an edit to an included file changes it (the proof is redone)."""
    from bt_grasp.proof_note import tree_key
    from bt_grasp.spec.loader import load_tree

    (tmp_path / ".bt-grasp-root").write_text("")
    (tmp_path / "part.yaml").write_text("tree: part\nroot: {wait_clarify: {reason: a}}\n")
    top = tmp_path / "top.yaml"
    top.write_text("tree: top\nroot: {include: {file: part.yaml}}\n")
    before = tree_key(load_tree(top))
    assert tree_key(load_tree(top)) == before
    (tmp_path / "part.yaml").write_text("tree: part\nroot: {wait_clarify: {reason: b}}\n")
    assert tree_key(load_tree(top)) != before
