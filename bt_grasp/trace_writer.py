"""Writing trace files: JSONL with a header, one line per tick, and a final line; flushed per
tick so a killed run (and `bt-grasp watch`) sees every whole tick, synced to disk at most once a
second.

Every line is strict JSON: a number that is not finite (NaN, an infinite clock) is written as
null, so any JSON reader takes the file. A trace that cannot be written is refused before the
robot moves (its header is written and synced first); one that fails later (a disk that fills)
stops with one warning line while the run goes on to its decision. The reader is
bt_grasp/trace_reader.py; the header record both write is built by bt_grasp/trace_header.py."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bt_grasp.errors import UserError
from bt_grasp.json_encoding import encode_record
from bt_grasp.observers import Record, RecordObserver
from bt_grasp.outputs import output_error, warn

if TYPE_CHECKING:
    from bt_grasp.result import EpisodeResult


class TraceWriter(RecordObserver):
    """Writes one JSON object per line, as a run's observer (header, ticks, final, then closed).
    Each record is flushed to the OS as a whole line, so a killed run leaves every finished tick
    and a reader following the file never sees half a record it must wait for; the file is
    fsynced at most once per `sync_interval` seconds and on close (a per-tick fsync costs
    milliseconds, more than the tick itself).

    The first record is synced at once, and a file that cannot take it is a UserError (nothing
    has moved yet). A later write that fails (disk full) stops the trace with one warning line:
    the lines before it stay whole, the run is not disturbed."""

    def __init__(self, path: str | Path, sync_interval: float = 1.0) -> None:
        super().__init__()
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh: IO[str] = self.path.open("w", encoding="utf-8")
        except OSError as exc:
            raise UserError(output_error("trace", exc), file=str(path)) from None
        self.sync_interval = sync_interval
        self._synced = time.monotonic()
        self.lines = 0  # records written whole
        self.failed: str | None = None  # why the trace stopped, once it has

    def write(self, record: dict[str, Any], sync: bool = True) -> None:
        """Append `record` as one line; `sync=False` never fsyncs this record."""
        if self.failed is not None:
            return
        try:
            fh = self._fh
            fh.write(encode_record(record) + "\n")
            fh.flush()
            if self.lines == 0 or (sync and time.monotonic() - self._synced >= self.sync_interval):
                self.sync()
        except OSError as exc:
            self._fail(exc)
        else:
            self.lines += 1

    def _fail(self, exc: OSError) -> None:
        """The first record failing refuses the trace; a later one stops it with a warning."""
        self.failed = output_error("trace", exc)
        self._discard()
        if self.lines == 0:
            raise UserError(self.failed, file=str(self.path)) from None
        warn(f"{self.path}: {self.failed}; the trace stops after {self.lines} whole lines, "
             "the run goes on")

    def _discard(self) -> None:
        """Close the file, dropping what the OS refused (closing would only fail again)."""
        buffer = getattr(self._fh, "buffer", None)
        raw = getattr(buffer, "raw", None)
        with contextlib.suppress(OSError, ValueError):
            if raw is not None:
                raw.close()  # the descriptor, without flushing the buffers that hold the refused line
        with contextlib.suppress(OSError, ValueError):
            self._fh.close()

    def sync(self) -> None:
        """Flush and fsync now (the header, the final record)."""
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._synced = time.monotonic()

    def close(self) -> None:
        if self.failed is not None or self._fh.closed:
            return
        try:
            self.sync()
            self._fh.close()
        except OSError as exc:
            self.failed = output_error("trace", exc)
            self._discard()
            warn(f"{self.path}: {self.failed}; the trace ends after {self.lines} whole lines")

    def record(self, rec: Record) -> None:
        self.write(rec)

    def finished(self, final: Record, result: EpisodeResult) -> None:
        """The last record, then the file is synced and closed."""
        self.write(final)
        self.close()
