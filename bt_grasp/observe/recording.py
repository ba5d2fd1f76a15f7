"""The base of the run recorders (MCAP, ROS 2 bag): a recording never takes the run down and
loses as little as it can. Poses and frames that are not finite are left out (`finite_numbers`).

- Flushed as it goes: `flush()` (an MCAP chunk ended and written, a bag's transaction committed
  with its metadata.yaml) runs at most every `flush_interval` seconds of wall time and at the
  end, so a run killed with SIGKILL leaves everything but its last second readable.
- Fault-contained: anything the recorder raises — a disk that fills, a value its library refuses
  (an image of the wrong shape) — stops the recording with one warning line and closes what it wrote; the
  run goes on to its decision. Interrupted (a signal) is a BaseException and still unwinds.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bt_grasp.errors import one_line
from bt_grasp.observers import Record, RunObserver, Tick
from bt_grasp.outputs import warn

if TYPE_CHECKING:
    from bt_grasp.context import RunContext
    from bt_grasp.result import EpisodeResult


def finite_numbers(*values: Any) -> bool:
    """Are all `values` numbers (arrays of them) and finite? A recording leaves out a pose or a
    frame that is not (a NaN camera pose, a gripper at infinity): no NaN in a recording."""
    try:
        return all(bool(np.isfinite(np.asarray(v, dtype=float)).all()) for v in values)
    except (TypeError, ValueError):
        return False


class Recorder(RunObserver):
    """Subclasses implement begin/add_tick/end (record), flush (make what is written readable)
    and finish_file (the last bytes: an MCAP summary, a bag's metadata)."""

    what = "recording"

    def __init__(self, path: str | Path, flush_interval: float = 1.0) -> None:
        self.path = Path(path)
        self.flush_interval = flush_interval
        self.failed: str | None = None  # why the recording stopped, once it has
        self.ticks = 0
        self._flushed = time.monotonic()

    # -- what a subclass writes ----------------------------------------------------------------

    def begin(self, header: Record, ctx: RunContext) -> None:
        """The run's header."""

    def add_tick(self, tick: Tick) -> None:
        """One tick."""

    def end(self, final: Record, result: EpisodeResult) -> None:
        """The decision."""

    def flush(self) -> None:
        """Make everything recorded so far readable on disk."""

    def finish_file(self) -> None:
        """Complete and close the file (called once)."""

    # -- the observer calls, guarded -----------------------------------------------------------

    def started(self, header: Record, ctx: RunContext) -> None:
        self._guard(self.begin, header, ctx)

    def ticked(self, tick: Tick) -> None:
        self._guard(self.add_tick, tick)
        self.ticks += 1
        if time.monotonic() - self._flushed >= self.flush_interval:
            self._flushed = time.monotonic()
            self._guard(self.flush)

    def finished(self, final: Record, result: EpisodeResult) -> None:
        self._guard(self.end, final, result)
        self.close()

    def close(self) -> None:
        """Complete the file (again: nothing)."""
        if self.failed is None and not getattr(self, "_closed", False):
            self._closed = True
            self._guard(self.finish_file)

    def _guard(self, call: Any, *args: Any) -> None:
        if self.failed is not None:
            return
        try:
            call(*args)
        except Exception as exc:  # any fault of a recorder: it stops, the run does not
            self._stop(exc)

    def _stop(self, exc: Exception) -> None:
        self.failed = one_line(f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc), 160)
        warn(f"{self.path}: the {self.what} stopped after {self.ticks} ticks ({self.failed}); "
             f"what it holds stays readable (`bt-grasp trace recover {self.path}` if a reader refuses it)")
        self._closed = True
        try:
            self.abandon()
        except Exception:  # noqa: S110 - the warning is out; a second failure adds nothing
            pass

    def abandon(self) -> None:
        """After a fault: keep what was written readable (close without raising)."""
        self.finish_file()
