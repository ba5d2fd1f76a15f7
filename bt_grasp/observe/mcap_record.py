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
from bt_grasp.observers import Record, RunObserver, Tick

if TYPE_CHECKING:
    from bt_grasp.context import RunContext
    from bt_grasp.observe.foxglove_observer import FoxgloveObserver
    from bt_grasp.runner import EpisodeResult
    from bt_grasp.trace import Trace


def _open(path: Path):  # type: ignore[no-untyped-def]
    """(context, MCAP writer) writing `path`, replacing an older file (as --trace does)."""
    foxglove = need("foxglove")
    if path.is_dir():
        raise UserError("is a directory, not an MCAP file to write", file=str(path))
    context = foxglove.Context()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = foxglove.open_mcap(path, allow_overwrite=True, context=context)
    except Exception as exc:  # OSError, or the SDK's own error type for an unwritable path
        raise UserError(f"cannot write the MCAP file: {exc}", file=str(path)) from None
    return context, writer


class McapRecorder(RunObserver):
    """Records a run into an MCAP file; `images` adds the RGB, depth and mask frames. The file is
    complete (summary written) once the run has finished."""

    def __init__(self, path: str | Path, images: bool = False) -> None:
        need("foxglove")  # before importing the modules built on it: one line naming the extra
        from bt_grasp.observe.foxglove_channels import FoxglovePublisher
        from bt_grasp.observe.foxglove_observer import FoxgloveObserver

        self.path = Path(path)
        # the context is held for the whole run: channels close when their context is collected
        self._context, self._writer = _open(self.path)
        self._observer: FoxgloveObserver = FoxgloveObserver(FoxglovePublisher(self._context), images)
        self._recorded = False

    def started(self, header: Record, ctx: RunContext) -> None:
        self._recorded = True
        self._observer.started(header, ctx)

    def ticked(self, tick: Tick) -> None:
        self._observer.ticked(tick)

    def finished(self, final: Record, result: EpisodeResult) -> None:
        self._recorded = True
        try:
            self._observer.finished(final, result)
        finally:
            self.close()

    def close(self) -> None:
        """Write the summary and close the file (again: nothing). A run that never started
        (its tree did not load) leaves no file."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            if not self._recorded:
                with contextlib.suppress(OSError):
                    os.unlink(self.path)


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
        writer.close()
        with contextlib.suppress(OSError):
            os.unlink(out)
        raise
    writer.close()
