"""The docs stay reference pages a reader can follow: every page in docs/ is at most 300 lines
(measurements go to docs/studies/, history to CHANGELOG.md; docs/nodes.md is generated), and every
relative link in README.md and docs/**/*.md names a file that exists and, after `#`, a heading
of that file (GitHub's anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import ROOT

MAX_LINES = 300
GENERATED = {ROOT / "docs" / "nodes.md"}  # `bt-grasp nodes > docs/nodes.md`
STUDIES = ROOT / "docs" / "studies"
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if p not in GENERATED and STUDIES not in p.parents)
LINKING = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCED = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|!\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code (a link shown as code is not a link)."""
    return re.sub(r"`[^`\n]*`", "", _FENCED.sub("", text))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, inline-code backticks and punctuation dropped
    (word characters, spaces and hyphens kept), spaces as hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for title in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", _FENCED.sub("", path.read_text(encoding="utf-8")),
                            flags=re.M):
        base = anchor(title)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def relative_links(text: str) -> list[str]:
    """Link targets that are neither URLs nor site paths: `page.md`, `page.md#anchor`, `#anchor`."""
    targets = [a or b for a, b in _LINK.findall(prose(text))]
    return [t for t in targets if not re.match(r"^[a-zA-Z][\w+.-]*:", t) and not t.startswith("/")]


def broken(doc: Path) -> list[str]:
    out = []
    for target in relative_links(doc.read_text(encoding="utf-8")):
        file_part, _, fragment = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if not path.exists():
            out.append(f"{target}: no such file")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            out.append(f"{target}: no heading '#{fragment}' in {file_part or doc.name}")
    return out


def test_anchors_are_githubs():
    assert anchor("Instructions (referring expressions)") == "instructions-referring-expressions"
    assert anchor("Testing your driver with bt_grasp.testing") == "testing-your-driver-with-bt_grasptesting"
    assert anchor("Traces (`--trace run.jsonl`)") == "traces---trace-runjsonl"


def test_the_link_checker_finds_what_is_broken_and_nothing_else(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## Limits\n\n```\n# not a heading\n```\n")
    doc = tmp_path / "page.md"
    doc.write_text("# Page\n\n## Dev and test seeds\n\n"
                   "[ok](other.md), [ok](other.md#limits), [ok](#dev-and-test-seeds), [web](https://x.org/a.md),\n"
                   "![plot](other.md), `[code](gone.md)`, [gone](gone.md), [bad](other.md#not-a-heading),\n"
                   "[bad](#nowhere)\n\n```\n[in a block](gone-too.md)\n```\n")
    assert broken(doc) == ["gone.md: no such file",
                           "other.md#not-a-heading: no heading '#not-a-heading' in other.md",
                           "#nowhere: no heading '#nowhere' in page.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_reference_page_is_at_most_300_lines(page):
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, (f"{page.relative_to(ROOT)} has {lines} lines (at most {MAX_LINES}): move a "
                                "measurement to docs/studies/<topic>.md or detail to a focused page")


def test_the_studies_are_pages_of_their_own():
    assert len(list(STUDIES.glob("*.md"))) >= 4
    assert not any(p in PAGES for p in STUDIES.glob("*.md"))


@pytest.mark.parametrize("doc", LINKING, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    assert not broken(doc), f"{doc.relative_to(ROOT)}: " + "; ".join(broken(doc))
