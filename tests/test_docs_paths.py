"""Every repository file the docs cite exists (README.md, CHANGELOG.md, CONTRIBUTING.md, docs/*.md).

A citation is a path with a directory prefix among PREFIXES and a file suffix, anywhere in the
text (backticks, code blocks, prose), taken from the repository root; and the target of a
markdown link, taken from the citing file's own folder. URLs, globs (`trees/*.yaml`) and
placeholders (`trees/<name>.yaml`) are not citations.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PREFIXES = ("bt_grasp", "tests", "tools", "trees", "docs", "robots", ".ci")
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]

# A token that starts with a cited prefix, not in the middle of another path or a URL.
_TOKEN = re.compile(r"(?<![\w./:-])(?:" + "|".join(re.escape(p) for p in PREFIXES) + r")/[^\s`'\"()\[\],;|]*")
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HAS_SUFFIX = re.compile(r"[^/]\.[A-Za-z0-9]+$")
_NOT_A_PATH = set("*?<>{}$")


def _file_path(token: str) -> str | None:
    """The path a token names, or None when it is no single file (a folder, glob, placeholder)."""
    token = re.sub(r"(:\d+)+:?$", "", token.split("#", 1)[0].rstrip(".!?"))  # file:line:col
    token = token.rstrip(".:")
    if not token or _NOT_A_PATH & set(token) or "://" in token:
        return None
    return token if _HAS_SUFFIX.search(token.rsplit("/", 1)[-1]) else None


def cited_paths(text: str, folder: Path) -> set[Path]:
    """The files `text` (a doc in `folder`) cites, as absolute paths."""
    found: set[Path] = set()
    for match in _TOKEN.finditer(text):
        path = _file_path(match.group(0))
        if path:
            found.add(ROOT / path)
    for match in _LINK.finditer(text):
        target = match.group(1)
        if re.match(r"^[a-zA-Z][\w+.-]*:", target) or target.startswith(("#", "/")):
            continue  # a URL, mailto:, an anchor in the same page, a site path
        path = _file_path(target)
        if path:
            found.add((folder / path).resolve())
    return found


def test_the_extractor_finds_citations_and_skips_the_rest(tmp_path):
    text = (
        "Run `python tools/perf/verify_scaling.py --quick`, see `bt_grasp/verifier/ticks.py:12` and\n"
        "[nodes](nodes.md), [up](../trees/clutter.yaml#L3), tests/test_api_doc.py.\n"
        "Not these: `trees/*.yaml`, `trees/<name>.yaml`, `bt_grasp/drivers/pybullet_arm`,\n"
        "https://example.org/tools/x.py, [site](https://example.org/docs/a.md), [top](#usage),\n"
        "`OUT/traces/x.jsonl`, `my_robot.yaml`, out/tools/docs/x.md.\n"
    )
    folder = ROOT / "docs"
    assert cited_paths(text, folder) == {
        ROOT / "tools/perf/verify_scaling.py",
        ROOT / "bt_grasp/verifier/ticks.py",
        ROOT / "docs/nodes.md",
        ROOT / "trees/clutter.yaml",
        ROOT / "tests/test_api_doc.py",
    }


def test_the_docs_cite_many_paths():
    # Guards against an extractor that silently finds nothing.
    total = set().union(*(cited_paths(doc.read_text(), doc.parent) for doc in DOCS))
    assert len(total) >= 30, sorted(str(p) for p in total)


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_cited_path_exists(doc):
    missing = sorted(
        str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
        for path in cited_paths(doc.read_text(), doc.parent)
        if not path.exists()
    )
    assert not missing, f"{doc.relative_to(ROOT)} cites files that do not exist: {missing}"
