"""`bt-grasp run TREE --live=foxglove`: the run served over Foxglove's WebSocket protocol on
127.0.0.1, with the channels an MCAP recording has (camera frames included), no ROS needed.

Why it waits for a viewer: a simulated episode is over in seconds, before anyone has opened
Foxglove, and a WebSocket server keeps nothing for clients that connect later. So the run starts
once a client has subscribed (or after `wait` seconds without one), and the tree's XML, sent at
the start, is sent again whenever a client subscribes to it later."""

from __future__ import annotations

import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any

from bt_grasp.errors import UserError
from bt_grasp.observe.extras import need
from bt_grasp.observers import Record, RunObserver, Tick

if TYPE_CHECKING:
    from bt_grasp.context import RunContext
    from bt_grasp.result import EpisodeResult

WAIT_SECONDS = 30.0  # how long a run waits for a first subscriber before it starts anyway
SETTLE_SECONDS = 0.5  # after the first subscription, for the client's others to arrive
DRAIN_SECONDS = 2.0  # after the decision, for the last messages to leave before the server stops


class _Listener:
    """Server callbacks (on the server's thread): who subscribed, and whether to resend the XML.
    Used mixed into the SDK's `foxglove.websocket.ServerListener` (see `_listener`), whose
    do-nothing methods answer the other callbacks (unsubscribe, disconnect, ...)."""

    def __init__(self) -> None:
        self.subscribed = threading.Event()
        self.xml_wanted = False

    def on_subscribe(self, client: Any, channel: Any) -> None:
        if channel.topic == "/behavior_tree/xml":
            self.xml_wanted = True
        self.subscribed.set()


def _listener(foxglove: Any) -> _Listener:
    """A _Listener that is a `foxglove.websocket.ServerListener` (the SDK is an optional extra,
    so the class is made when the server is)."""
    from foxglove.websocket import ServerListener

    return type("FoxgloveListener", (_Listener, ServerListener), {})()


class FoxgloveLive(RunObserver):
    """A Foxglove WebSocket server for one run, as its observer; `port` 0 picks a free port.
    The address is printed on `stream` when the server is up."""

    def __init__(self, port: int = 8765, stream: IO[str] | None = None, wait: float = WAIT_SECONDS,
                 host: str = "127.0.0.1") -> None:
        foxglove = need("foxglove")
        from bt_grasp.observe.foxglove_channels import FoxglovePublisher
        from bt_grasp.observe.foxglove_observer import FoxgloveObserver

        if not 0 <= port <= 65535:
            raise UserError(f"--port must be 0..65535, not {port}")
        self.wait = wait
        self.stream = stream or sys.stderr
        self.listener = _listener(foxglove)
        # held for the whole run: channels close when their context is collected
        self.context = context = foxglove.Context()
        try:
            self.server = foxglove.start_server(name="bt_grasp", host=host, port=port, context=context,
                                                server_listener=self.listener)
        except Exception as exc:  # the SDK's own error type: port taken, no permission
            raise UserError(f"cannot serve Foxglove on {host}:{port}: {exc} (choose another --port)") from None
        self.port = int(self.server.port)
        self.url = f"ws://{host}:{self.port}"
        self.publisher = FoxglovePublisher(context)
        self.observer = FoxgloveObserver(self.publisher, images=True)
        print(f"foxglove: serving {self.url} (Foxglove: Open connection -> Foxglove WebSocket); "
              f"the run starts when a client subscribes, or in {wait:g} s", file=self.stream, flush=True)
        # Here, before the episode: the wait for a viewer is no part of the episode's wall time.
        if self.listener.subscribed.wait(self.wait):
            time.sleep(SETTLE_SECONDS)

    def started(self, header: Record, ctx: RunContext) -> None:
        self.listener.xml_wanted = False
        self.observer.started(header, ctx)

    def ticked(self, tick: Tick) -> None:
        if self.listener.xml_wanted:
            self.listener.xml_wanted = False
            self.publisher.publish_xml()
        self.observer.ticked(tick)

    def finished(self, final: Record, result: EpisodeResult) -> None:
        self.observer.finished(final, result)
        time.sleep(DRAIN_SECONDS)

    def close(self) -> None:
        """Stop the server (again: nothing)."""
        if self.server is not None:
            self.server.stop()
            self.server = None
