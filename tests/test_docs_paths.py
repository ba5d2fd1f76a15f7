"""Every repository file the docs cite exists (README.md, CHANGELOG.md, CONTRIBUTING.md, docs/**/*.md).

What counts as a citation is defined once, in tests/helpers.py (`cited_paths`): a path with a
directory prefix such as `bt_grasp/` or `trees/` and a file suffix, anywhere in the text, taken
from the repository root; the target of a markdown link, taken from the citing file's own folder;
"DESIGN" and `notes/`, which name files kept outside the repository. URLs, globs (`trees/*.yaml`)
and placeholders (`trees/<name>.yaml`) are not citations.
"""

from __future__ import annotations

import pytest
from helpers import ROOT, cited_paths

DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_the_extractor_finds_citations_and_skips_the_rest(tmp_path):
    text = (
        "Run `python tools/perf/verify_scaling.py --quick`, see `bt_grasp/verifier/symbolic/tick_bound.py:12` and\n"
        "[nodes](nodes.md), [up](../trees/clutter.yaml#L3), tests/test_api_doc.py.\n"
        "Not these: `trees/*.yaml`, `trees/<name>.yaml`, `bt_grasp/drivers/pybullet_arm`,\n"
        "https://example.org/tools/x.py, [site](https://example.org/docs/a.md), [top](#usage),\n"
        "`OUT/traces/x.jsonl`, `my_robot.yaml`, out/tools/docs/x.md.\n"
    )
    folder = ROOT / "docs"
    assert cited_paths(text, folder) == {
        ROOT / "tools/perf/verify_scaling.py",
        ROOT / "bt_grasp/verifier/symbolic/tick_bound.py",
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
