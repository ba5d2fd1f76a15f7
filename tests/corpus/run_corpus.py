"""Runs the malformed-input corpus (see build_corpus.py for the layout) and judges each case.

A case passes when the CLI exits 2 with exactly one stderr line `file:line:col: message`
(`file: message` for a folder), no traceback, in under 5 s. MCP cases pass when the tool call
answers `invalid_input` with a one-line error. In-process runs are fast (the test uses them);
`--subprocess` runs every case in its own interpreter with a timeout and a memory cap, which is
how figures for another checkout are taken:

    PYTHONPATH=/path/to/checkout python tests/corpus/run_corpus.py --subprocess
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import resource
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIMIT_S = 5.0
LIMIT_MB = 500
_LINE = re.compile(r"^[^\s:]+:\d+:\d+: \S.*$")
_DIR_LINE = re.compile(r"^[^\s:]+(:\d+)?(:\d+)?: \S.*$")


@dataclass
class Case:
    name: str
    path: Path
    argv: list[str] | None  # None: an MCP call read from `path`
    lines: bool  # the input is text with lines, so the message must carry line:col


def _cmd(kind: str, path: Path, tmp: Path) -> list[str]:
    p = str(path)
    return {"tree": ["validate", p], "verify": ["verify", p, "--max-runs", "2000"],
            "include": ["validate", p], "profile": ["validate", p], "trace": ["dot", p],
            "xml": ["import", p],
            "watchdog": ["watchdog", "eval", p, "--png", str(tmp / "confusion.png")]}[kind]


def cases(tmp: Path) -> list[Case]:
    """Every case, in a stable order; `tmp` receives anything a command writes."""
    out: list[Case] = []
    for kind in ("tree", "verify", "profile", "trace", "xml"):
        for f in sorted((HERE / kind).iterdir()):
            out.append(Case(f"{kind}/{f.name}", f, _cmd(kind, f, tmp), True))
    for d in sorted((HERE / "include").iterdir()):
        out.append(Case(f"include/{d.name}", d / "main.yaml", _cmd("include", d / "main.yaml", tmp), True))
    for d in sorted((HERE / "watchdog").iterdir()):
        out.append(Case(f"watchdog/{d.name}", d, _cmd("watchdog", d, tmp), False))
    for f in sorted((HERE / "mcp").iterdir()):
        out.append(Case(f"mcp/{f.name}", f, None, False))
    return out


def generated_cases(tmp: Path) -> list[Case]:
    """Inputs too big to commit: a 1.5 MB tree and a 10 MB tree (many sibling leaves)."""
    out = []
    for name, n in (("big_1_5mb", 60_000), ("big_10mb", 400_000)):
        path = tmp / f"{name}.yaml"
        path.write_text("tree: big\nroot:\n  sequence:\n    children:\n"
                        + "      - open_gripper: {id: x}\n" * 1 + "      - open_gripper\n" * n)
        out.append(Case(f"generated/{name}", path, ["validate", str(path)], True))
    return out


def judge(case: Case, code: int | None, err: str, seconds: float) -> list[str]:
    """What is wrong with one run (an empty list: the case passed)."""
    problems = []
    if code is None:
        return [f"hang (> {seconds:.0f} s)"]
    if "Traceback (most recent call last)" in err:
        problems.append("traceback")
    if code == 0:
        problems.append("accepted")
    elif code != 2:
        problems.append(f"exit {code}")
    lines = err.splitlines()
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines")
    elif case.lines and not _LINE.match(lines[0]):
        problems.append("no file:line:col")
    elif not case.lines and not _DIR_LINE.match(lines[0]):
        problems.append("not 'file: message'")
    if case.name.startswith("profile/") and lines and "top-level key" in lines[0]:
        problems.append("not read as a profile")
    if seconds > LIMIT_S:
        problems.append(f"slow ({seconds:.1f} s)")
    return problems


class _StubWorld:
    """Enough of a World for argument checks: MCP input is refused before the robot moves."""

    def __init__(self) -> None:
        from types import SimpleNamespace

        from bt_grasp.profile import load_profile
        from bt_grasp.services import Services

        self.profile = load_profile("ur5e_robotiq")
        self.driver = SimpleNamespace(stop=lambda: None)
        self.perceiver = SimpleNamespace(name="none")
        self.services = Services()


def run_mcp(case: Case) -> tuple[int, str]:
    """(2, one-line error) when the published input schema rejects the arguments and the session
    answers `invalid_input`; else (0, what let the call through)."""
    from types import SimpleNamespace

    import jsonschema

    from bt_grasp.mcp_server.server import build_server
    from bt_grasp.mcp_server.session import ToolSession

    call = json.loads(case.path.read_text())
    session = ToolSession(_StubWorld(), reset=False)
    app = build_server(SimpleNamespace(session=session, call=None))
    schema = app._tool_manager.get_tool(call["tool"]).parameters
    if jsonschema.Draft202012Validator(schema).is_valid(call["args"]):
        return 0, f"{case.path}: the published input schema accepts {call['args']}"
    result = session.call(call["tool"], **call["args"])
    if result.get("outcome") == "invalid_input":
        return 2, f"{case.path}: {result.get('error')}\n"
    return 0, json.dumps(result, default=str)


def run_in_process(case: Case) -> tuple[int, str, float]:
    """(exit code, stderr, seconds) running the CLI's main() in this interpreter."""
    from bt_grasp.cli import main

    err, out = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            if case.argv is None:
                code, text = run_mcp(case)
                print(text, file=sys.stderr, end="")
            else:
                code = main(case.argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException:  # what a user would see as a traceback
            traceback.print_exc()
            code = 1
    return code, err.getvalue(), time.perf_counter() - start


def peak_mb() -> float:
    """This process's peak resident memory so far.

    Linux's VmHWM belongs to this program's own memory map; `ru_maxrss` does not do here: a child
    started by a large parent (pytest after a thousand tests) inherits the parent's figure.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def run_subprocess(case: Case, timeout: float, mem_mb: int) -> tuple[int | None, str, float]:
    """(exit code or None on timeout, stderr, seconds) in a fresh interpreter, memory capped."""
    if case.argv is None:
        code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import run_corpus as r; "
                f"c = r.Case('', r.Path({str(case.path)!r}), None, False); "
                "code, text = r.run_mcp(c); sys.stderr.write(text); sys.exit(code)")
        argv = [sys.executable, "-c", code]
    else:
        argv = [sys.executable, "-m", "bt_grasp.cli", *case.argv]

    def cap() -> None:
        limit = mem_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, preexec_fn=cap,
                              errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", time.perf_counter() - start
    return proc.returncode, proc.stderr, time.perf_counter() - start


def _category(problems: list[str]) -> str:
    """One word per case for the tally, the worst problem first."""
    for word in ("hang", "traceback", "accepted", "memory"):
        if any(p.startswith(word) for p in problems):
            return word
    if any(not p.startswith("slow") for p in problems):
        return "bad-message"
    return "slow" if problems else "clean"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subprocess", action="store_true", help="one interpreter per case")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--mem-mb", type=int, default=2000, help="address-space cap per subprocess")
    ap.add_argument("--generated", action="store_true", help="add the 1.5 MB and 10 MB trees")
    ap.add_argument("--only", default=None, metavar="REGEX", help="only cases whose name matches")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        todo = cases(tmp) + (generated_cases(tmp) if args.generated else [])
        if args.only:
            todo = [c for c in todo if re.search(args.only, c.name)]
        tally: dict[str, int] = {}
        for case in todo:
            if args.subprocess:
                code, err, secs = run_subprocess(case, args.timeout, args.mem_mb)
            else:
                code, err, secs = run_in_process(case)
            problems = judge(case, code, err, secs)
            if code is not None and code != 2 and "MemoryError" in err:
                problems.append("memory")
            key = _category(problems)
            tally[key] = tally.get(key, 0) + 1
            if args.verbose or problems:
                first = err.strip().splitlines()[-1][:160] if err.strip() else ""
                print(f"{case.name:45s} {secs:6.2f}s {','.join(problems) or 'ok':24s} {first}")
        print(f"cases {len(todo)}: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
        if not args.subprocess:
            print(f"peak memory {peak_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
