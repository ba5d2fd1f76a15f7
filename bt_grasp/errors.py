"""User-facing errors: one line naming file, line, column and the fix; the CLI exits 2 on them."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

MAX_MESSAGE = 400  # characters of message text; a longer one is cut with "..."
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text` on one line of at most `limit` characters: control characters (newlines, escape
    codes, NUL) are shown escaped, so an error can never print several lines or a file's content."""
    flat = _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


def excerpt(value: object, limit: int = 40) -> str:
    """A short, one-line quote of user data for a message."""
    return one_line(str(value), limit)


class UserError(Exception):
    """Bad input from the user (tree file, profile, option). Printed as one line, exit code 2."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = one_line(self.file, 300)
            if self.line is not None:
                where += f":{self.line}"
                if self.col is not None:
                    where += f":{self.col}"
            where += ": "
        return where + one_line(self.message)


class BackendUnavailable(Exception):
    """A robot, camera or optional dependency cannot be used; the message says why in one line."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean X?)' for the closest choice, or '' when nothing is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
