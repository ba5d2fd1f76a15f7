"""A ROS 2 bag's metadata.yaml, written while it records and rebuilt from its sqlite3 file after
a kill (`bt-grasp trace recover run.db3`, what `ros2 bag reindex` does for ROS users).

Why: rosbag2 readers (rosbags, `ros2 bag`) open a bag through metadata.yaml, which a writer
normally writes only when it closes; a run killed before that left a bag no reader opens. The
recorder commits its messages and rewrites this file every second, and recovery derives it from
the committed rows (sqlite rolls back a transaction the kill cut short)."""

from __future__ import annotations

import contextlib
import sqlite3
from io import StringIO
from pathlib import Path
from typing import Any

import yaml

from bt_grasp.errors import UserError

VERSION = 8  # the rosbag2 metadata version the recorder writes (ROS 2 Humble and later read it)


def metadata_text(storage: str, topics: list[dict[str, Any]], start_ns: int, end_ns: int) -> str:
    """metadata.yaml of a sqlite3 bag: `topics` are {name, type, serialization_format,
    offered_qos_profiles, type_description_hash, count}, in connection id order."""
    count = sum(t["count"] for t in topics)
    if not count:
        start_ns = end_ns = 0
    duration = max(0, end_ns - start_ns)
    info = {
        "version": VERSION, "storage_identifier": "sqlite3", "relative_file_paths": [storage],
        "duration": {"nanoseconds": duration}, "starting_time": {"nanoseconds_since_epoch": start_ns},
        "message_count": count,
        "topics_with_message_count": [
            {"topic_metadata": {"name": t["name"], "type": t["type"],
                                "serialization_format": t["serialization_format"],
                                "offered_qos_profiles": t["offered_qos_profiles"],
                                "type_description_hash": t["type_description_hash"]},
             "message_count": t["count"]} for t in topics],
        "compression_format": "", "compression_mode": "",
        "files": [{"path": storage, "starting_time": {"nanoseconds_since_epoch": start_ns},
                   "duration": {"nanoseconds": duration}, "message_count": count}],
        "custom_data": None, "ros_distro": "rosbags",
    }
    out = StringIO()
    yaml.safe_dump({"rosbag2_bagfile_information": info}, out, default_flow_style=False, sort_keys=False)
    return out.getvalue()


def write_metadata(folder: Path, text: str) -> None:
    """Replace folder/metadata.yaml in one step (a reader never sees half of it)."""
    tmp = folder / "metadata.yaml.tmp"
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(folder / "metadata.yaml")


def recover_bag(path: str | Path) -> tuple[Path, int, int]:
    """Rebuild the metadata.yaml of the bag `path` names (its folder, its .db3, or the `run.db3`
    it was recorded as) from its committed messages; (folder, messages, topics)."""
    p = Path(path)
    folder = p if p.is_dir() else p.parent if p.is_file() else p.with_suffix("")
    dbs = sorted(folder.glob("*.db3")) if folder.is_dir() else []
    if len(dbs) != 1:
        raise UserError(f"no ROS 2 bag here: {len(dbs)} .db3 files in {folder} (give the folder "
                        "`bt-grasp run --record run.db3` wrote)", file=str(path))
    db = dbs[0]
    try:
        with contextlib.closing(sqlite3.connect(db)) as conn:  # a cut transaction rolls back here
            rows = conn.execute("SELECT id, name, type, serialization_format, offered_qos_profiles, "
                                "type_description_hash FROM topics ORDER BY id").fetchall()
            counts = dict(conn.execute("SELECT topic_id, count(*) FROM messages GROUP BY topic_id").fetchall())
            start, end = conn.execute("SELECT min(timestamp), max(timestamp) FROM messages").fetchone()
    except sqlite3.Error as exc:
        raise UserError(f"cannot read the bag's database: {exc} (it may be damaged beyond recovery)",
                        file=str(db)) from None
    topics = [{"name": name, "type": msgtype, "serialization_format": fmt, "offered_qos_profiles": qos,
               "type_description_hash": digest, "count": counts.get(tid, 0)}
              for tid, name, msgtype, fmt, qos, digest in rows]
    try:
        write_metadata(folder, metadata_text(db.name, topics, start or 0, end or 0))
    except OSError as exc:
        raise UserError(f"cannot write metadata.yaml: {exc.strerror}", file=str(folder)) from None
    return folder, sum(t["count"] for t in topics), len(topics)


def writer_metadata(writer: Any, storage: str) -> str:
    """metadata.yaml for an open rosbags Writer, from its connections and counts."""
    from rosbags.rosbag2.metadata import dump_qos_v8

    topics = [{"name": c.topic, "type": c.msgtype, "serialization_format": c.ext.serialization_format,
               "offered_qos_profiles": dump_qos_v8(c.ext.offered_qos_profiles),
               "type_description_hash": c.digest, "count": writer.counts[c.id]}
              for c in writer.connections]
    return metadata_text(storage, topics, writer.min_timestamp, writer.max_timestamp)
