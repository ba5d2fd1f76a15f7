"""DOT views parse with real Graphviz, colour nodes by status and carry a legend of the colours."""

from __future__ import annotations

import shutil
import subprocess

import pydot
import pytest
from helpers import ROOT

from bt_grasp.cli import main
from bt_grasp.dot import LEGEND_NODE, STATUS_COLOURS
from bt_grasp.trace import read_trace

needs_graphviz = pytest.mark.skipif(shutil.which("dot") is None,
                                    reason="Graphviz 'dot' not installed (apt-get install graphviz)")


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("dot") / "run.jsonl"
    assert main(["run", str(ROOT / "trees" / "clutter.yaml"), "--trace", str(path), "--image-size", "256"]) == 0
    return path


def _graphviz_ok(text: str) -> None:
    proc = subprocess.run(["dot", "-Tsvg"], input=text.encode(), capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"<svg" in proc.stdout


def _nodes(text: str) -> dict[str, pydot.Node]:
    graph = pydot.graph_from_dot_data(text)[0]
    return {n.get_name().strip('"'): n for n in graph.get_nodes() if n.get_name() not in ("node", "edge")}


@needs_graphviz
def test_tree_structure_renders_with_graphviz(capsys):
    assert main(["dot", str(ROOT / "trees" / "clutter.yaml")]) == 0
    text = capsys.readouterr().out
    _graphviz_ok(text)
    nodes = _nodes(text)
    assert {"survey", "attempts", "route_label", "remove_occluder/take_occluder"} <= set(nodes)


@needs_graphviz
def test_a_tick_is_coloured_by_status_and_labelled_with_the_watchdog_label(trace_path, capsys):
    # the grasp runs across ticks: its label is drawn in the tick its call ends in
    ends = [t["tick"] for t in read_trace(trace_path).ticks
            if any(e["node"] == "grasp" for e in t["events"])]
    assert ends
    assert main(["dot", str(trace_path), "--tick", str(ends[0])]) == 0
    text = capsys.readouterr().out
    _graphviz_ok(text)
    nodes = _nodes(text)
    assert nodes["grasp"].get_fillcolor().strip('"') in (STATUS_COLOURS["SUCCESS"], STATUS_COLOURS["FAILURE"])
    assert nodes["give_up"].get_fillcolor().strip('"') == "#d9d9d9"     # not visited grey
    assert "label: " in nodes["grasp"].get_label()


@needs_graphviz
def test_summary_and_rendered_svg(trace_path, tmp_path, capsys):
    out = tmp_path / "summary.svg"
    assert main(["dot", str(trace_path), "--summary", "-o", str(out)]) == 0
    assert out.read_bytes().lstrip().startswith(b"<?xml") or b"<svg" in out.read_bytes()
    assert main(["dot", str(trace_path), "--summary"]) == 0
    nodes = _nodes(capsys.readouterr().out)
    assert "visits 1" in nodes["survey"].get_label()


def test_unknown_tick_and_format_are_one_line_errors(trace_path, tmp_path, capsys):
    assert main(["dot", str(trace_path), "--tick", "999"]) == 2
    assert "tick 999 is not in this trace" in capsys.readouterr().err
    assert main(["dot", str(trace_path), "-o", str(tmp_path / "x.gif")]) == 2


def _legend(text: str) -> str:
    graph = pydot.graph_from_dot_data(text)[0]
    legend = [n for sub in graph.get_subgraphs() for n in sub.get_nodes()
              if n.get_name().strip('"') == LEGEND_NODE]
    assert len(legend) == 1, "exactly one legend"
    return legend[0].get_label()


@pytest.mark.parametrize("view", ["tree", "tick", "summary"])
def test_every_view_has_a_legend_naming_each_status_colour(view, trace_path, capsys):
    args = {"tree": ["clutter"], "tick": [str(trace_path), "--tick", "1"],
            "summary": [str(trace_path), "--summary"]}[view]
    assert main(["dot", *args]) == 0
    text = capsys.readouterr().out
    label = _legend(text)
    for status, name in (("SUCCESS", "SUCCESS"), ("FAILURE", "FAILURE"), ("RUNNING", "RUNNING"),
                         (None, "not ticked")):
        assert f'BGCOLOR="{STATUS_COLOURS[status]}"' in label and f">{name}<" in label
    assert ("in a trace view" in label) is (view == "tree")
    if shutil.which("dot"):
        _graphviz_ok(text)


def test_labels_hold_every_set_port_value_whole_and_no_unset_one(capsys):
    from bt_grasp.spec.loader import load_tree
    from bt_grasp.structure import iter_structure, structure

    assert main(["dot", "clutter"]) == 0
    text = capsys.readouterr().out
    assert "=None" not in text
    labels = {name: node.get_label() for name, node in _nodes(text).items()}
    spec = load_tree(ROOT / "trees" / "clutter.yaml")
    for _, _, node in iter_structure(structure(spec.root)):
        for key, value in node.get("params", {}).items():
            if value is not None and key != "memory" and not isinstance(value, (dict, list)):
                assert f"{key}={value}".replace('"', "'") in labels[node["id"]], (node["id"], key)


def test_dot_o_keeps_an_existing_file_unless_forced(tmp_path, capsys):
    out = tmp_path / "tree.dot"
    out.write_text("mine")
    assert main(["dot", "open_loop", "-o", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"{out}: exists; refusing to overwrite it (use --force)"
    assert out.read_text() == "mine"
    assert main(["dot", "open_loop", "-o", str(out), "--force"]) == 0 and out.read_text().startswith("digraph")
