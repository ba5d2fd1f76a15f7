"""Every repository file the code cites exists (bt_grasp/, tools/, tests/: comments, docstrings and
strings, so user-facing messages too).

A citation is what the docs' test counts (tests/helpers.py, `cited_paths`): a path such as
`trees/clutter.yaml` or `bt_grasp/verifier/symbolic/tick_bound.py:12`, taken from the repository root; "DESIGN"
and `notes/…`, which name files kept outside the repository, where a reader of the code cannot
follow them (say the fact, or cite the doc that says it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ROOT, cited_paths, comments_and_strings

SOURCES = sorted(f for folder in ("bt_grasp", "tools", "tests") for f in (ROOT / folder).rglob("*.py"))

# Strings that look like citations but name files that must not exist: inputs of tests, and the
# rule's own definition.
NOT_CITATIONS: dict[str, set[str]] = {
    "tests/test_code_paths.py": {  # the extractor's own test
        "bt_grasp/no_such_module.py", "docs/in_code_only.md", "notes/pybullet-clutter.md", "DESIGN.md"},
    "tests/test_docs_paths.py": {"DESIGN.md"},  # says what a citation is
    "tests/helpers.py": {"DESIGN.md"},  # says what a citation is
    "tests/test_cli.py": {"robots/nope.yaml"},  # a missing robot profile is a user error
    "tests/test_bench_runner.py": {"trees/a.yaml", "trees/b.yaml"},  # task names, never opened
}


def _cited(path: Path) -> set[Path]:
    return cited_paths(comments_and_strings(path.read_text(encoding="utf-8")), None)


def test_the_extractor_reads_comments_and_strings_not_code() -> None:
    source = (
        '"""Iterated IK, measured (see notes/pybullet-clutter.md)."""\n'
        "# Budgets are static for the bounds (DESIGN §2), see bt_grasp/verifier/symbolic/tick_bound.py:12.\n"
        'HELP = f"no such file: {name} (try trees/clutter.yaml)"\n'
        'MADE_UP = "bt_grasp/no_such_module.py"\n'
        'path = ROOT / "trees" / name  # trees/*.yaml, trees/<name>.yaml are no citations\n'
        "spec = docs/in_code_only.md  # a division in code, not text\n"
    )
    found = cited_paths(comments_and_strings(source), None)
    assert found == {
        ROOT / "notes/pybullet-clutter.md",
        ROOT / "DESIGN.md",
        ROOT / "bt_grasp/verifier/symbolic/tick_bound.py",
        ROOT / "trees/clutter.yaml",
        ROOT / "bt_grasp/no_such_module.py",
    }
    missing = {p.relative_to(ROOT).as_posix() for p in found if not p.exists()}
    assert missing == {"notes/pybullet-clutter.md", "DESIGN.md", "bt_grasp/no_such_module.py"}


def test_the_code_cites_many_paths() -> None:
    # Guards against an extractor that silently finds nothing.
    assert len(set().union(*(_cited(f) for f in SOURCES))) >= 50


@pytest.mark.parametrize("source", SOURCES, ids=lambda f: f.relative_to(ROOT).as_posix())
def test_every_cited_path_exists(source: Path) -> None:
    name = source.relative_to(ROOT).as_posix()
    allowed = NOT_CITATIONS.get(name, set())
    if source == Path(__file__).resolve():
        allowed = set().union(*NOT_CITATIONS.values())  # the table above names them all
    missing = sorted(
        cited for cited in (p.relative_to(ROOT).as_posix() for p in _cited(source) if not p.exists())
        if cited not in allowed
    )
    assert not missing, f"{name} cites files that do not exist: {missing}"


def test_every_exception_is_still_needed() -> None:
    for name, paths in NOT_CITATIONS.items():
        cited = {p.relative_to(ROOT).as_posix() for p in _cited(ROOT / name)}
        assert paths <= cited, f"{name} no longer mentions {sorted(paths - cited)}: drop the exception"
