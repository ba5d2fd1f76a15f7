"""Graphviz DOT views: a tree's structure, one tick of a trace, or a whole run's summary."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pydot

from bt_grasp.errors import UserError
from bt_grasp.live.state import state_at
from bt_grasp.structure import iter_structure
from bt_grasp.trace_reader import Trace, clock_of

RUNNING_LEAF = "RUNNING leaf"  # a leaf whose work goes on across ticks (a motion under way)
STATUS_COLOURS = {"SUCCESS": "#8fd18f", "FAILURE": "#f08c8c", "RUNNING": "#f5e27a",
                  RUNNING_LEAF: "#f5a142", "INVALID": "#d9d9d9", None: "#d9d9d9"}
# What the legend says of each colour (INVALID and None share grey: the node was not ticked).
LEGEND = (("SUCCESS", "SUCCESS"), ("FAILURE", "FAILURE"), ("RUNNING", "RUNNING"),
          (RUNNING_LEAF, "RUNNING leaf (running for: in its label)"), (None, "not ticked"))
LEGEND_NODE = "status legend"
SHAPES = {"sequence": ("box", "→"), "selector": ("octagon", "?"), "parallel": ("parallelogram", "⇉"),
          "switch": ("diamond", "switch")}


LABEL_WIDTH = 48  # characters per label line; lines break between port values, never inside one


def _label(node: dict[str, Any], extra: str = "") -> str:
    """Id, type and every set port value (an unset one, None, is left out), whole."""
    kind = node["type"]
    items = [f"{k}={v}" for k, v in node.get("params", {}).items()
             if k not in ("memory",) and v is not None and not isinstance(v, (dict, list))]
    head = SHAPES.get(kind, (None, kind))[1] if kind in SHAPES else kind
    text = f"{node['id']}\\n[{head}]"
    for line in _wrapped(items):
        text += f"\\n{line}"
    if extra:
        text += f"\\n{extra}"
    return text


def _wrapped(items: list[str]) -> list[str]:
    """'a=1, b=2' lines of at most LABEL_WIDTH characters (a longer single item keeps its own line)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= LABEL_WIDTH:
            lines[-1] += f", {item}"
        else:
            lines.append(item)
    return lines


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def build_graph(structure: dict[str, Any], status: dict[str, str] | None = None,
                notes: dict[str, str] | None = None, title: str = "") -> pydot.Dot:
    """One graph node per tree node; edges labelled with switch cases."""
    graph = pydot.Dot("bt", graph_type="digraph", rankdir="TB")
    graph.set_node_defaults(fontname="Helvetica", fontsize="10", style="filled")
    if title:
        graph.set_label(_quote(title))  # type: ignore[attr-defined]  # pydot makes set_<attr> at run time
    graph.add_subgraph(_legend(status is not None))
    for parent, edge_label, node in iter_structure(structure):
        nid = _quote(node["id"])
        colour = STATUS_COLOURS.get((status or {}).get(node["id"]), STATUS_COLOURS[None])
        shape = SHAPES.get(node["type"], ("box" if node["type"] in ("retry", "repeat", "timeout", "budget",
                                                                    "inverter", "force_success",
                                                                    "force_failure") else "ellipse",))[0]
        graph.add_node(pydot.Node(nid, label=_quote(_label(node, (notes or {}).get(node["id"], ""))),
                                  shape=shape, fillcolor=_quote(colour)))
        if parent is not None:
            edge = pydot.Edge(_quote(parent["id"]), nid)
            if edge_label:
                edge.set_label(_quote(edge_label))  # type: ignore[attr-defined]  # (as above)
            graph.add_edge(edge)
    return graph


