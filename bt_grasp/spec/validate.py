"""Whole-tree checks that need more than one node: ids, and labels routed by switch/label_is.

These run after includes are expanded, so a switch in an included file is checked against the
writers of its key anywhere in the final tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from bt_grasp.blackboard import ref_key
from bt_grasp.errors import UserError, did_you_mean
from bt_grasp.outcomes import LABELS
from bt_grasp.registry import Registry
from bt_grasp.spec.model import NodeSpec, Pos
from bt_grasp.spec.parse import INCLUDE_TYPES
from bt_grasp.spec.ports import LABEL_VALUE_PORTS, READ_REF_PORTS


def fail(msg: str, pos: Pos) -> UserError:
    return UserError(msg, pos.file, pos.line, pos.col)


def file_nodes(root: NodeSpec) -> Iterator[NodeSpec]:
    """Pre-order over one file's own nodes: include placeholders, but not what they include."""
    yield root
    if root.type in INCLUDE_TYPES:
        return
    for sub in root.sub_nodes():
        yield from file_nodes(sub)


def _where(pos: Pos, relative_to: Pos) -> str:
    if pos.file == relative_to.file:
        return f"line {pos.line}"
    return str(pos)


def check_unique_ids(nodes: Iterable[NodeSpec], only_given: bool = False) -> None:
    """Every id appears once; the error points at the second use."""
    seen: dict[str, NodeSpec] = {}
    for node in nodes:
        if only_given and not node.id_given:
            continue
        first = seen.get(node.id)
        if first is not None:
            at = node.id_pos or node.pos
            first_at = first.id_pos or first.pos
            raise fail(f"duplicate node id '{node.id}' (first used at {_where(first_at, at)})", at)
        seen[node.id] = node


def assign_ids(root: NodeSpec, taken: set[str]) -> None:
    """Give "<type>_<n>" ids (n counting per type from 1, pre-order) to nodes written without one.

    Deterministic for a given structure and set of explicit ids, so a dump that omits generated
    ids reloads to the same ids.
    """
    counters: dict[str, int] = {}
    for node in file_nodes(root):
        if node.id:
            continue
        n = counters.get(node.type, 0)
        while True:
            n += 1
            candidate = f"{node.type}_{n}"
            if candidate not in taken:
                break
        counters[node.type] = n
        node.id, node.id_given = candidate, False
        taken.add(candidate)


def splice_includes(node: NodeSpec) -> NodeSpec:
    """Replace include placeholders by the included root, ids prefixed "<include id>/"."""
    if node.type in INCLUDE_TYPES:
        inner = node.children[0]
        for sub in inner.walk():
            sub.id = f"{node.id}/{sub.id}"
            sub.id_given = True  # a prefixed id cannot be regenerated from the expanded tree
        return inner
    node.children = [splice_includes(c) for c in node.children]
    node.cases = {k: splice_includes(v) for k, v in node.cases.items()}
    if node.default is not None:
        node.default = splice_includes(node.default)
    return node


def _writers(root: NodeSpec, registry: Registry) -> dict[str, list[tuple[NodeSpec, tuple[str, ...]]]]:
    """Blackboard key -> the leaves writing their outcome there, with their alphabets."""
    out: dict[str, list[tuple[NodeSpec, tuple[str, ...]]]] = {}
    for node in root.walk():
        nt = registry.get(node.type)
        if nt is None or not nt.outcome_port:
            continue
        value = node.params.get(nt.outcome_port)
        if value is None and nt.outcome_port in nt.ports:
            value = nt.ports[nt.outcome_port].default
        if not isinstance(value, str):
            continue
        key = ref_key(value, strict=True) or value
        out.setdefault(key, []).append((node, tuple(nt.alphabet(node.params))))
    return out


def _expected(key: str | None, writers: dict[str, Any], registry: Registry) -> tuple[list[str], str]:
    """(allowed labels, how to explain them) for a label read from `key`."""
    found = writers.get(key or "", [])
    alphabet: list[str] = []
    for _, alph in found:
        alphabet += [a for a in alph if a not in alphabet]
    if alphabet:
        names = sorted({n.type for n, _ in found})
        return alphabet, f"{' and '.join(names)} writes {', '.join(alphabet)} there"
    known = list(LABELS) + sorted(registry.all_outcomes() - set(LABELS))
    return known, f"no node in the tree writes '{key}'; known labels: {', '.join(known)}"


def check_labels(root: NodeSpec, registry: Registry) -> None:
    """Case keys of each switch, and `label` ports, must be outcomes that can reach their key."""
    writers = _writers(root, registry)
    for node in root.walk():
        nt = registry.get(node.type)
        if nt is None:
            continue
        read_port = next((p for (t, p) in READ_REF_PORTS if t == node.type), None)
        key = ref_key(node.params.get(read_port), strict=True) if read_port else None
        if nt.arity == "cases":
            allowed, why = _expected(key, writers, registry)
            for label in node.cases:
                lpos = node.case_pos.get(label, node.pos)
                if label not in allowed:
                    raise fail(f"unknown label '{label}' in {node.type} '{node.id}' on "
                               f"'{{{key}}}': {why}{did_you_mean(label, allowed)}", lpos)
        for name, port in nt.ports.items():
            value = node.params.get(name)
            listed = (node.type, name) in LABEL_VALUE_PORTS
            if not isinstance(value, str) or not (listed or port.type == "label"):
                continue
            if port.type != "label" and not writers.get(key or ""):
                continue  # a free value compared with a key no leaf writes: nothing to check
            allowed, why = _expected(key, writers, registry)
            if value not in allowed:
                at = node.param_pos.get(name, node.pos)
                raise fail(f"unknown label '{value}' for port '{name}' of {node.type}: {why}"
                           f"{did_you_mean(value, allowed)}", at)
