"""`bt-grasp run TREE --groot2 [PORT]` answers Groot2's monitor as BT.CPP's Groot2Publisher does:
ZMQ REP on PORT (PUB on PORT+1), a 6-byte request header answered with the same header and a
16-byte tree UUID, FULLTREE / STATUS / BLACKBOARD payloads, errors as two parts."""

from __future__ import annotations

import queue
import re
import socket
import struct
import threading
import xml.etree.ElementTree as ET

import pytest
from fakes import BUSY, COMPARED, COMPARED_ANSWERS
from helpers import tree

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.observers import RunObserver
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.runner import Runner
from bt_grasp.tick_budget import episode_limits

zmq = pytest.importorskip("zmq")
msgpack = pytest.importorskip("msgpack")

from bt_grasp.observe.groot2_live import Groot2Publisher  # noqa: E402

TIMEOUT_MS = 3000


def free_ports() -> int:
    """A port P with P and P+1 free on localhost (the REP and PUB sockets)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 1))
        except OSError:
            continue
        return port
    raise RuntimeError("no two consecutive free ports")


class Gate(RunObserver):
    """Holds the run after each tick until the test has looked at it."""

    def __init__(self) -> None:
        self.reached: queue.Queue[int] = queue.Queue()
        self.go = threading.Semaphore(0)

    def ticked(self, tick) -> None:
        self.reached.put(tick.tick)
        assert self.go.acquire(timeout=10), "the test stopped polling"


def request(sock, kind: str, request_id: int, *extra: bytes | None, protocol: int = 2) -> list[bytes]:
    """One request and its reply; a None part is left out (a request missing its second part)."""
    sock.send_multipart([struct.pack("<BBI", protocol, ord(kind), request_id), *(e for e in extra if e is not None)])
    return sock.recv_multipart()


def status_entries(buffer: bytes) -> dict[int, int]:
    assert len(buffer) % 3 == 0
    return {struct.unpack_from("<H", buffer, i)[0]: buffer[i + 2] for i in range(0, len(buffer), 3)}


def context(spec, goal: str = "mug") -> RunContext:
    """A run of `spec` with no robot (the leaves' outcomes from an empty script)."""
    registry = spec.registry or default_registry()
    return RunContext(registry=registry, limits=episode_limits(spec, registry), oracle=ScriptedOracle({}),
                      blackboard=Blackboard({"goal.object": goal}))


@pytest.fixture
def client():
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.RCVTIMEO, TIMEOUT_MS)
    sock.setsockopt(zmq.LINGER, 0)
    yield sock
    ctx.destroy(linger=0)


def test_groot2_sees_the_tree_and_statuses_change_tick_by_tick(client):
    port = free_ports()
    publisher, gate = Groot2Publisher(port, host="127.0.0.1"), Gate()
    spec = tree(BUSY)
    ctx = context(spec)
    results = []
    run = threading.Thread(target=lambda: results.append(
        Runner(spec, ctx, observers=[publisher, gate]).run()), daemon=True)
    run.start()
    client.connect(f"tcp://127.0.0.1:{port}")
    statuses, uuid, xml = [], None, ""
    while True:
        try:
            tick = gate.reached.get(timeout=10)
        except queue.Empty:
            pytest.fail("the run never ticked")
        if xml == "":
            head, body = request(client, "T", 7)
            assert head[:6] == struct.pack("<BBI", 2, ord("T"), 7) and len(head) == 22
            uuid, xml = head[6:], body.decode()
        head, buffer = request(client, "S", 100 + tick)
        assert head[6:] == uuid, "one tree UUID for the publisher's life"
        statuses.append(status_entries(buffer))
        gate.go.release()
        run.join(timeout=0.2)
        if not run.is_alive():
            break
    assert results and results[0].decision.value == "FINALIZE"
    nodes = {int(el.get("_uid")): el.get("name") for el in ET.fromstring(xml).iter() if el.get("_uid")}
    assert all(set(s) == set(nodes) for s in statuses), "STATUS lists exactly the FULLTREE uids"
    move = next(uid for uid, name in nodes.items() if name == "move")
    assert [s[move] for s in statuses] == [1, 1, 1, 10 + 2], \
        "RUNNING three ticks, then reset to IDLE after its SUCCESS (10 + SUCCESS)"
    assert len({tuple(sorted(s.items())) for s in statuses}) > 1
    root = min(nodes)
    assert statuses[0][root] == 1 and statuses[-1][root] == 12


