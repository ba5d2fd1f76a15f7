"""The one table of recording formats: for each file suffix, the tool that opens it, the
RunObserver that records a live run in it (`bt-grasp run --record`, observe/recorders.py) and
the function that writes a recorded trace in it (`bt-grasp trace convert`, observe/convert.py).

Modules are named, not imported, so each tool's library stays an optional extra until its
format is asked for. A new format is one `Format` added here (CONTRIBUTING.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Format:
    suffix: str  # ".mcap": the output file's suffix picks the format
    name: str  # what --record-format calls it
    tool: str  # the tool that opens it, for help texts
    module: str  # where the recorder and the converter live
    recorder: str | None = None  # RunObserver class taking (path, images=...), if runs record live
    converter: str | None = None  # function (trace, out, **options), if a trace converts to it
    subtree: bool = False  # the converter takes subtree=NODE (a part of a large tree)

    def load(self, attr: str) -> Any:
        """The recorder class or converter function named `attr`, imported now."""
        return getattr(__import__(self.module, fromlist=[attr]), attr)


FORMATS: dict[str, Format] = {f.suffix: f for f in (
    Format(".mcap", "mcap", "Foxglove", "bt_grasp.observe.mcap_record", recorder="McapRecorder",
           converter="convert_trace"),
    Format(".db3", "rosbag2", "ROS 2 bag, sqlite3", "bt_grasp.observe.rosbag", recorder="RosbagRecorder",
           converter="write_rosbag"),
    Format(".btlog", "btlog", "Groot2 log replay", "bt_grasp.observe.groot2_btlog", converter="write_btlog",
           subtree=True),
)}


def recording_formats() -> dict[str, Format]:
    """suffix -> Format, for the formats a live run can be recorded in."""
    return {s: f for s, f in FORMATS.items() if f.recorder is not None}


def conversion_formats() -> dict[str, Format]:
    """suffix -> Format, for the formats a recorded trace converts to."""
    return {s: f for s, f in FORMATS.items() if f.converter is not None}


def record_format_names() -> tuple[str, ...]:
    """The --record-format choices, in table order."""
    return tuple(f.name for f in recording_formats().values())
