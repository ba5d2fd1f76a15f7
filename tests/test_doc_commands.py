"""Every documented command is a test: each shell command the README and docs show in a code
block is in .ci/doc_commands.txt, which CI runs from a plain install outside the checkout
(.ci/doc_commands.py, called by .ci/run); nothing listed there is gone from the docs; the
Python blocks of the docs run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, load_script

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # docs/studies/ too
COMMAND_WORDS = ("bt-grasp", "python", "python3", "pip", "cd", "mcap", "ros2")
SHELL_BLOCKS = ("", "bash", "sh", "shell", "console")


def shell_commands(text: str) -> list[str]:
    """The commands a markdown text shows in code blocks (fenced shell blocks and indented ones):
    lines starting with a command word, continuation lines joined, a trailing `# comment` dropped,
    spaces normalised."""
    fenced = re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.S | re.M)
    bodies = [body for lang, body in fenced if lang in SHELL_BLOCKS]
    outside = re.sub(r"^```.*?^```$", "", text, flags=re.S | re.M)
    for block in re.findall(r"(?:^(?: {4}|\t).*\n?)+", outside, flags=re.M):
        bodies.append("\n".join(line[4:] if line.startswith("    ") else line[1:] for line in block.splitlines()))
    found = []
    for body in bodies:
        for line in re.sub(r"\\\n\s*", " ", body).splitlines():
            line = line.strip().removeprefix("$ ")
            if line.split(" ", 1)[0] in COMMAND_WORDS:
                found.append(" ".join(re.sub(r"\s+#\s.*$", "", line).split()))
    return found


def documented() -> dict[str, str]:
    """command -> the first doc showing it."""
    out: dict[str, str] = {}
    for doc in DOCS:
        for command in shell_commands(doc.read_text(encoding="utf-8")):
            out.setdefault(command, str(doc.relative_to(ROOT)))
    return out


def listed():
    return load_script(".ci/doc_commands.py").parse((ROOT / ".ci" / "doc_commands.txt").read_text(encoding="utf-8"))


def test_the_extractor_finds_fenced_and_indented_commands_and_nothing_else():
    text = ("Run it:\n\n    pip install '.[x]' && bt-grasp run clutter   # first\n\n"
            "```bash\nbt-grasp bench --trees clutter \\\n    --episodes 1\ncd demo\n```\n\n"
            "```\nFINALIZE: done\nbt-grasp verify t.yaml\n```\n\n```yaml\nbt-grasp: not a command\n```\n"
            "Inline `bt-grasp nodes` is prose.\n")
    assert shell_commands(text) == ["bt-grasp bench --trees clutter --episodes 1", "cd demo",
                                    "bt-grasp verify t.yaml", "pip install '.[x]' && bt-grasp run clutter"]


def test_every_command_the_docs_show_is_in_the_ci_list():
    """A doc change that adds a command must say in .ci/doc_commands.txt how CI runs it (or why not)."""
    shown = {e.text for e in listed() if e.mark == "$"}
    missing = [f"{doc}: {command}" for command, doc in documented().items() if command not in shown]
    assert not missing, "add these to .ci/doc_commands.txt ('$ COMMAND', then '>' or '!' if not as written):\n" \
        + "\n".join(missing)


def test_every_listed_command_is_still_in_the_docs():
    gone = [f".ci/doc_commands.txt:{e.line}: {e.text}" for e in listed()
            if e.mark == "$" and e.text not in documented()]
    assert not gone, "no doc shows these any more:\n" + "\n".join(gone)


def test_the_list_runs_each_kind_of_command_a_user_is_told_to_run():
    """CI runs at least one of each: the first-hour commands and every sub-command the docs teach."""
    ran = [e.command for e in listed() if e.command]
    for words in ("bt-grasp run", "bt-grasp validate", "bt-grasp verify", "bt-grasp dot", "bt-grasp export",
                  "bt-grasp import", "bt-grasp trace convert", "bt-grasp watch", "bt-grasp scenarios",
                  "bt-grasp bench", "bt-grasp serve", "bt-grasp perceive", "bt-grasp watchdog record",
                  "bt-grasp watchdog calibrate", "bt-grasp watchdog eval", "bt-grasp profile show",
                  "python -m bt_grasp.examples", "python mcp_client.py"):
        assert any(c.startswith(words) for c in ran), words
    bench = next(c for c in ran if c.startswith("bt-grasp bench"))
    assert "--episodes 1" in bench and "--image-size 128" in bench  # CI stays quick
    skipped = [e for e in listed() if e.skip is not None]
    assert all(len(e.skip) > 10 for e in skipped), "a skipped command says why"


def test_every_file_the_list_writes_comes_from_its_doc():
    entries = [e for e in listed() if e.mark == "="]
    assert entries
    counts: dict[tuple[str, str], int] = {}
    for e in entries:
        _, doc, *language = e.text.split()
        key = (doc, language[0] if language else "yaml")
        counts[key] = counts.get(key, 0) + 1
    for (doc, language), n in counts.items():
        assert len(load_script(".ci/doc_commands.py").blocks(ROOT / doc, language)) >= n, (doc, language)


def test_a_malformed_list_line_names_its_line():
    runner = load_script(".ci/doc_commands.py")
    with pytest.raises(ValueError, match=r"list:2: '>' must follow a '\$' line"):
        runner.parse("+ cd x\n> bt-grasp run clutter\n", where="list")
    with pytest.raises(ValueError, match=r"list:3: a command is either run"):
        runner.parse("$ bt-grasp run clutter\n> bt-grasp run clutter --image-size 128\n! slow\n", where="list")


def test_ci_runs_the_list_from_the_installed_package_outside_the_checkout():
    ci = (ROOT / ".ci" / "run").read_text()
    smoke_end = ci.index('echo "smoke (installed package, outside the checkout): ok"')
    call = ci.index(".ci/doc_commands.py")
    assert smoke_end < call < ci.index("python -m pytest"), "after the plain install, before the tests"
    assert 'cd "$docs_work"' in ci


def test_the_getting_started_page_shows_what_verify_prints_for_its_tree(tmp_path, capsys):
    from bt_grasp.cli import main

    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    tree = re.findall(r"^```yaml\n(.*?)^```$", text, flags=re.S | re.M)[0]
    shown = text.split("bt-grasp verify grasp.yaml\n```", 1)[1].split("```\n", 2)[1]
    (tmp_path / "grasp.yaml").write_text(tree)
    assert main(["verify", str(tmp_path / "grasp.yaml")]) == 0
    assert capsys.readouterr().out == shown


def test_the_getting_started_page_shows_what_validate_prints_for_its_typo(tmp_path, capsys, monkeypatch):
    from bt_grasp.cli import main

    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    typo = re.findall(r"^```yaml\n(.*?)^```$", text, flags=re.S | re.M)[1]
    shown = text.split("bt-grasp validate typo.yaml\n```", 1)[1].split("```\n", 2)[1]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "typo.yaml").write_text(typo)
    assert main(["validate", "typo.yaml"]) == 2
    assert capsys.readouterr().err == shown


def test_the_mcp_page_client_example_runs_as_written(tmp_path):
    """docs/mcp.md's Python block, unchanged, against `bt-grasp serve` on PATH."""
    pytest.importorskip("mcp")
    blocks = re.findall(r"^```python\n(.*?)^```$", (ROOT / "docs" / "mcp.md").read_text(), flags=re.S | re.M)
    assert len(blocks) == 1
    script = tmp_path / "client.py"
    script.write_text(blocks[0])
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
           "PYTHONPATH": str(ROOT)}
    if not (Path(bin_dir) / "bt-grasp").exists():
        pytest.skip("no bt-grasp script beside this interpreter")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"\d+ objects; grasping the .+", lines[0]), done.stdout
    assert re.fullmatch(r"\w+ \| actions left: [23]", lines[1]), done.stdout


def test_the_groot2_limits_quote_the_node_counts_of_clutter():
    """docs/observability.md: `clutter` has N nodes, and the parts it suggests have theirs."""
    from bt_grasp.observe.groot2_xml import groot2_tree
    from bt_grasp.spec.loader import load_tree
    from bt_grasp.structure import structure

    text = " ".join((ROOT / "docs" / "observability.md").read_text(encoding="utf-8").split())
    tree = structure(load_tree(ROOT / "trees" / "clutter.yaml").root)
    assert f"`clutter` has {groot2_tree(tree).count}." in text
    parts = re.findall(r"`([\w/]+)` \((\d+)(?: nodes)?\)", text.split("In `clutter`, for instance:", 1)[1][:200])
    assert len(parts) == 4
    for node, count in parts:
        assert groot2_tree(tree, subtree=node).count == int(count), node