def test_blackboard_errors_and_the_ports_released_at_the_end(client):
    port = free_ports()
    publisher = Groot2Publisher(port, host="127.0.0.1")
    spec = tree(BUSY)
    ctx = context(spec)

    class Ask(RunObserver):
        """Asks Groot2's other questions in the middle of the run."""

        answers: list[list[bytes]] = []

        def ticked(self, tick) -> None:
            if tick.tick == 2:
                client.connect(f"tcp://127.0.0.1:{port}")
                self.answers.append(request(client, "B", 1, f"Other;{spec.name}".encode()))
                self.answers.append(request(client, "B", 4, b"ROOT"))
                client.send_multipart([struct.pack("<BBI", 2, ord("B"), 5)])  # no names part
                self.answers.append(client.recv_multipart())
                self.answers.append(request(client, "Z", 2))
                client.send_multipart([b"\x02S"])  # a 2-byte header
                self.answers.append(client.recv_multipart())
                client.send_multipart([struct.pack("<BBI", 1, ord("S"), 3)])  # protocol 1: answered
                self.answers.append(client.recv_multipart())                 # as protocol 2, like BT.CPP

    ask = Ask()
    Runner(spec, ctx, observers=[publisher, ask]).run()
    board, root, one_part, unknown, short, old = ask.answers
    assert len(board[0]) == 22
    entries = msgpack.unpackb(board[1])
    assert set(entries) == {spec.name}, "the run's one blackboard answers to the tree's name, as in BT.CPP"
    assert entries[spec.name]["goal.object"] == "mug" and entries[spec.name]["scene.outcome"] == "found"
    assert msgpack.unpackb(root[1]) is None, "no tree is called ROOT: nil, as BT.CPP answers"
    assert one_part == [b"error", b"must be 2 parts message"]
    assert unknown == [b"error", b"Request not recognized"]
    assert short == [b"error", b"wrong request header"]
    assert old[0][:6] == struct.pack("<BBI", 2, ord("S"), 3) and len(old[1]) % 3 == 0
    assert publisher.requests == 6 and publisher.last_request is not None
    again = Groot2Publisher(port, host="127.0.0.1")  # the run's end released both ports
    again.close()


def test_a_port_in_use_is_one_line_before_the_run():
    port = free_ports()
    first = Groot2Publisher(port, host="127.0.0.1")
    try:
        from bt_grasp.errors import UserError

        with pytest.raises(UserError, match=r"cannot serve Groot2 on ports .*choose other ports"):
            Groot2Publisher(port, host="127.0.0.1")
    finally:
        first.close()


def test_run_takes_groot2_with_an_optional_port():
    from bt_grasp.cli import build_parser

    parse = build_parser("run").parse_args
    assert parse(["run", "clutter", "--groot2"]).groot2 == 1667
    assert parse(["run", "clutter", "--groot2", "1700"]).groot2 == 1700
    assert parse(["run", "clutter"]).groot2 is None


def test_a_subtree_publisher_shows_only_that_part_and_an_unknown_node_is_named(client):
    port = free_ports()
    spec = tree(BUSY)
    seen: list[list[bytes]] = []

    class Ask(RunObserver):
        def ticked(self, tick) -> None:
            if tick.tick == 1:
                client.connect(f"tcp://127.0.0.1:{port}")
                seen.append(request(client, "T", 1))
                seen.append(request(client, "S", 2))

    notes: list[str] = []
    Runner(spec, context(spec), observers=[
        Groot2Publisher(port, subtree="move", host="127.0.0.1", notify=notes.append), Ask()]).run()
    assert notes == [f"groot2: 1 node on ports {port} and {port + 1}"]
    (_, xml), (_, buffer) = seen
    assert [el.get("name") for el in ET.fromstring(xml).iter() if el.get("_uid")] == ["move"]
    assert status_entries(buffer) == {1: 1}
    from bt_grasp.errors import UserError

    with pytest.raises(UserError, match=r"^--groot2-subtree: no node 'mov' in this tree \(did you mean move\?\)"):
        Runner(spec, context(spec), observers=[Groot2Publisher(port, subtree="mov", host="127.0.0.1")]).run()


