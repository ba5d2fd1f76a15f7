"""`dot --tick N` tells a leaf still running at tick N (its own colour, how long it has run) from a
composite that is RUNNING only because a descendant is."""

from __future__ import annotations

import pydot
from fakes import BUSY, LIFT_WITH_DEADLINE, FakeStreamingRobot
from helpers import run_driver, run_oracle, tree

from bt_grasp.cli import main
from bt_grasp.dot import RUNNING_LEAF, STATUS_COLOURS
from bt_grasp.oracles import ScriptedOracle
from bt_grasp.trace import read_trace


def _nodes(text: str) -> dict[str, pydot.Node]:
    graph = pydot.graph_from_dot_data(text)[0]
    nodes = {n.get_name().strip('"'): n for n in graph.get_nodes()}
    for sub in graph.get_subgraphs():
        nodes.update({n.get_name().strip('"'): n for n in sub.get_nodes()})
    return nodes


def test_a_running_leaf_has_its_own_colour_and_its_running_time(tmp_path, capsys):
    path = tmp_path / "busy.jsonl"
    run_oracle(tree(BUSY), ScriptedOracle({}), trace=str(path))
    assert main(["dot", str(path), "--tick", "2"]) == 0
    nodes = _nodes(capsys.readouterr().out)
    colour = {k: n.get_fillcolor().strip('"') for k, n in nodes.items() if n.get_fillcolor()}
    assert colour["move"] == STATUS_COLOURS[RUNNING_LEAF] != STATUS_COLOURS["RUNNING"]
    clock2 = read_trace(path).ticks[1]["clock"]  # it started in tick 1, at clock 0
    assert f"running {clock2:.2f} s, 2 ticks" in nodes["move"].get_label()
    root = next(k for k in nodes if k.startswith("sequence"))
    assert colour[root] == STATUS_COLOURS["RUNNING"]
    assert f'BGCOLOR="{STATUS_COLOURS[RUNNING_LEAF]}"' in nodes["status legend"].get_label()
    assert ">RUNNING leaf (running for: in its label)<" in nodes["status legend"].get_label()
    assert main(["dot", str(path), "--tick", "4"]) == 0
    after = _nodes(capsys.readouterr().out)
    assert after["move"].get_fillcolor().strip('"') == STATUS_COLOURS["SUCCESS"]
    assert "running" not in after["move"].get_label()


def test_a_leaf_halted_at_a_tick_is_not_drawn_running(tmp_path, capsys):
    path = tmp_path / "halted.jsonl"
    run_driver(LIFT_WITH_DEADLINE, FakeStreamingRobot({"lift": 100}), trace=str(path))
    last = read_trace(path).ticks[-1]["tick"]
    assert main(["dot", str(path), "--tick", str(last)]) == 0
    up = _nodes(capsys.readouterr().out)["up"]
    assert up.get_fillcolor().strip('"') == STATUS_COLOURS[None]
    assert "halted: timeout" in up.get_label() and "running" not in up.get_label()
