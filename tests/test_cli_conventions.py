"""CLI conventions: -o/--out for every output, no third-party banner unless --verbose, a help that
imports no sub-command module it does not show, and ruff's rules hold on the whole tree."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from helpers import ROOT

from bt_grasp.cli import EXTERNAL, build_parser

WRITERS = {  # a command line that writes something, without its output flag
    "dot": ["dot", "clutter"],
    "export": ["export", "clutter"],
    "import": ["import", "tree.xml"],
    "bench": ["bench"],
    "scenarios": ["scenarios"],
    "watchdog record": ["watchdog", "record"],
    "watchdog calibrate": ["watchdog", "calibrate", "traces"],
}


@pytest.mark.parametrize("name", sorted(WRITERS))
@pytest.mark.parametrize("flag", ["-o", "--out"])
def test_every_output_is_named_with_o_or_out(name, flag):
    args = build_parser().parse_args([*WRITERS[name], flag, "x.out"])
    assert args.out == "x.out"


@pytest.mark.parametrize("name", ["dot", "export", "import"])
def test_the_old_output_flag_still_works_but_is_not_advertised(name, capsys):
    parser = build_parser()
    assert parser.parse_args([*WRITERS[name], "--output", "old.out"]).out == "old.out"
    with pytest.raises(SystemExit):
        parser.parse_args([name, "--help"])
    text = capsys.readouterr().out
    assert "-o OUT, --out OUT" in text and "--output" not in text


def _commands(parser) -> dict[str, str]:
    action = next(a for a in parser._actions if a.dest == "command")
    return {a.dest: a.help for a in action._choices_actions}


def test_the_quick_help_lists_every_command_with_its_own_help_text():
    full, quick = _commands(build_parser()), _commands(build_parser(command=None))
    assert list(quick) == list(full) and quick == full
    assert set().union(*(names for _, _, names in EXTERNAL)) <= set(full)


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_help_imports_neither_numpy_nor_any_sub_command_module():
    proc = _python("import sys\nfrom bt_grasp.cli import main\ntry:\n    main(['--help'])\n"
                   "except SystemExit:\n    pass\n"
                   "heavy = sorted(m for m in sys.modules if m in ('numpy', 'pybullet', 'pydantic') "
                   "or m.startswith(('bt_grasp.interop', 'bt_grasp.bench', 'bt_grasp.mcp_server', "
                   "'bt_grasp.mobile', 'bt_grasp.watchdog')))\nprint('HEAVY', heavy, file=sys.stderr)")
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stderr


def test_the_startup_bench_script_runs():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "perf" / "cli_startup.py"), "--repeats", "1"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "x python start-up" in proc.stdout


BANNER = "pybullet build time"


@pytest.mark.parametrize("verbose", [False, True])
def test_the_pybullet_banner_shows_only_with_verbose(verbose, tmp_path):
    """stdout is a pipe here, where C buffers the banner until exit: the hard case."""
    args = [sys.executable, "-m", "bt_grasp.cli", "run", "open_loop", "--image-size", "96",
            *(["--verbose"] if verbose else [])]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert (BANNER in proc.stdout + proc.stderr) is verbose
    result = [line for line in proc.stdout.splitlines() if BANNER not in line]
    assert len(result) == 1 and result[0].startswith(("FINALIZE", "WAIT_CLARIFY"))


def test_a_bad_input_line_is_not_preceded_by_a_banner(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bt_grasp.cli", "run", "clutter", "--robot", "nope"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("nope: robot profile not found")


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None,
                    reason="ruff is not installed (pip install '.[test]')")
def test_ruff_check_is_clean_on_the_whole_tree():
    """The enforced style is `ruff check` with pyproject.toml's [tool.ruff] rules (README, Style)."""
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "."], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install '.[test]'): types not checked")
def test_mypy_is_clean_on_the_package():
    """`mypy bt_grasp` with pyproject.toml's [tool.mypy] settings, as .ci/run runs it."""
    proc = subprocess.run([sys.executable, "-m", "mypy", "bt_grasp"], capture_output=True, text=True,
                          cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def _all_parsers(parser):
    yield parser
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict):
            for child in action.choices.values():
                yield from _all_parsers(child)


def test_every_command_and_sub_command_prints_its_help():
    parsers = list(_all_parsers(build_parser()))
    assert len(parsers) > 15
    for parser in parsers:
        assert parser.format_help().startswith("usage: bt-grasp"), parser.prog
