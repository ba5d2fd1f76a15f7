"""docs/python-api.md cannot rot: its Python blocks, run in order as one script, succeed."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from helpers import ROOT

DOC = ROOT / "docs" / "python-api.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)


def test_the_python_api_page_runs(tmp_path):
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) >= 4 and "api.run(" in blocks[0]  # the complete example comes first
    script = tmp_path / "doc_example.py"
    script.write_text("\n\n".join(blocks))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "worst case: {" in out and "sees:" in out and "looks for 'red mug'" in out
    assert re.search(r"^(FINALIZE|WAIT_CLARIFY): .* \| actions \d/2 \|", out, flags=re.MULTILINE), out
    assert re.search(r"^ +\d+\.\d\d s  grasp: grasp -> ", out, flags=re.MULTILINE), out
    assert "unknown port 'forse' for grasp (did you mean force?)" in out
    assert "['geometric', 'sim'" in out


def test_the_readme_links_the_page():
    assert "(docs/python-api.md)" in (ROOT / "README.md").read_text()


def test_the_node_page_shows_the_shipped_example_node_and_tree_in_full():
    """docs/writing-nodes.md shows bt_grasp/examples/my_nodes.py and reach.yaml, as shipped, and
    the API page links it."""
    assert "(writing-nodes.md)" in DOC.read_text()
    text = (ROOT / "docs" / "writing-nodes.md").read_text()
    blocks = python_blocks(text)
    yaml_blocks = re.findall(r"^```yaml\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
    examples = ROOT / "bt_grasp" / "examples"
    assert (examples / "my_nodes.py").read_text() in blocks
    assert (examples / "reach.yaml").read_text() in yaml_blocks
