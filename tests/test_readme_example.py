"""The README's example is real: its tree verifies, and the output it shows is what
`bt-grasp verify` prints for it today, line for line."""

from __future__ import annotations

import re

from helpers import ROOT

from bt_grasp.cli import main


def _blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", text, re.S)]


def test_the_readme_example_tree_verifies_with_the_output_the_readme_shows(tmp_path, capsys):
    blocks = _blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    at = next(i for i, (lang, _) in enumerate(blocks) if lang == "yaml")
    tree, shown = blocks[at][1], blocks[at + 1][1]
    path = tmp_path / "grasp.yaml"
    path.write_text(tree, encoding="utf-8")
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == shown.splitlines()
