"""`bt-grasp trace recover run.mcap`: an MCAP file whose writer was killed (no summary, no
footer, maybe a torn last chunk) rewritten whole, with every message of its complete chunks.

Why: MCAP readers that seek (mcap's `make_reader`, Foxglove) start from the footer, which a
writer only writes when it closes. The recorder flushes a chunk every second, so a killed run's
file holds all but its last second; this reads it from the front as a stream, stops at the first
incomplete record, and writes the same schemas, channels and messages to a complete file
(what `mcap recover` of the mcap CLI does)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from bt_grasp.errors import UserError
from bt_grasp.observe.extras import need
from bt_grasp.outputs import output_error


def mcap_is_complete(path: Path) -> bool:
    """Does the file open in a seeking reader (footer and summary present)?"""
    reader = need("mcap.reader")
    try:
        with path.open("rb") as fh:
            reader.make_reader(fh).get_summary()
        with path.open("rb") as fh:
            fh.seek(-8, os.SEEK_END)
            return fh.read(8) == b"\x89MCAP0\r\n"
    except Exception:  # any reader error: not complete
        return False


def recover_mcap(path: str | Path, out: str | Path | None = None) -> tuple[int, int]:
    """Rewrite `path` (or write `out`) with its readable messages; (messages, channels)."""
    need("mcap.reader")
    from mcap.records import Channel, Message, Schema
    from mcap.stream_reader import StreamReader
    from mcap.writer import Writer

    path = Path(path)
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    messages: list[Message] = []
    try:
        with path.open("rb") as fh:
            try:
                for record in StreamReader(fh, skip_magic=False).records:
                    if isinstance(record, Schema):
                        schemas[record.id] = record
                    elif isinstance(record, Channel):
                        channels[record.id] = record
                    elif isinstance(record, Message) and record.channel_id in channels:
                        messages.append(record)
            except Exception:  # noqa: S110 - the torn end of a killed writer's file: stop there
                pass
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", file=str(path)) from None
    if not channels:
        raise UserError("no MCAP channel could be read (not an MCAP file, or cut before its first "
                        "chunk)", file=str(path))
    target = Path(out) if out is not None else path
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise UserError(output_error("recovered MCAP file", exc), file=str(target)) from None
    try:
        with os.fdopen(fd, "wb") as dst:
            writer = Writer(dst)
            writer.start()
            ids = {sid: writer.register_schema(s.name, s.encoding, s.data) for sid, s in schemas.items()}
            chan = {cid: writer.register_channel(c.topic, c.message_encoding, ids.get(c.schema_id, 0),
                                                 dict(c.metadata))
                    for cid, c in channels.items()}
            for m in messages:
                writer.add_message(chan[m.channel_id], m.log_time, m.data, m.publish_time, m.sequence)
            writer.finish()
            dst.flush()
            os.fsync(dst.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise UserError(output_error("recovered MCAP file", exc), file=str(target)) from None
    return len(messages), len(channels)
