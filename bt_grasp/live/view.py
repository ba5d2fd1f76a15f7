"""The terminal side of the live view: a frame redrawn in place on a terminal (cursor home, each
line overwritten and cleared to its end, the rest of the screen cleared: no blank flash between
frames), or one compact line per tick when the output is a pipe or a file."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import time
from collections.abc import Mapping
from typing import IO, Any

from bt_grasp.live.render import compact_line, frame
from bt_grasp.live.state import LiveState
from bt_grasp.observers import RecordObserver

MODES = ("auto", "frames", "lines")
HOME, CLEAR_LINE, CLEAR_BELOW, CLEAR_SCREEN = "\x1b[H", "\x1b[K", "\x1b[J", "\x1b[2J"
HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"


def is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def use_color(stream: IO[str], forced: bool = False, env: Mapping[str, str] | None = None) -> bool:
    """ANSI colour on a terminal or when forced, never when NO_COLOR is set (no-color.org)."""
    if (env if env is not None else os.environ).get("NO_COLOR"):
        return False
    return forced or is_tty(stream)


class TerminalView(RecordObserver):
    """Feeds trace records into a LiveState and draws it on `stream`: a run's observer, or fed
    the records of a trace file being followed (`bt-grasp watch`).

    mode: "frames" redraws the whole view in place (at most once per `min_interval` seconds of
    wall time, and always at the end); "lines" prints one compact line per tick; "auto" is
    frames on a terminal and lines otherwise. `frames` forces colour too, unless NO_COLOR."""

    def __init__(self, stream: IO[str] | None = None, mode: str = "auto", min_interval: float = 0.05,
                 env: Mapping[str, str] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"view mode must be one of {MODES}, not {mode!r}")
        super().__init__()
        self.stream = stream or sys.stdout
        self.frames = mode == "frames" or (mode == "auto" and is_tty(self.stream))
        self.color = use_color(self.stream, forced=mode == "frames", env=env)
        self.min_interval = min_interval
        self.state = LiveState()
        self._drawn = False
        self._cursor_shown = False
        self._pending = False
        self._last = float("-inf")

    def record(self, rec: dict[str, Any]) -> None:
        self.feed(rec)

    def feed(self, record: dict[str, Any]) -> None:
        """One trace record (header, tick or final)."""
        self.state.fold(record)
        kind = record.get("type")
        if not self.frames:
            if kind == "tick":
                self._write(compact_line(self.state) + "\n")
            return
        self._pending = True
        if kind == "final" or time.monotonic() - self._last >= self.min_interval:
            self.refresh()


    def refresh(self) -> None:
        """Draw the frame now if anything changed since the last one (frames mode)."""
        if not (self.frames and self._pending):
            return
        size = shutil.get_terminal_size()
        lines = frame(self.state, self.color, size.columns, max(size.lines - 1, 5))
        start = HOME
        if not self._drawn:
            start = HIDE_CURSOR + HOME + CLEAR_SCREEN
            atexit.register(self._show_cursor)  # even if the run ends in an error
        self._write(start + "".join(line + CLEAR_LINE + "\n" for line in lines) + CLEAR_BELOW)
        self._drawn, self._pending, self._last = True, False, time.monotonic()

    def show(self) -> None:
        """Print the current state once, as plain lines (no cursor movement): `watch --once`."""
        if self.frames:
            width = shutil.get_terminal_size().columns if is_tty(self.stream) else None
            self._write("".join(line + "\n" for line in frame(self.state, self.color, width)))
        else:
            self._write(compact_line(self.state) + "\n")

    def close(self) -> None:
        """Draw what is pending and give the cursor back."""
        self.refresh()
        self._show_cursor()

    def _show_cursor(self) -> None:
        if self._drawn and not self._cursor_shown:
            self._cursor_shown = True
            try:
                self._write(SHOW_CURSOR)
            except (ValueError, OSError):  # the stream is closed already (at exit)
                pass

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
