"""`bt-grasp run --record PATH`: the recorder for PATH's format, chosen by its suffix (or by
`--record-format`), imported only when asked for so each tool's library stays an optional extra.

One table, suffix -> (format name, module, class); every recorder class is a RunObserver taking
(path, images=...), `images` asking for camera frames besides the tree's state.
"""

from __future__ import annotations

from pathlib import Path

from bt_grasp.errors import UserError
from bt_grasp.observers import RunObserver

# suffix -> (format name for --record-format, module, RunObserver class)
RECORDERS: dict[str, tuple[str, str, str]] = {
    ".mcap": ("mcap", "bt_grasp.observe.mcap_record", "McapRecorder"),
    ".db3": ("rosbag2", "bt_grasp.observe.rosbag", "RosbagRecorder"),
}


def recorder_for(path: str | Path, images: bool, record_format: str | None = None) -> RunObserver:
    """The recorder writing `path`: by `record_format` when given ("rosbag2", ...), else by suffix."""
    suffix = Path(path).suffix.lower()
    if record_format is not None:
        entry = next((e for e in RECORDERS.values() if e[0] == record_format), None)
        if entry is None:
            known = ", ".join(sorted({e[0] for e in RECORDERS.values()}))
            raise UserError(f"unknown record format '{record_format}' (use one of: {known})", file="--record-format")
    elif suffix in RECORDERS:
        entry = RECORDERS[suffix]
    else:
        known = ", ".join(sorted(RECORDERS))
        raise UserError(f"cannot tell the format of '{Path(path).name}' (name it with one of: {known}, "
                        "or give --record-format)", file=str(path))
    _, module, cls = entry
    observer: RunObserver = getattr(__import__(module, fromlist=[cls]), cls)(path, images=images)
    return observer
