"""User node types: `nodes:` in a tree file (module:Class) and the bt_grasp.nodes entry points."""

from __future__ import annotations

import sys
import textwrap

import pytest
from helpers import run_oracle

from bt_grasp.oracles import ScriptedOracle
from bt_grasp.registry import Registry
from bt_grasp.spec.loader import load_tree_text
from bt_grasp.verify import verify_tree

PLUGIN = textwrap.dedent('''
    from bt_grasp.nodes.base import Leaf
    from bt_grasp.registry import NodeType, Port


    class Beep(Leaf):
        """A user primitive: its outcomes are declared, so verify explores them."""
        TYPE = "beep"
        SUCCESS_OUTCOMES = frozenset({"beeped"})
        NODE_TYPE = NodeType("beep", "primitive", {
            "volume": Port("volume", "int", default=3, minimum=0),
            "outcome": Port("outcome", "key", default="beep.outcome"),
        }, outcomes=("beeped", "silent"), outcome_port="outcome")

        def execute(self):
            return self.result("beeped")
''')


@pytest.fixture()
def plugin(tmp_path, monkeypatch):
    (tmp_path / "my_beeps.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("my_beeps", None)


def test_a_tree_registers_its_own_node_class_and_the_verifier_explores_it(plugin):
    spec = load_tree_text(textwrap.dedent("""
        tree: beeper
        nodes: ["my_beeps:Beep"]
        root:
          selector:
            children:
              - sequence:
                  children:
                    - beep: {id: b, volume: 5}
                    - finalize: {reason: beeped}
              - wait_clarify: {reason: silent}
    """), file="beeper.yaml")
    res = verify_tree(spec)
    assert res.proven and res.bounds["primitive:beep"] == 1
    assert run_oracle(spec, ScriptedOracle({"b": ["silent"]})).reason == "silent"


def test_a_wrong_port_on_a_user_node_is_a_one_line_error(plugin):
    from bt_grasp.errors import UserError

    with pytest.raises(UserError) as err:
        load_tree_text('tree: t\nnodes: ["my_beeps:Beep"]\nroot:\n  beep: {volum: 2}\n', file="t.yaml")
    assert str(err.value).startswith("t.yaml:4:")
    assert "did you mean volume" in str(err.value)


def test_entry_point_group_bt_grasp_nodes_is_loaded(plugin):
    dist = plugin / "my_beeps-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-beeps\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[bt_grasp.nodes]\nbeep = my_beeps:Beep\n")
    reg = Registry()
    reg.load_entry_points()
    assert "beep" in reg and reg.get("beep").outcomes == ("beeped", "silent")
