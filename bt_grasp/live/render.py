"""A LiveState as text: a frame (header lines and the tree, one node per line) for a terminal that
is redrawn in place, or one compact line per tick for a log. Pure: no terminal, no clock.

Colour is ANSI SGR, asked for by the caller; without it every status is still spelled out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bt_grasp.live.state import LiveState
from bt_grasp.trace_reader import clock_of

RESET = "\x1b[0m"
STYLES = {"SUCCESS": "\x1b[32m", "FAILURE": "\x1b[31m", "RUNNING": "\x1b[1;33m", "idle": "\x1b[2m",
          "title": "\x1b[1m", "FINALIZE": "\x1b[1;32m", "WAIT_CLARIFY": "\x1b[1;35m", "spent": "\x1b[31m"}
NOT_TICKED = "-"  # the status shown for a node this tick did not visit

Part = tuple[str, "str | None"]  # text and its style (a STYLES key), None for plain


def fit(parts: list[Part], width: int | None, color: bool) -> str:
    """Join styled parts, cut to `width` visible characters (an ellipsis marks the cut)."""
    out: list[str] = []
    left = width if width is not None else -1
    for text, style in parts:
        if width is not None:
            if left <= 0:
                break
            if len(text) > left:
                text = text[:left - 1] + "…"
            left -= len(text)
        out.append(f"{STYLES[style]}{text}{RESET}" if color and style and text else text)
    return "".join(out)


def _children(node: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    kids = [("", c) for c in node.get("children", [])]
    kids += [(str(k), v) for k, v in node.get("cases", {}).items()]
    if "default" in node:
        kids.append(("default", node["default"]))
    return kids


def _size(node: dict[str, Any]) -> int:
    return 1 + sum(_size(c) for _, c in _children(node))


def _walk(root: dict[str, Any]) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """Pre-order (line prefix, its children's prefix, edge label, node), box-drawing prefixes."""
    stack: list[tuple[str, str, str, dict[str, Any]]] = [("", "", "", root)]
    while stack:
        prefix, child_prefix, edge, node = stack.pop()
        yield prefix, child_prefix, edge, node
        kids = _children(node)
        for i in reversed(range(len(kids))):
            last = i == len(kids) - 1
            label, child = kids[i]
            stack.append((child_prefix + ("└─ " if last else "├─ "), child_prefix + ("   " if last else "│  "),
                          label, child))


def tree_lines(state: LiveState, color: bool = False, width: int | None = None,
               collapse: bool = False) -> list[str]:
    """One line per node: id [type], its status this tick, and for a RUNNING leaf how long it has
    been running. With `collapse`, a subtree this tick did not enter is one line."""
    if not state.structure:
        return []
    running = state.running_leaves()
    lines: list[str] = []
    skip_prefix: str | None = None
    for prefix, child_prefix, edge, node in _walk(state.structure):
        if skip_prefix is not None and prefix.startswith(skip_prefix) and len(prefix) > len(skip_prefix):
            continue  # inside a collapsed subtree
        skip_prefix = None
        nid, kind = node["id"], node["type"]
        status = state.status.get(nid)
        style = status if status in ("SUCCESS", "FAILURE", "RUNNING") else "idle"
        parts: list[Part] = [(prefix, None)]
        if edge:
            parts.append((f"{edge}: ", None))
        parts.append((nid, style))
        if kind != nid:
            parts.append((f" [{kind}]", None))
        if nid in state.halted:
            parts.append((f"  {_halted(state.halted[nid])}", "FAILURE"))
        else:
            parts.append((f"  {status or NOT_TICKED}", style))
        if nid in running:
            seconds, ticks = running[nid]
            parts.append((f"  {seconds:.2f} s, {ticks} tick{'s' if ticks != 1 else ''}", "RUNNING"))
        hidden = _size(node) - 1 if collapse and status is None else 0
        if hidden:
            parts.append((f"  (+{hidden} not ticked)", "idle"))
            skip_prefix = child_prefix
        lines.append(fit(parts, width, color))
    return lines


def _budget_parts(state: LiveState) -> list[Part]:
    parts: list[Part] = [("left: ", None)]
    for i, (name, left, limit) in enumerate(state.budgets_left()):
        if i:
            parts.append((" · ", None))
        parts.append((f"{name} ", None))
        parts.append((f"{'?' if left is None else left}/{limit}", "spent" if left is not None and left <= 0
                      else None))
    return parts


def _halted(reason: str) -> str:
    return "halted" if reason in ("", "halted") else f"halted ({reason})"


def event_text(event: dict[str, Any] | None) -> str:
    """The last primitive attempt: primitive, node, Watchdog label, exec status, clock."""
    if not event:
        return "none yet"
    label = event.get("watchdog_label") or "no label"
    halted = (event.get("metadata") or {}).get("halted")
    return (f"{event.get('primitive')} at {event.get('node')}: {label}, {event.get('exec_status')}"
            + (f", {_halted(halted)}" if halted else "")
            + f" (clock {float(event.get('clock') or 0.0):.2f} s)")


def final_line(final: dict[str, Any]) -> str:
    """The decision as `bt-grasp run` prints it."""
    line = f"{final.get('decision')}: {final.get('reason')}"
    if "actions" in final:
        line += f" | actions {final['actions']}/{final.get('action_budget', '?')}"
    if "ticks" in final:
        line += f" | ticks {final['ticks']}"
    if "clock" in final:
        line += f" | sim {clock_of(final):.1f} s"
    return line


def frame(state: LiveState, color: bool = False, width: int | None = None,
          height: int | None = None) -> list[str]:
    """The whole view: title, budgets, last event, (decision), then the tree, within width × height."""
    title = f"{state.header.get('tree', '?')}  tick {state.tick}  clock {state.clock:.2f} s"
    if state.tick == 0 and state.final is None:
        title += "  (waiting for the first tick)"
    head = [fit([(title, "title")], width, color), fit(_budget_parts(state), width, color),
            fit([("last event: " + event_text(state.last_event), None)], width, color)]
    if state.final is not None:
        decision = str(state.final.get("decision"))
        head.append(fit([(final_line(state.final), decision if decision in STYLES else None)], width, color))
    head.append("")
    tree = tree_lines(state, color, width)
    room = None if height is None else max(height - len(head), 1)
    if room is not None and len(tree) > room:
        tree = tree_lines(state, color, width, collapse=True)
        if len(tree) > room:
            cut = len(tree) - room + 1
            tree = tree[:room - 1] + [fit([(f"… {cut} more lines", "idle")], width, color)]
    return head + tree


def compact_line(state: LiveState) -> str:
    """One line per tick for a log or a pipe: tick, clock, running leaves, last event, budgets."""
    parts = [f"tick {state.tick}", f"clock {state.clock:.2f} s"]
    running = state.running_leaves()
    if running:
        parts.append("running " + ", ".join(f"{n} {s:.2f} s/{t} ticks" for n, (s, t) in running.items()))
    parts.append("last " + event_text(state.last_event))
    parts.append(fit(_budget_parts(state), None, False))
    return " | ".join(parts)
