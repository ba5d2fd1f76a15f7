"""`bt-grasp run TREE --groot2 [PORT]`: the run in Groot2's live monitor, served as BehaviorTree.CPP's
Groot2Publisher serves a BT.CPP tree (include/behaviortree_cpp/loggers/groot2_protocol.h).

Groot2 is the client and polls: a ZMQ REP socket on PORT (1667 by default) answers its requests,
and a PUB socket on PORT+1 is bound because Groot2 subscribes to it (BT.CPP publishes breakpoint
notifications there; bt_grasp has no breakpoints, so it stays silent). A request is multipart:
a 6-byte header (u8 protocol = 2, u8 type, u32 request id, little-endian) and, for some types,
a second part. A reply repeats the header and adds the publisher's 16-byte tree UUID, then the
payload: 'T' FULLTREE the tree XML with `_uid`s (groot2_xml), 'S' STATUS 3 bytes per node (u16
uid + u8 status; 10 + the previous status for a node reset to IDLE), 'B' BLACKBOARD msgpack of
{name: {entry: value}} for those of the ';'-separated names asked that name a tree: as in BT.CPP,
where blackboards are keyed by (sub)tree name, the run's one blackboard answers to the tree's name
(the BehaviorTree ID of the FULLTREE XML); no known name gives msgpack nil, and a request without
its names part the error "must be 2 parts message". Replies carry protocol 2 whatever the request
said, as BT.CPP's do. Any other request, and a malformed one, gets the two-part error reply
["error", reason], in BT.CPP's words. Compared with BT.CPP 4.8's publisher (tests/test_groot2_live.py, where its Python binding
is installed): the same replies, part for part, for the same tree in the same state.

The server is a daemon thread that owns the sockets; the run's thread only folds each tick into
the status table under a lock, so a slow or absent Groot2 never slows the run. It stops when the
run has finished.
"""

from __future__ import annotations

import os
import struct
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bt_grasp.errors import UserError
from bt_grasp.observe.extras import need
from bt_grasp.observe.groot2_status import IDLE, StatusFold
from bt_grasp.observe.groot2_xml import Groot2Tree, groot2_tree
from bt_grasp.observers import Record, RunObserver, Tick

if TYPE_CHECKING:
    from bt_grasp.context import RunContext
    from bt_grasp.result import EpisodeResult

DEFAULT_PORT = 1667
HEADER = struct.Struct("<BBI")  # protocol, request type, request id: the 6 bytes Groot2 sends
PROTOCOL = 2                    # BT.CPP's Monitor::kProtocolID, the protocol byte of every reply
POLL_MS = 100                   # how often the server looks at the stop flag, as BT.CPP's does
FREE_EDITION_NODES = 20         # the most nodes Groot2's free edition draws


