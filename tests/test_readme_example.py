"""The README's example is real: its tree verifies, and the output it shows is what
`bt-grasp verify` prints for it today, line for line. The same holds for every verify output
shown in docs/**/*.md: a yaml block followed by a block that starts with its tree's name."""

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


def _shown_outputs(text: str) -> list[tuple[str, str, str]]:
    """(tree name, tree, output shown) for each yaml block followed by its verify output."""
    blocks = _blocks(text)
    out = []
    for (lang, tree), (_, shown) in zip(blocks, blocks[1:], strict=False):
        name = re.search(r"^tree: (\S+)", tree, re.M) if lang == "yaml" else None
        if name and shown.startswith(f"{name.group(1)}:"):
            out.append((name.group(1), tree, shown))
    return out


def test_every_verify_output_shown_in_the_docs_is_the_current_output(tmp_path, capsys):
    shown_in = {str(path.relative_to(ROOT)): _shown_outputs(path.read_text(encoding="utf-8"))
                for path in sorted((ROOT / "docs").rglob("*.md"))}
    assert any(shown_in.values()), "the docs show no verify output (the semantics example went?)"
    for doc, examples in shown_in.items():
        for name, tree, shown in examples:
            path = tmp_path / f"{name}.yaml"
            path.write_text(tree, encoding="utf-8")
            main(["verify", str(path)])
            assert capsys.readouterr().out.splitlines() == shown.splitlines(), f"{doc}: {name}"
