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


MAX_ERRORS = 20  # errors of one file reported together; the rest are counted


class UserErrors(UserError):
    """Several errors of one file, in the order found: one line each, at most MAX_ERRORS of them.

    Its own message and location are the first error's, so code that handles one UserError
    still reads a sensible one."""

    def __init__(self, errors: list[UserError], final: bool = False) -> None:
        first = errors[0]
        super().__init__(first.message, first.file, first.line, first.col)
        self.errors = list(errors)
        self.final = final  # checking stopped here: nothing more is looked at

    def __str__(self) -> str:
        lines = [UserError.__str__(e) for e in self.errors[:MAX_ERRORS]]
        if len(self.errors) >= MAX_ERRORS:
            lines.append(f"{one_line(self.file or 'input', 300)}: stopped after {MAX_ERRORS} errors")
        return "\n".join(lines)


def one_or_all(errors: list[UserError]) -> UserError:
    """What to raise for a file's errors: a single one as itself (callers that name the error's
    type see a UserError, as before errors were gathered), several as a UserErrors."""
    return errors[0] if len(errors) == 1 else UserErrors(errors)


def each_error(exc: UserError) -> list[UserError]:
    """The single errors `exc` stands for (itself, or those of a UserErrors)."""
    return list(exc.errors) if isinstance(exc, UserErrors) else [exc]


class BackendUnavailable(Exception):
    """A robot, camera or optional dependency cannot be used; the message says why in one line."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean X?)' for the likeliest choice (see likely_meant), or '' when none is close."""
    close = likely_meant(word, choices)
    return f" (did you mean {close[0]}?)" if close else ""


def likely_meant(word: str, choices: Iterable[str]) -> list[str]:
    """The choices a user who wrote `word` may have meant, likeliest first: the same name in
    another case (empty -> EMPTY), then names spelt alike (grap -> grasp), then names `word`
    begins (ur5 -> ur5e_robotiq: too short a prefix to be spelt alike)."""
    options = list(dict.fromkeys(choices))
    folded = word.casefold()
    same_case = [c for c in options if c.casefold() == folded]
    alike = difflib.get_close_matches(word, options, n=3, cutoff=0.6)
    begun = [c for c in options if len(folded) >= 3 and c.casefold().startswith(folded)]
    return list(dict.fromkeys(same_case + alike + begun))
