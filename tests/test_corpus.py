"""Every malformed input in tests/corpus/ is refused with one located line, exit 2.

The corpus covers every file the CLI reads (trees, includes, profiles, traces, BT.CPP XML,
Watchdog trace folders) and MCP tool arguments; tests/corpus/build_corpus.py says how each case
was made. A case passes when the command exits 2 with exactly one stderr line
`file:line:col: message`, no traceback, in under 5 s, the process staying under 500 MB, and the
input files unchanged.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

sys.path.insert(0, str(ROOT / "tests" / "corpus"))
import run_corpus  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"


def _digest() -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(CORPUS.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def tmp_out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("corpus_out")


@pytest.fixture(scope="module", autouse=True)
def warm_imports():
    """Import what the cases use first, so the 5 s budget times the case, not module loading."""
    import jsonschema  # noqa: F401

    import bt_grasp.cli  # noqa: F401
    import bt_grasp.verifier  # noqa: F401
    from bt_grasp.mcp_server.server import require_mcp

    require_mcp()  # the MCP SDK takes seconds to import


@pytest.fixture(scope="module", autouse=True)
def inputs_unchanged():
    before = _digest()
    yield
    assert _digest() == before, "a corpus input was modified"


def test_the_corpus_has_at_least_150_cases_over_every_input_kind(tmp_out):
    found = run_corpus.cases(tmp_out)
    assert len(found) >= 150
    kinds = {c.name.split("/")[0] for c in found}
    assert kinds == {"tree", "verify", "include", "profile", "trace", "xml", "watchdog", "mcp"}


@pytest.mark.parametrize("case", run_corpus.cases(Path("/tmp")), ids=lambda c: c.name)
def test_case_is_one_located_line_exit_2(case, tmp_out):
    case = next(c for c in run_corpus.cases(tmp_out) if c.name == case.name)  # outputs into tmp
    code, err, seconds = run_corpus.run_in_process(case)
    assert run_corpus.judge(case, code, err, seconds) == [], err[-2000:]


def test_the_bombs_stay_under_500_mb():
    """Peak memory is per process, so the cases built to exhaust memory (aliases, depth, fan-out,
    size) run in a fresh interpreter of their own, which reports its peak."""
    heavy = "laughs|deep|bomb|wide|long|big|huge|chain|binary"
    proc = subprocess.run([sys.executable, str(CORPUS / "run_corpus.py"), "--generated", "--only", heavy],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    tally = proc.stdout.splitlines()[-2]
    peak = float(proc.stdout.splitlines()[-1].split()[2])
    n = int(tally.split()[1].rstrip(":"))
    assert n >= 20 and tally.endswith(f"clean {n}"), proc.stdout[-3000:]
    assert peak < run_corpus.LIMIT_MB


def test_a_tree_over_the_size_limit_is_refused_at_once(tmp_out):
    for case in run_corpus.generated_cases(tmp_out):
        code, err, seconds = run_corpus.run_in_process(case)
        assert run_corpus.judge(case, code, err, seconds) == [], err
        assert "limited to" in err


@pytest.mark.parametrize("name", ["tree/laughs_tree.yaml", "tree/deep_flow_3000.yaml",
                                  "xml/dtd_external_param.xml", "trace/deep_json.jsonl"])
def test_as_a_real_process_too(name, tmp_out):
    case = next(c for c in run_corpus.cases(tmp_out) if c.name == name)
    proc = subprocess.run([sys.executable, "-m", "bt_grasp.cli", *case.argv], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert run_corpus.judge(case, proc.returncode, proc.stderr, 0.0) == [], proc.stderr[-2000:]
