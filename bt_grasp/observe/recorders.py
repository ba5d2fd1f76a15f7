"""`bt-grasp run --record PATH`: the recorder for PATH's format, chosen by its suffix (or by
`--record-format`), imported only when asked for so each tool's library stays an optional extra.

The formats are observe/formats.py's table; every recorder class is a RunObserver taking
(path, images=...), `images` asking for camera frames besides the tree's state.
"""

from __future__ import annotations

from pathlib import Path

from bt_grasp.errors import UserError
from bt_grasp.observe.formats import recording_formats
from bt_grasp.observers import RunObserver


def recorder_for(path: str | Path, images: bool, record_format: str | None = None) -> RunObserver:
    """The recorder writing `path`: by `record_format` when given ("rosbag2", ...), else by suffix."""
    formats = recording_formats()
    suffix = Path(path).suffix.lower()
    if record_format is not None:
        fmt = next((f for f in formats.values() if f.name == record_format), None)
        if fmt is None:
            known = ", ".join(sorted(f.name for f in formats.values()))
            raise UserError(f"unknown record format '{record_format}' (use one of: {known})", file="--record-format")
    elif suffix in formats:
        fmt = formats[suffix]
    else:
        known = ", ".join(sorted(formats))
        raise UserError(f"cannot tell the format of '{Path(path).name}' (name it with one of: {known}, "
                        "or give --record-format)", file=str(path))
    observer: RunObserver = fmt.load(fmt.recorder or "")(path, images=images)
    return observer
