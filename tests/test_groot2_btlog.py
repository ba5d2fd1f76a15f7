"""`bt-grasp trace convert run.jsonl -o run.btlog` writes BT.CPP's FileLogger2 log, which Groot2
replays: the magic, a version byte, the XML with a `_uid` on every node, the first timestamp and
one 9-byte record per status change, including the resets to IDLE BT.CPP logs."""

from __future__ import annotations

import re
import struct
import time
import xml.etree.ElementTree as ET

import pytest
from fakes import COMPARED, COMPARED_ANSWERS
from helpers import run_oracle, tree

from bt_grasp.cli import main
from bt_grasp.observe.groot2_btlog import MAGIC, read_btlog, transitions
from bt_grasp.observe.groot2_xml import BUILTIN, groot2_tree
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.structure import iter_structure
from bt_grasp.trace import Trace, read_trace

IDLE, RUNNING, SUCCESS, FAILURE = 0, 1, 2, 3

RETRYING = """
    tree: retrying
    budgets: {actions: 5, perception_streak: 3}
    root:
      selector:
        id: episode
        children:
          - sequence:
              id: main
              children: [retry: {id: attempts, attempts: 3, child: {grasp: {id: grasp}}}, finalize: {reason: held}]
          - wait_clarify: {reason: gave up}
"""


@pytest.fixture
def recorded(tmp_path):
    """A run of RETRYING (the grasp faults once, then holds) and its .btlog."""
    path = tmp_path / "run.jsonl"
    run_oracle(tree(RETRYING), ScriptedOracle({"grasp": ["fault", "done"]}), trace=str(path))
    out = tmp_path / "run.btlog"
    assert main(["trace", "convert", str(path), "-o", str(out)]) == 0
    return read_trace(path), out


def _trace(structure: dict, *ticks: list[tuple[str, str]]) -> Trace:
    return Trace({"tree": "t", "structure": structure},
                 [{"tick": i, "clock": 0.5 * i, "visited": [list(v) for v in vis]}
                  for i, vis in enumerate(ticks, 1)], None)


def _leaf(nid: str) -> dict:
    return {"id": nid, "type": "grasp", "params": {}}


def test_the_file_opens_with_the_magic_a_version_byte_and_the_xml_length():
    data_trace = _trace({"id": "s", "type": "sequence", "params": {}, "children": [_leaf("a")]},
                        [("a", "SUCCESS"), ("s", "SUCCESS")])
    from bt_grasp.observe.groot2_btlog import encode

    xml, records = transitions(data_trace)
    data = encode(xml, records, first_timestamp_us=1_700_000_000_000_000)
    assert data[:18] == b"BTCPP4-FileLogger2" == MAGIC and data[18] == 1
    (length,) = struct.unpack_from("<i", data, 19)
    assert data[23:23 + length].decode() == xml
    assert struct.unpack_from("<q", data, 23 + length) == (1_700_000_000_000_000,)
    assert len(data) == 23 + length + 8 + 9 * len(records)


def test_a_sequence_runs_before_its_children_resets_them_when_done_then_the_root_is_reset():
    seq = {"id": "s", "type": "sequence", "params": {}, "children": [_leaf("a"), _leaf("b")]}
    _, records = transitions(_trace(seq, [("a", "SUCCESS"), ("b", "RUNNING"), ("s", "RUNNING")],
                                     [("b", "SUCCESS"), ("s", "SUCCESS")]))
    s, a, b = 1, 2, 3  # depth-first, parent first
    assert records == [(500_000, s, RUNNING), (500_000, a, SUCCESS), (500_000, b, RUNNING),
                       (1_000_000, b, SUCCESS),
                       (1_000_000, a, IDLE), (1_000_000, b, IDLE), (1_000_000, s, SUCCESS),
                       (1_000_000, s, IDLE)]


def test_a_retry_resets_its_failed_child_before_ticking_it_again():
    retry = {"id": "r", "type": "retry", "params": {"attempts": 2}, "children": [_leaf("g")]}
    _, records = transitions(_trace(retry, [("g", "FAILURE"), ("r", "RUNNING")],
                                    [("g", "SUCCESS"), ("r", "SUCCESS")]))
    r, g = 1, 2
    assert [(u, s) for _, u, s in records] == [(r, RUNNING), (g, FAILURE), (g, IDLE),
                                               (g, SUCCESS), (g, IDLE), (r, SUCCESS), (r, IDLE)]


def test_a_running_node_no_longer_ticked_was_halted_and_is_logged_idle():
    par = {"id": "p", "type": "reactive_selector", "params": {},
           "children": [{"id": "c", "type": "label_is", "params": {}}, _leaf("m")]}
    _, records = transitions(_trace(par, [("c", "FAILURE"), ("m", "RUNNING"), ("p", "RUNNING")],
                                     [("c", "SUCCESS"), ("p", "RUNNING")],
                                     [("c", "SUCCESS"), ("p", "RUNNING")]))
    c, m = 2, 3  # p is 1
    assert [(u, s) for t, u, s in records if t == 1_000_000] == [(c, SUCCESS), (m, IDLE)]
    assert not [r for r in records if r[0] == 1_500_000], "nothing changed in tick 3: no record"


