"""Output files a run or a benchmark writes (trace, recording, results): checked before anything
moves, and the one-line messages when one cannot be written.

Why a probe: a full disk or a refused folder must be one line before the robot moves, not a
failure after it has picked something up. An output that fails later (the disk fills during the
run) is stopped by its writer with `warn`, and the run goes on to its decision."""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from pathlib import Path

from bt_grasp.errors import UserError, one_line

PROBE_BYTES = 4096  # one block: a disk without a free block refuses it


def output_error(what: str, exc: OSError) -> str:
    """Why `what` cannot be written: the OS's reason and the fix."""
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"cannot write the {what}: {reason} (free some space or write it elsewhere)"
    if isinstance(exc, IsADirectoryError):
        return f"cannot write the {what}: it is a directory (name a file)"
    if isinstance(exc, (NotADirectoryError, FileExistsError)):
        return f"cannot write the {what}: a part of its folder is a file (name another folder)"
    return f"cannot write the {what}: {reason} (give a path in a writable folder)"


def check_folder(folder: str | Path, what: str, display: str | None = None) -> Path:
    """Create `folder` if needed and write, sync and remove a block in it; UserError naming
    `display` (default the folder) if any step fails."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not folder.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory")
        with tempfile.TemporaryFile(dir=folder) as fh:
            fh.write(b"\0" * PROBE_BYTES)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise UserError(output_error(what, exc), file=display or str(folder)) from None
    return folder


def check_file(path: str | Path, what: str) -> Path:
    """`path` can be written as `what`: not a directory, its folder made and able to take a block."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"cannot write the {what}: it is a directory (name a file)", file=str(path))
    check_folder(path.parent, what, display=str(path))
    return path


def warn(message: str) -> None:
    """One warning line on stderr (an output stopped; the run goes on)."""
    print(f"bt-grasp: warning: {one_line(message)}", file=sys.stderr, flush=True)
