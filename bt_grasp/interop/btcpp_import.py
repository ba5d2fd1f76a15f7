"""BehaviorTree.CPP v4 XML -> a bt_grasp tree file, keeping the C++ nodes' own semantics.

An imported tree should be verified as what it *is*, so nodes are not "upgraded" to bt_grasp
semantics: RetryUntilSuccessful becomes `btcpp_retry` and Nav2's RecoveryNode `recovery_node`
(both refill their counts when halted), PipelineSequence and RoundRobin keep their Nav2 rules.
Only a RetryUntilSuccessful marked `_bt_grasp_refill="false"` (written by our exporter) becomes a
bt_grasp `retry` again. Nodes bt_grasp cannot run (Nav2 actions, user plugins) become opaque
leaves whose declared outcomes the verifier explores. SubTrees are inlined with BT.CPP's port
remapping, so the result is one self-contained tree file.

Elements keep their line numbers (bt_grasp.interop.xml_read) so every error names file:line:col.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bt_grasp.errors import UserError
from bt_grasp.interop.btcpp_elements import ElementImporter
from bt_grasp.interop.btcpp_meta import apply_metadata, strip_key_ports
from bt_grasp.interop.common import (
    ATTR_PREFIX,
    BUDGET_ATTRS,
    EXPORTED_ATTR,
    GOAL_ATTR,
    NODES_ATTR,
    interop_registry,
)
from bt_grasp.interop.xml_read import parse_xml, xml_pos
from bt_grasp.registry import Registry
from bt_grasp.spec.model import Budgets, NodeSpec, TreeSpec


def _copy_registry(reg: Registry) -> Registry:
    """A copy to register user node classes into, so they do not leak into the shared default."""
    new = Registry()
    for nt in reg:
        new.add(nt)
    return new


def _has_decision(root: NodeSpec) -> bool:
    return any(n.type in ("finalize", "wait_clarify") for n in root.walk())


def _wrap_with_decisions(root: NodeSpec, tree: str, taken: set[str]) -> NodeSpec:
    """Give a BT.CPP tree (which has no Decisions) bt_grasp's ending: its status decides."""

    def fresh(name: str) -> str:
        candidate, k = name, 1
        while candidate in taken:
            k += 1
            candidate = f"{name}_{k}"
        taken.add(candidate)
        return candidate

    pos = root.pos
    done = NodeSpec(type="finalize", id=fresh("btcpp_succeeded"),
                    params={"reason": f"BT.CPP tree {tree} returned SUCCESS"}, pos=pos)
    run = NodeSpec(type="sequence", id=fresh("btcpp_run"), params={"memory": True},
                   children=[root, done], pos=pos)
    failed = NodeSpec(type="wait_clarify", id=fresh("btcpp_failed"),
                      params={"reason": f"BT.CPP tree {tree} returned FAILURE"}, pos=pos)
    return NodeSpec(type="selector", id=fresh("btcpp_episode"), params={"memory": True},
                    children=[run, failed], pos=pos)


def import_spec(xml_path: str | Path, registry: Registry | None = None,
                outcomes: dict[str, list[str]] | None = None, decisions: bool | None = None,
                text: str | None = None) -> TreeSpec:
    """Parse a BT.CPP v4 document into a TreeSpec, checked like a tree file.

    `outcomes` overrides the declared outcomes of opaque nodes by BT.CPP ID, e.g.
    {"FollowPath": ["success", "failure", "running"]}. With `decisions` true, a tree that has no
    finalize / wait_clarify leaf is wrapped so that SUCCESS finalizes and FAILURE waits for
    clarification — bt_grasp episodes end in a Decision, BT.CPP trees end in a status. The
    default (None) wraps foreign trees only: a document written by our exporter is returned as
    its author wrote it, so export -> import is the identity.
    """
    file = str(xml_path)
    data: str | bytes
    if text is None:
        try:
            data = Path(xml_path).read_bytes()
        except FileNotFoundError:
            raise UserError("no such file", file) from None
        except IsADirectoryError:
            raise UserError("is a directory, not a BT.CPP XML file", file) from None
        except OSError as exc:
            raise UserError(f"cannot read: {exc.strerror}", file) from None
    else:
        data = text
    reg = interop_registry(registry)
    imp = ElementImporter(parse_xml(data, file), file, reg, outcomes)
    meta_text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    apply_metadata(imp.root, meta_text, file)  # <?bt_grasp ...?> -> the _bt_grasp_* attributes read below
    bt, name = imp.document()
    user_nodes: list[str] = []
    if NODES_ATTR in bt.attrib:
        try:
            user_nodes = [str(ref) for ref in json.loads(bt.attrib[NODES_ATTR])]
        except (ValueError, TypeError) as exc:
            raise imp.err(f"bad JSON in {NODES_ATTR}: {exc}", bt) from None
        if user_nodes:  # their leaves come back typed, as the tree file had them
            imp.reg = reg = _copy_registry(reg)
            for ref in user_nodes:
                try:
                    reg.load_user_class(ref)
                except UserError as exc:
                    raise imp.err(exc.message, bt) from None
    strip_key_ports(imp.root, reg, file)  # derived entries: checked, then recomputed by the leaves
    imp.stack.append(name)
    root = imp.node(bt.children[0], lambda key: key, "")
    if decisions is None:
        decisions = bt.attrib.get(EXPORTED_ATTR, "").lower() != "true"
    if decisions and not _has_decision(root):
        root = _wrap_with_decisions(root, name, imp.taken)
    budgets = Budgets()
    for key, attr in BUDGET_ATTRS.items():
        if attr in bt.attrib:
            try:
                setattr(budgets, key, int(bt.attrib[attr]))
            except ValueError:
                raise imp.err(f"{attr}=\"{bt.attrib[attr]}\" must be an integer", bt) from None
    goal: dict[str, Any] = {}
    try:
        if GOAL_ATTR in bt.attrib:
            goal = json.loads(bt.attrib[GOAL_ATTR])
    except ValueError as exc:
        raise imp.err(f"bad JSON in a {ATTR_PREFIX}* attribute: {exc}", bt) from None
    spec = TreeSpec(name=name, description=bt.attrib.get("_description", ""), goal=goal,
                    budgets=budgets, root=root, file=file, user_nodes=user_nodes, registry=reg)
    _check_as_tree_file(spec, file)
    return spec


def _check_as_tree_file(spec: TreeSpec, file: str) -> str:
    """Dump the spec and load the text back through the spec loader, so an imported tree obeys
    every rule a tree file does (port ranges, finite numbers, limits). Returns the text; an error
    points at the XML element the offending node came from."""
    from bt_grasp.spec.dump import dump_tree
    from bt_grasp.spec.loader import load_tree_text

    text = dump_tree(spec)
    try:
        load_tree_text(text, "<imported>", spec.registry, base_dir=Path(file).parent)
    except UserError as exc:
        at = xml_pos(text, spec.root, exc.line) if exc.file == "<imported>" else None
        if at is None:
            raise UserError(f"the imported tree does not validate: {exc}", file) from None
        raise UserError(exc.message, file, at.line, at.col) from None
    return text


def import_btcpp(xml_path: str | Path, registry: Registry | None = None,
                 outcomes: dict[str, list[str]] | None = None, decisions: bool | None = None) -> str:
    """BT.CPP v4 XML file -> YAML text of an equivalent bt_grasp tree (the spec's dump format).

    The text is loaded back through the spec loader before it is returned, so what you get is a
    valid tree file.
    """
    from bt_grasp.spec.dump import dump_tree

    return dump_tree(import_spec(xml_path, registry, outcomes, decisions))