def tree_uuid() -> bytes:
    """16 random bytes marked as a version-4 UUID, new per publisher: Groot2 tells trees apart by it."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return bytes(raw)


class Groot2Publisher(RunObserver):
    """A RunObserver answering Groot2's monitor requests about the run it observes.

    The sockets are bound here, so a port in use is reported before the run starts; `subtree`
    shows only the part of the tree under that node id (Groot2's free edition draws 20 nodes)."""

    def __init__(self, port: int = DEFAULT_PORT, subtree: str | None = None, host: str = "*",
                 notify: Callable[[str], None] | None = None) -> None:
        zmq = need("zmq")
        need("msgpack")
        self.port = port
        self.subtree = subtree
        self.notify = notify  # told once what is served (the CLI prints it on standard error)
        self.uuid = tree_uuid()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._tree: Groot2Tree | None = None
        self._fold: StatusFold | None = None
        self._idle_marks: dict[int, int] = {}
        self._blackboard: dict[str, Any] = {}
        self._tree_name = ""  # the FULLTREE's BehaviorTree ID: the name its blackboard answers to
        self.last_request: float | None = None  # monotonic time of Groot2's last request (heartbeat)
        self.requests = 0
        self._zctx = zmq.Context()
        self._rep = self._zctx.socket(zmq.REP)
        self._pub = self._zctx.socket(zmq.PUB)
        for sock in (self._rep, self._pub):
            sock.setsockopt(zmq.LINGER, 0)
        try:
            self._rep.bind(f"tcp://{host}:{port}")
            self._pub.bind(f"tcp://{host}:{port + 1}")
        except zmq.ZMQError as exc:
            self._zctx.destroy(linger=0)
            raise UserError(f"cannot serve Groot2 on ports {port} and {port + 1}: {exc} "
                            "(choose other ports with --groot2 PORT)", file="--groot2") from None

    # -- RunObserver ---------------------------------------------------------------------------
    def started(self, header: Record, ctx: RunContext) -> None:
        self._tree_name = str(header.get("tree") or "tree")
        try:
            tree = groot2_tree(header["structure"], self._tree_name, self.subtree)
        except UserError as exc:
            self.close()
            raise UserError(exc.message, file="--groot2-subtree") from None
        with self._lock:
            self._tree = tree
            self._fold = StatusFold(tree)
        if self.notify is not None:
            nodes = f"{tree.count} node" + ("s" if tree.count != 1 else "")
            self.notify(f"groot2: {nodes} on ports {self.port} and {self.port + 1}" + (
                f"; Groot2's free edition draws {FREE_EDITION_NODES}: show a part with --groot2-subtree NODE"
                if tree.count > FREE_EDITION_NODES else ""))
        self._thread = threading.Thread(target=self._serve, name=f"groot2:{self.port}", daemon=True)
        self._thread.start()

    def ticked(self, tick: Tick) -> None:
        with self._lock:
            if self._fold is None:
                return
            for uid, new, prev in self._fold.tick(tick.visited):
                if new == IDLE:
                    self._idle_marks[uid] = prev
                else:
                    self._idle_marks.pop(uid, None)
            self._blackboard.update(tick.record.get("blackboard", {}))

    def finished(self, final: Record, result: EpisodeResult) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving and release both ports (also when the run never started)."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5 * POLL_MS / 1000)
            self._thread = None
        else:
            self._zctx.destroy(linger=0)

    # -- the server thread -----------------------------------------------------------------------
    def _serve(self) -> None:
        zmq = need("zmq")
        try:
            while not self._stop.is_set():
                if not self._rep.poll(POLL_MS, zmq.POLLIN):
                    continue
                parts = self._rep.recv_multipart()
                self.last_request = time.monotonic()
                self.requests += 1
                self._rep.send_multipart(self.reply(parts))
        finally:
            self._zctx.destroy(linger=0)

    def reply(self, parts: list[bytes]) -> list[bytes]:
        """The reply to one request, as BT.CPP's publisher gives it."""
        if not parts or len(parts[0]) != HEADER.size:
            return [b"error", b"wrong request header"]
        _, kind, request_id = HEADER.unpack(parts[0])  # the request's protocol is not checked
        head = HEADER.pack(PROTOCOL, kind, request_id) + self.uuid
        with self._lock:
            if self._tree is None or self._fold is None:
                return [b"error", b"the run has not started"]
            if kind == ord("T"):
                return [head, self._tree.xml.encode("utf-8")]
            if kind == ord("S"):
                return [head, self._fold.buffer(self._idle_marks)]
            if kind == ord("B"):
                if len(parts) != 2:
                    return [b"error", b"must be 2 parts message"]
                names = parts[1].decode("utf-8", "replace").split(";")
                # BT.CPP exports an empty blackboard as null, and no known name as a null reply
                board = {name: dict(self._blackboard) or None for name in names if name == self._tree_name}
                return [head, need("msgpack").packb(board or None)]
        return [b"error", b"Request not recognized"]  # BT.CPP's words (hooks, breakpoints, recording)
