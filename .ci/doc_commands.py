"""Run every documented command (.ci/doc_commands.txt) as a user would: in order, in one shell,
in the current folder (CI: an empty one outside the checkout), with whatever `bt-grasp` is on
PATH (CI: the plain install). Stops at the first command that fails, naming it and showing its
output. Standard library only; `python .ci/doc_commands.py --list` prints what would run."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
LIST = CHECKOUT / ".ci" / "doc_commands.txt"
MARKS = "$>!?+="


@dataclass
class Entry:
    """One line of the list with what follows it: a doc command, a set-up step or a file."""

    mark: str                   # "$" doc command, "+" set-up, "=" file from a doc
    text: str
    line: int
    run_as: str | None = None   # "> COMMAND"
    skip: str | None = None     # "! REASON"
    status: int = 0             # "? N"
    notes: list[str] = field(default_factory=list)

    @property
    def command(self) -> str | None:
        """What CI runs for this entry, or None."""
        if self.mark == "=" or self.skip is not None:
            return None
        return self.run_as or self.text


def parse(text: str, where: str = str(LIST)) -> list[Entry]:
    """The entries of a list file; a malformed line is a ValueError naming it."""
    entries: list[Entry] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        mark, _, rest = line.partition(" ")
        rest = rest.strip()
        if mark not in MARKS or len(mark) != 1 or not rest:
            raise ValueError(f"{where}:{number}: expected one of {' '.join(MARKS)} and a text, got {line!r}")
        if mark in "$+=":
            entries.append(Entry(mark, rest, number))
            continue
        last = entries[-1] if entries else None
        if last is None or last.mark != "$":
            raise ValueError(f"{where}:{number}: '{mark}' must follow a '$' line")
        if mark == ">":
            last.run_as = rest
        elif mark == "!":
            last.skip = rest
        elif not rest.isdigit():
            raise ValueError(f"{where}:{number}: '?' takes an exit status, got {rest!r}")
        else:
            last.status = int(rest)
        if last.run_as and last.skip:
            raise ValueError(f"{where}:{number}: a command is either run ('>') or skipped ('!'), not both")
    return entries


def blocks(doc: Path, language: str = "yaml") -> list[str]:
    """The fenced code blocks of `language` in a markdown file, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", doc.read_text(encoding="utf-8"), flags=re.S | re.M)


def script(entries: list[Entry]) -> str:
    """One bash script running every entry in order; the first failure exits 1, naming it."""
    out = ["set -u", 'log="$(mktemp)"']
    used: dict[tuple[str, str], int] = {}
    for e in entries:
        if e.mark == "=":
            target, doc, *language = e.text.split()
            key = (doc, language[0] if language else "yaml")
            n = used.get(key, 0)
            used[key] = n + 1
            body = blocks(CHECKOUT / doc, key[1])[n]
            out.append(f"printf '%s' {shlex.quote(body)} > {shlex.quote(target)}")
            continue
        command = e.command
        if command is None:
            continue
        shown = shlex.quote(command)
        out += [f"echo {shlex.quote('$ ' + command)}",
                f"{{ {command}\n}} </dev/null >\"$log\" 2>&1",
                "status=$?",
                f'if [ "$status" -ne {e.status} ]; then',
                f'  echo "doc command failed (exit $status, expected {e.status}): "{shown} >&2',
                '  tail -n 40 "$log" >&2; exit 1',
                "fi"]
    out.append('echo "every documented command ran as the docs say"')
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    entries = parse(LIST.read_text(encoding="utf-8"))
    if argv == ["--list"]:
        for e in entries:
            if e.command:
                print(e.command)
        return 0
    env = {**os.environ, "CHECKOUT": str(CHECKOUT), "DOCS_WORK": os.getcwd()}
    return subprocess.run(["bash", "-c", script(entries)], env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
