"""`bt-grasp watch TRACE.jsonl`: follow a trace another process is writing, like `tail -f`.

New whole lines are read as they are flushed (the writer flushes one whole line per record); a
partly written last line waits for its end. A file written again from the start (a new run with
the same --trace) starts the view again. Following stops at the `final` record.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from bt_grasp.errors import UserError
from bt_grasp.live.render import final_line
from bt_grasp.live.view import TerminalView
from bt_grasp.trace_reader import no_header_error, parse_record

EXIT_INTERRUPTED = 130


class TraceFollower:
    """Reads the records appended to a trace file since the last call."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.display = str(path)
        self._fh: BinaryIO | None = None
        self._open()

    def _open(self) -> None:
        if self._fh is not None:
            self._fh.close()
        try:
            self._fh = self.path.open("rb")
        except FileNotFoundError:
            raise UserError("trace file not found (start the run with `bt-grasp run TREE --trace FILE`)",
                            file=self.display) from None
        except IsADirectoryError:
            raise UserError("is a directory, not a trace file", file=self.display) from None
        except OSError as exc:
            raise UserError(f"cannot read: {exc.strerror}", file=self.display) from None
        self._inode = os.fstat(self._fh.fileno()).st_ino
        self._buf = b""
        self._pos = 0
        self._lineno = 0
        self.header_seen = False

    def _rewritten(self) -> bool:
        """The file was truncated or replaced since we opened it (a new run writes it)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False  # removed for now: keep what we have
        return st.st_ino != self._inode or st.st_size < self._pos

    def read_new(self) -> list[dict[str, Any]]:
        """The records of the whole lines added since the last call (checked; UserError if not a trace)."""
        if self._rewritten():
            self._open()
        assert self._fh is not None
        chunk = self._fh.read()
        self._pos += len(chunk)
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        out = []
        for raw in lines:
            self._lineno += 1
            if not raw.strip():
                continue
            rec = parse_record(raw, self.display, self._lineno)
            if not self.header_seen and rec["type"] != "header":
                raise no_header_error(self.display)
            self.header_seen = True
            out.append(rec)
        head = self._buf.lstrip()[:2]
        if head and not head.startswith(b"{"):  # a partial line that can never become a record
            raise UserError("not a bt_grasp trace line (expected a JSON object)", self.display,
                            self._lineno + 1, 1)
        return out

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


@contextmanager
def ctrl_c_stops() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt inside the block even when the process started with SIGINT
    ignored (Python then keeps it ignored: a job a script started in the background, a child of a
    process that ignores it), so Ctrl-C and `kill -INT` stop watching alike, as they stop a run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def watch(path: str | Path, view: TerminalView, once: bool = False, poll: float = 0.1,
          print_line=print) -> int:
    """Follow `path` into `view` until its final record (0) or Ctrl-C (130); `once`: draw now, exit."""
    with ctrl_c_stops():
        return _watch(TraceFollower(path), view, once, poll, print_line)


def _watch(follower: TraceFollower, view: TerminalView, once: bool, poll: float, print_line: Any) -> int:
    try:
        if once:
            for rec in follower.read_new():
                view.state.fold(rec)
            if not follower.header_seen:
                raise no_header_error(follower.display)
            view.show()
            if view.state.final is not None:
                print_line(final_line(view.state.final))
            return 0
        while True:
            for rec in follower.read_new():
                view.feed(rec)
                if rec["type"] == "final":
                    view.close()
                    print_line(final_line(rec))
                    return 0
            view.refresh()
            time.sleep(poll)
    except KeyboardInterrupt:
        view.close()
        return EXIT_INTERRUPTED
    finally:
        follower.close()


def add_watch_parser(sub: Any) -> None:
    """The `watch` sub-command (cli.py lists it; the code lives here)."""
    p = sub.add_parser("watch", help="follow a trace another run is writing: the tree, live")
    p.add_argument("trace", help="a trace file (bt-grasp run TREE --trace FILE)")
    p.add_argument("--once", action="store_true", help="draw the current state and exit")
    p.add_argument("--view", default="auto", choices=("auto", "frames", "lines"),
                   help="frames: redraw in place (colour unless NO_COLOR); lines: one line per tick; "
                        "auto: frames on a terminal (default)")
    p.add_argument("--poll", type=_seconds, default=0.1, help="seconds between looks at the file")
    p.set_defaults(func=cmd_watch)


def _seconds(text: str) -> float:
    import argparse

    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, not {text}")
    return value


def cmd_watch(args: Any) -> int:
    return watch(args.trace, TerminalView(mode=args.view), once=args.once, poll=args.poll)