def _legend(with_status: bool) -> pydot.Subgraph:
    """A boxed table of the status colours, in a cluster of its own so it never joins the tree.

    Without statuses (a tree file) every node is grey, and the legend says what colours a trace
    would show."""
    rows = "".join(f'<TR><TD BGCOLOR="{STATUS_COLOURS[key]}" WIDTH="18"> </TD>'
                   f'<TD ALIGN="LEFT">{text}</TD></TR>' for key, text in LEGEND)
    head = "status" if with_status else "status (in a trace view)"
    table = (f'<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">'
             f'<TR><TD COLSPAN="2"><B>{head}</B></TD></TR>{rows}</TABLE>>')
    cluster = pydot.Cluster("legend", label='""', style="invis")
    cluster.add_node(pydot.Node(_quote(LEGEND_NODE), shape="plaintext", style="solid", label=table))
    return cluster  # type: ignore[return-value]  # pydot's hints: a Cluster is a Graph, yet DOT takes it as a subgraph


def _labels_in(tick: dict[str, Any]) -> dict[str, str]:
    """node id -> Watchdog label produced in this tick."""
    out: dict[str, str] = {}
    for event in tick.get("events", []):
        if event.get("watchdog_label"):
            out[event["node"]] = event["watchdog_label"]
    return out


def tick_graph(trace: Trace, tick: int) -> pydot.Dot:
    ticks = {t["tick"]: t for t in trace.ticks}
    if tick not in ticks:
        last = max(ticks) if ticks else 0
        raise UserError(f"tick {tick} is not in this trace (it has ticks 1..{last}; use --tick N)")
    rec = ticks[tick]
    state = state_at(trace.header, trace.ticks, tick)
    status = dict(state.status)  # as visited, but a leaf halted in this tick is not RUNNING
    notes = {k: f"label: {v}" for k, v in _labels_in(rec).items()}
    for node, reason in state.halted.items():
        notes[node] = f"{notes[node]}\\nhalted: {reason}" if node in notes else f"halted: {reason}"
    for node, (seconds, n) in state.running_leaves().items():
        status[node] = RUNNING_LEAF
        running = f"running {seconds:.2f} s, {n} tick{'s' if n != 1 else ''}"
        notes[node] = f"{notes[node]}\\n{running}" if node in notes else running
    return build_graph(trace.header["structure"], status, notes,
                       title=f"{trace.header.get('tree')} tick {tick} (clock {clock_of(rec):.2f} s)")


def summary_graph(trace: Trace) -> pydot.Dot:
    visits: Counter = Counter()
    final: dict[str, str] = {}
    labels: dict[str, set[str]] = defaultdict(set)
    for rec in trace.ticks:
        for node_id, st in rec["visited"]:
            visits[node_id] += 1
            final[node_id] = st
        for node_id, label in _labels_in(rec).items():
            labels[node_id].add(label)
    notes = {}
    for node_id, n in visits.items():
        note = f"visits {n}"
        if labels.get(node_id):
            note += f"; labels {','.join(sorted(labels[node_id]))}"
        notes[node_id] = note
    end = trace.final or {}
    title = f"{trace.header.get('tree')}: {end.get('decision', 'INCOMPLETE (run killed)')}"
    if end.get("reason"):
        title += f" - {end['reason']}"
    return build_graph(trace.header["structure"], final, notes, title=title)


def write_graph(graph: pydot.Dot, out: str | None, force: bool = False) -> str:
    """Write DOT text, or render .svg/.png with Graphviz. Returns the DOT text. An existing file
    is kept unless `force` (like `bt-grasp export`)."""
    text = graph.to_string()
    if out not in (None, "-") and Path(out).exists() and not force:
        raise UserError("exists; refusing to overwrite it (use --force)", file=out)
    if out is None or out.endswith(".dot") or out == "-":
        if out and out != "-":
            Path(out).write_text(text)
        return text
    fmt = Path(out).suffix.lstrip(".").lower()
    if fmt not in ("svg", "png", "pdf"):
        raise UserError(f"cannot render '.{fmt}': use -o FILE.dot, .svg, .png or .pdf", file=out)
    exe = shutil.which("dot")
    if exe is None:
        raise UserError("Graphviz 'dot' is not installed: install graphviz (apt-get install graphviz)"
                        " or write DOT with -o FILE.dot", file=out)
    proc = subprocess.run([exe, f"-T{fmt}", "-o", out], input=text.encode(), capture_output=True)
    if proc.returncode != 0:
        raise UserError(f"graphviz failed: {proc.stderr.decode().strip()[:200]}", file=out)
    return text
