"""MCAP files for Foxglove: recorded during a run (`bt-grasp run --record run.mcap`) or
converted from a trace (`bt-grasp trace convert run.jsonl -o run.mcap`).

Both write the channels of bt_grasp.observe.foxglove_channels through foxglove-sdk's MCAP writer
(zstd-compressed chunks, a summary section with the channel and message counts Foxglove's
timeline uses). A trace holds no pixels, points or robot poses, so a converted file has the tree,
the ticks, the status changes, the events and the grasp poses; a recorded one also the frames
perception captured, the located points and the camera and gripper frames."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from bt_grasp.errors import UserError
from bt_grasp.observe.extras import need
from bt_grasp.observe.recording import Recorder
from bt_grasp.observers import Record, Tick
from bt_grasp.outputs import check_file, output_error

if TYPE_CHECKING:
    from bt_grasp.context import RunContext
    from bt_grasp.observe.foxglove_observer import FoxgloveObserver
    from bt_grasp.result import EpisodeResult
    from bt_grasp.trace_reader import Trace


def _open(path: Path):  # type: ignore[no-untyped-def]
    """(context, MCAP writer) writing `path`, replacing an older file (as --trace does).

    Chunks end only when flushed (no size limit), so every write to the file happens in a
    `flush()` or `close()` call, where a failure is an exception this module handles (a chunk
    written by the SDK on its own would only be logged). The header is written at once: a file
    that cannot take it is a UserError before anything moves."""
    foxglove = need("foxglove")
    from foxglove.mcap import MCAPWriteOptions

    check_file(path, "MCAP file")
    context = foxglove.Context()
    writer = None
    try:
        writer = foxglove.open_mcap(path, allow_overwrite=True, context=context,
                                    writer_options=MCAPWriteOptions(chunk_size=None))
        writer.flush()
    except Exception as exc:  # OSError, or the SDK's own error type for an unwritable path
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()
        _remove(path)
        reason = output_error("MCAP file", exc) if isinstance(exc, OSError) else (
            f"cannot write the MCAP file: {exc} (free some space or give a path in a writable folder)")
        raise UserError(reason, file=str(path)) from None
    return context, writer


class McapRecorder(Recorder):
    """Records a run into an MCAP file; `images` adds the RGB, depth and mask frames. The file is
    complete (summary written) once the run has finished; before that, every chunk flushed is
    on disk (a killed run: `bt-grasp trace recover` writes the summary)."""

    what = "MCAP recording"

    def __init__(self, path: str | Path, images: bool = False, flush_interval: float = 1.0) -> None:
        need("foxglove")  # before importing the modules built on it: one line naming the extra
        from bt_grasp.observe.foxglove_channels import FoxglovePublisher
        from bt_grasp.observe.foxglove_observer import FoxgloveObserver

        super().__init__(path, flush_interval)
        # the context is held for the whole run: channels close when their context is collected
        self._context, self._writer = _open(self.path)
        self._observer: FoxgloveObserver = FoxgloveObserver(FoxglovePublisher(self._context), images)
        self._recorded = False

    def begin(self, header: Record, ctx: RunContext) -> None:
        self._recorded = True
        self._observer.started(header, ctx)

    def add_tick(self, tick: Tick) -> None:
        self._observer.ticked(tick)

    def end(self, final: Record, result: EpisodeResult) -> None:
        self._recorded = True
        self._observer.finished(final, result)

    def flush(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def finish_file(self) -> None:
        """Write the summary and close the file. A run that never started (its tree did not
        load) leaves no file."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.close()
            if not self._recorded:
                _remove(self.path)

    def abandon(self) -> None:
        """Close after a fault: the summary if the file takes it (a full disk does not)."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            with contextlib.suppress(Exception):
                writer.close()


def convert_trace(trace: Trace, out: Path) -> None:
    """A trace as an MCAP file (the converter `bt-grasp trace convert` uses for .mcap)."""
    need("foxglove")
    from bt_grasp.observe.foxglove_channels import FoxglovePublisher
    from bt_grasp.observe.foxglove_tree import tree_xml

    context, writer = _open(out)
    try:
        publisher = FoxglovePublisher(context)
        publisher.header(trace.header, tree_xml(trace.header))
        for record in trace.ticks:
            publisher.tick_record(record)
        if trace.final is not None:
            publisher.final(trace.final)
    except BaseException:
        with contextlib.suppress(Exception):
            writer.close()
        _remove(out)
        raise
    try:
        writer.close()  # the one chunk and the summary: where a full disk shows
    except Exception as exc:
        _remove(out)
        raise UserError(f"cannot write the MCAP file: {exc} (free some space or write it elsewhere)",
                        file=str(out)) from None


def _remove(path: Path) -> None:
    """Delete a half-written output, if it is a regular file (never a device such as /dev/full)."""
    with contextlib.suppress(OSError):
        if path.is_file():
            os.unlink(path)
