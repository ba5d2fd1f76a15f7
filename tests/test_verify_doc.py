"""docs/verify.md and docs/verify-clock.md cannot rot: every `$ bt-grasp ...` console block's output is the real output
(a block's `...` line skips lines; the parts around it appear in order, each line exact)."""

from __future__ import annotations

import re
import shlex

import pytest
from helpers import ROOT

from bt_grasp.cli import main

DOC = ROOT / "docs" / "verify.md"
PAGES = (DOC, ROOT / "docs" / "verify-clock.md")


def console_blocks(pages=PAGES) -> list[tuple[list[str], list[str]]]:
    blocks = [b for page in pages
              for b in re.findall(r"^```console\n(.*?)^```$", page.read_text(), flags=re.DOTALL | re.MULTILINE)]
    out = []
    for block in blocks:
        first, *rest = block.rstrip("\n").split("\n")
        assert first.startswith("$ bt-grasp "), first
        out.append((shlex.split(first[len("$ bt-grasp "):]), rest))
    return out


def parts(lines: list[str]) -> list[list[str]]:
    chunks: list[list[str]] = [[]]
    for line in lines:
        if line == "...":
            chunks.append([])
        else:
            chunks[-1].append(line)
    return [c for c in chunks if c]


@pytest.mark.parametrize(("args", "shown"), console_blocks(), ids=lambda v: " ".join(v)[:60]
                         if v and isinstance(v[0], str) and v[0] == "verify" else None)
def test_console_block_is_the_real_output(args: list[str], shown: list[str], capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    main(args)
    real = capsys.readouterr().out.rstrip("\n").split("\n")
    at = 0
    for chunk in parts(shown):
        for start in range(at, len(real) - len(chunk) + 1):
            if real[start:start + len(chunk)] == chunk:
                at = start + len(chunk)
                break
        else:
            pytest.fail("not in the real output:\n" + "\n".join(chunk) + "\n--- real:\n" + "\n".join(real))
    if shown[:1] != ["..."] and parts(shown):
        assert real[:len(parts(shown)[0])] == parts(shown)[0]  # a block not opening with ... starts it


def test_the_page_has_its_examples() -> None:
    blocks = console_blocks((DOC,))
    assert len(blocks) >= 4
    assert any("--rates" in a for a, _ in blocks)