def test_btcpp_answers_alike_for_the_same_tree_in_the_same_state(client):
    """BT.CPP 4.8's own Groot2Publisher (behaviortreepy) and ours, asked the same requests after
    the same one-tick run: the same parts, header layout, UIDs and status bytes."""
    bt = pytest.importorskip("behaviortreepy")
    if not getattr(bt, "GROOT2_AVAILABLE", False):
        pytest.skip("behaviortreepy built without Groot2")
    ours_port, theirs_port = free_ports(), free_ports()
    spec = tree(COMPARED)
    ours: dict[str, list[bytes]] = {}

    class Ask(RunObserver):
        def ticked(self, tick) -> None:
            client.connect(f"tcp://127.0.0.1:{ours_port}")
            ours.update(T=request(client, "T", 1), S=request(client, "S", 2), Z=request(client, "Z", 3),
                        R=request(client, "B", 4, b"ROOT;Other"), B=request(client, "B", 5, spec.name.encode()),
                        P=request(client, "S", 6, protocol=1), O=request(client, "B", 7, None))
            client.disconnect(f"tcp://127.0.0.1:{ours_port}")

    Runner(spec, context(spec, goal="red mug"),
           observers=[Groot2Publisher(ours_port, host="127.0.0.1"), Ask()]).run()
    from bt_grasp.observe.groot2_xml import groot2_tree
    from bt_grasp.structure import structure

    factory = bt.BehaviorTreeFactory()
    factory.register_simple_condition(
        "label_is", lambda node: getattr(bt.NodeStatus, COMPARED_ANSWERS[node.name()]))
    xml = groot2_tree(structure(spec.root), spec.name).xml
    portless = re.sub(r"<TreeNodesModel>.*</TreeNodesModel>", "", re.sub(r' (key|label)="[^"]*"', "", xml),
                      flags=re.S)
    btcpp_tree = factory.create_tree_from_text(portless)
    publisher = bt.Groot2Publisher(btcpp_tree, theirs_port)
    btcpp_tree.tick_while_running()
    client.connect(f"tcp://127.0.0.1:{theirs_port}")
    theirs = {"T": request(client, "T", 1), "S": request(client, "S", 2), "Z": request(client, "Z", 3),
              "R": request(client, "B", 4, b"ROOT;Other"), "B": request(client, "B", 5, spec.name.encode()),
              "P": request(client, "S", 6, protocol=1), "O": request(client, "B", 7, None)}
    del publisher
    for kind in "TSZ":
        assert len(ours[kind]) == len(theirs[kind]) == 2
    assert ours["R"][1] == theirs["R"][1] == b"\xc0", "ROOT names no tree: nil"
    assert set(msgpack.unpackb(ours["B"][1])) == set(msgpack.unpackb(theirs["B"][1])) == {spec.name}
    assert ours["P"][0][:6] == theirs["P"][0][:6] == struct.pack("<BBI", 2, ord("S"), 6)
    assert ours["O"] == theirs["O"] == [b"error", b"must be 2 parts message"]
    for kind in "TS":
        assert ours[kind][0][:6] == theirs[kind][0][:6] and len(ours[kind][0]) == len(theirs[kind][0]) == 22
    uid_of = lambda text: {el.get("name"): el.get("_uid")  # noqa: E731
                           for el in ET.fromstring(text).iter() if el.get("_uid")}
    assert uid_of(ours["T"][1]) == uid_of(theirs["T"][1])
    assert ours["S"][1] == theirs["S"][1], "every node reset to IDLE, sent as 10 + its last status"
    assert ours["Z"] == theirs["Z"]


def test_a_tree_over_twenty_nodes_is_served_whole_with_a_hint_to_show_a_part():
    structure = {"id": "s", "type": "sequence", "params": {},
                 "children": [{"id": f"n{i}", "type": "grasp", "params": {}} for i in range(25)]}
    notes: list[str] = []
    publisher = Groot2Publisher(free_ports(), host="127.0.0.1", notify=notes.append)
    try:
        publisher.started({"tree": "wide", "structure": structure}, None)
    finally:
        publisher.close()
    assert notes == [f"groot2: 26 nodes on ports {publisher.port} and {publisher.port + 1}; Groot2's free "
                     "edition draws 20: show a part with --groot2-subtree NODE"]
