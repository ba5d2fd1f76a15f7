"""`bt-grasp trace convert run.jsonl -o run.btlog`: a trace as BT.CPP's FileLogger2 log, which
Groot2 opens in its Log Replay view.

Layout (BT.CPP src/loggers/bt_file_logger_v2.cpp, little-endian): the 18-byte magic
"BTCPP4-FileLogger2", a u8 format version (1), an i32 XML length and the XML (groot2_xml: a
`_uid` on every node), an i64 first timestamp in microseconds since the epoch, then one 9-byte
record per status change: a u48 microsecond offset from that timestamp, a u16 UID and a u8
status (IDLE as 0). Times are the run's logical clock, so a replay shows how long the robot took,
not how long the simulator did; the first timestamp is 0 (the run's start on that clock) unless
a start is given. Each tick's transitions are stamped with the clock after it, at least 1 µs
after the previous tick's, so Groot2's timeline keeps ticks apart.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from bt_grasp.errors import UserError
from bt_grasp.observe.groot2_status import StatusFold
from bt_grasp.observe.groot2_xml import groot2_tree
from bt_grasp.trace_reader import Trace, clock_of

MAGIC = b"BTCPP4-FileLogger2"
VERSION = 1
RECORD = 9
MAX_OFFSET_US = (1 << 48) - 1


@dataclass
class BtLog:
    """A .btlog read back."""

    version: int
    xml: str
    first_timestamp_us: int
    records: list[tuple[int, int, int]]  # (offset µs, uid, status)


def transitions(trace: Trace, subtree: str | None = None) -> tuple[str, list[tuple[int, int, int]]]:
    """(Groot2 XML, [(offset µs, uid, status)]) of a read trace."""
    tree = groot2_tree(trace.header["structure"], str(trace.header.get("tree") or "tree"), subtree)
    fold = StatusFold(tree)
    records: list[tuple[int, int, int]] = []
    last = -1
    for tick in trace.ticks:
        t_us = max(round(clock_of(tick, last / 1e6) * 1e6), last + 1)
        changes = fold.tick(tick["visited"])
        if changes:
            records += [(t_us, uid, status) for uid, status, _ in changes]
            last = t_us
    return tree.xml, records


def encode(xml: str, records: list[tuple[int, int, int]], first_timestamp_us: int = 0) -> bytes:
    """The FileLogger2 bytes."""
    body = xml.encode("utf-8")
    out = bytearray(MAGIC + bytes((VERSION,)) + struct.pack("<i", len(body)) + body
                    + struct.pack("<q", first_timestamp_us))
    for t_us, uid, status in records:
        if not 0 <= t_us <= MAX_OFFSET_US:
            raise ValueError(f"offset {t_us} µs does not fit FileLogger2's 48 bits")
        out += t_us.to_bytes(6, "little") + struct.pack("<HB", uid, status)
    return bytes(out)


def write_btlog(trace: Trace, out: Path, subtree: str | None = None, first_timestamp_us: int = 0) -> None:
    """Write `trace` to `out` as a FileLogger2 log (the converter registered for .btlog)."""
    xml, records = transitions(trace, subtree)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(encode(xml, records, first_timestamp_us))


def read_btlog(path: str | Path) -> BtLog:
    """Parse a FileLogger2 log; UserError naming the byte offset of what is wrong."""
    data = Path(path).read_bytes()
    display = str(path)

    def bad(what: str, at: int) -> UserError:
        return UserError(f"not a BT.CPP FileLogger2 log: {what} at byte {at} "
                         "(write one with `bt-grasp trace convert RUN.jsonl -o RUN.btlog`)", display, 1, at + 1)

    if not data.startswith(MAGIC):
        raise bad(f"expected the magic {MAGIC.decode()}", 0)
    pos = len(MAGIC)
    if len(data) < pos + 5:
        raise bad("truncated header", pos)
    version = data[pos]
    (xml_len,) = struct.unpack_from("<i", data, pos + 1)
    pos += 5
    if xml_len < 0 or len(data) < pos + xml_len + 8:
        raise bad(f"XML length {xml_len} runs past the end", pos - 4)
    xml = data[pos:pos + xml_len].decode("utf-8")
    pos += xml_len
    (first,) = struct.unpack_from("<q", data, pos)
    pos += 8
    if (len(data) - pos) % RECORD:
        raise bad(f"{len(data) - pos} bytes of records, not a multiple of {RECORD}", pos)
    records = []
    for at in range(pos, len(data), RECORD):
        t_us = int.from_bytes(data[at:at + 6], "little")
        uid, status = struct.unpack_from("<HB", data, at + 6)
        records.append((t_us, uid, status))
    return BtLog(version=version, xml=xml, first_timestamp_us=first, records=records)
