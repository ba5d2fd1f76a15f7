"""Exported files load and tick in a real BehaviorTree.CPP v4 (the `behaviortreepy` binding).

The binding (BT.CPP 4.8 inside) is optional and not a test dependency: it registers Python nodes
without ports, so it cannot check a bt_grasp leaf's ports — the XSD tests do that. What it does
check is everything else BT.CPP's own parser sees: the `<?bt_grasp?>` instruction before <root>,
the built-ins' ports and their typed values (num_attempts, msec, success_count, SwitchN cases),
arities, and that the tree ticks to a status. bt_grasp leaves are registered under their IDs
and written without their ports for this check.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from helpers import ROOT

from bt_grasp.interop.btcpp_export import export_btcpp

bt = pytest.importorskip("behaviortreepy")

TREES = sorted((ROOT / "trees").rglob("*.yaml"))


def _factory(text: str):
    """A factory with every node the document models, as port-less Python nodes."""
    factory = bt.BehaviorTreeFactory()
    kinds = {el.get("ID"): el.tag for el in ET.fromstring(text).find("TreeNodesModel")}
    for node_id, kind in kinds.items():
        if kind == "Condition":
            factory.register_simple_condition(node_id, lambda node: bt.NodeStatus.SUCCESS)
        elif kind == "Decorator":
            factory.register_simple_decorator(node_id, lambda status, node: status)
        else:
            factory.register_simple_action(node_id, lambda node: bt.NodeStatus.SUCCESS)
    return factory, set(kinds)


def _without_leaf_ports(text: str, custom: set[str]) -> str:
    def strip(m: re.Match[str]) -> str:
        if m.group(1) not in custom:
            return m.group(0)
        name = re.search(r' name="[^"]*"', m.group(0))
        return f"<{m.group(1)}{name.group(0) if name else ''}{m.group(2)}"

    return re.sub(r"<(\w+)\b[^>]*?(/?>)", strip, text)


@pytest.mark.parametrize("path", TREES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_exported_tree_loads_and_ticks_in_btcpp(path):
    text = export_btcpp(path)
    factory, custom = _factory(text)
    tree = factory.create_tree_from_text(_without_leaf_ports(text, custom))
    assert tree.tick_while_running() in (bt.NodeStatus.SUCCESS, bt.NodeStatus.FAILURE)


def test_btcpp_refuses_a_mistyped_builtin_port():
    text = export_btcpp(ROOT / "trees" / "clutter.yaml")
    factory, custom = _factory(text)
    bad = re.sub(r'num_attempts="\d+"', 'num_attempts="twice"', _without_leaf_ports(text, custom), count=1)
    with pytest.raises(Exception, match="num_attempts"):
        factory.create_tree_from_text(bad)


def test_the_instruction_must_come_before_root():
    """tinyxml2 takes `<?...?>` for a declaration, allowed only ahead of the root element."""
    factory = bt.BehaviorTreeFactory()
    tree = '<BehaviorTree ID="M"><AlwaysSuccess/></BehaviorTree>'
    before = f'<?xml version="1.0"?>\n<?bt_grasp {{}}?>\n<root BTCPP_format="4">{tree}</root>'
    inside = f'<?xml version="1.0"?>\n<root BTCPP_format="4"><?bt_grasp {{}}?>{tree}</root>'
    assert factory.create_tree_from_text(before).tick_while_running() == bt.NodeStatus.SUCCESS
    with pytest.raises(Exception, match="DECLARATION"):
        factory.create_tree_from_text(inside)