def test_xml_uids_are_the_traces_node_ids_in_depth_first_order_with_models(recorded):
    trace, out = recorded
    log = read_btlog(out)
    root = ET.fromstring(log.xml)
    assert root.get("BTCPP_format") == "4"
    (bt,) = root.findall("BehaviorTree")
    nodes = list(bt.iter())[1:]
    assert [int(n.get("_uid")) for n in nodes] == list(range(1, len(nodes) + 1))
    ids = [node["id"] for _, _, node in iter_structure(trace.header["structure"])]
    assert [n.get("name") for n in nodes] == ids
    models = {el.get("ID"): el.tag for el in root.find("TreeNodesModel")}
    custom = {n.tag for n in nodes} - BUILTIN
    assert custom == set(models) and custom >= {"grasp", "finalize", "wait_clarify"}
    assert models["grasp"] == "Action"


def test_one_record_per_status_change_at_monotonic_logical_times(recorded):
    trace, out = recorded
    log = read_btlog(out)
    assert log.version == 1 and log.first_timestamp_us == 0
    times = [t for t, _, _ in log.records]
    assert times == sorted(times)
    clock_us = {round(t["clock"] * 1e6) for t in trace.ticks}
    assert set(times) <= clock_us, "each transition is stamped with its tick's logical clock"
    state: dict[int, int] = {}
    for _, uid, status in log.records:
        assert state.get(uid, IDLE) != status, "a record is always a change of its node's status"
        state[uid] = status
    assert set(state.values()) == {IDLE}, "the finished tree is reset, as BT.CPP resets its root"
    uids = groot2_tree(trace.header["structure"]).uids
    by_time: dict[int, list[tuple[int, int]]] = {}
    for t, uid, status in log.records:
        by_time.setdefault(t, []).append((uid, status))
    code = {"RUNNING": RUNNING, "SUCCESS": SUCCESS, "FAILURE": FAILURE}
    for tick in trace.ticks:
        logged = by_time.get(round(tick["clock"] * 1e6), [])
        for nid, status in tick["visited"]:
            if status != "RUNNING":  # a finished node's status is logged in the tick it finished
                assert (uids[nid], code[status]) in logged, (tick["tick"], nid, status)


def test_a_subtree_log_holds_only_that_subtree(recorded):
    trace, _ = recorded
    from bt_grasp.observe.groot2_btlog import transitions as tr

    xml, records = tr(trace, subtree="attempts")
    names = [n.get("name") for n in list(ET.fromstring(xml).find("BehaviorTree").iter())[1:]]
    assert names == ["attempts", "grasp"]
    assert {uid for _, uid, _ in records} == {1, 2}


def test_converting_to_an_unknown_suffix_or_a_missing_trace_is_one_line(tmp_path, capsys):
    assert main(["trace", "convert", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "x.btlog")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("none.jsonl: trace file not found") and "\n" not in err


def test_btcpp_logs_the_same_file_for_the_same_run_where_its_binding_is_installed(tmp_path):
    """BT.CPP's own FileLogger2 (behaviortreepy) on the tree we write, its conditions answering as
    ours did: the same layout, UIDs and transitions; only the timestamps differ."""
    bt = pytest.importorskip("behaviortreepy")
    path = tmp_path / "ours.jsonl"
    run_oracle(tree(COMPARED), ScriptedOracle({}), trace=str(path))  # goal "red mug"
    assert main(["trace", "convert", str(path), "-o", str(tmp_path / "ours.btlog")]) == 0
    ours = read_btlog(tmp_path / "ours.btlog")
    factory = bt.BehaviorTreeFactory()
    factory.register_simple_condition(
        "label_is", lambda node: getattr(bt.NodeStatus, COMPARED_ANSWERS[node.name()]))
    portless = re.sub(r' (key|label)="[^"]*"', "", ours.xml)  # the binding's nodes have no ports
    btcpp_tree = factory.create_tree_from_text(re.sub(r"<TreeNodesModel>.*</TreeNodesModel>", "",
                                                      portless, flags=re.S))
    logger = bt.FileLogger(btcpp_tree, str(tmp_path / "btcpp.btlog"))
    assert btcpp_tree.tick_while_running() == bt.NodeStatus.SUCCESS
    theirs, deadline = None, time.monotonic() + 5
    while time.monotonic() < deadline:  # its writer thread appends what was queued every 10 ms
        time.sleep(0.05)
        theirs = read_btlog(tmp_path / "btcpp.btlog")
        if len(theirs.records) >= len(ours.records):
            break
    del logger
    assert theirs is not None
    assert theirs.version == ours.version == 1
    uid_of = lambda xml: {el.get("name"): el.get("_uid") for el in ET.fromstring(xml).iter()  # noqa: E731
                          if el.get("_uid")}
    assert uid_of(theirs.xml) == uid_of(ours.xml)
    assert [r[1:] for r in theirs.records] == [r[1:] for r in ours.records]


def test_convert_subtree_for_groot2s_twenty_node_limit_and_an_unknown_node_is_one_line(recorded, capsys):
    trace, out = recorded
    path = out.with_name("run.jsonl")
    part = out.with_name("part.btlog")
    assert main(["trace", "convert", str(path), "-o", str(part), "--subtree", "attempts"]) == 0
    assert [el.get("name") for el in ET.fromstring(read_btlog(part).xml).iter() if el.get("_uid")] == \
        ["attempts", "grasp"]
    capsys.readouterr()
    assert main(["trace", "convert", str(path), "-o", str(part), "--subtree", "attempt"]) == 2
    assert capsys.readouterr().err == f"{path}: no node 'attempt' in this tree (did you mean attempts?)\n"
