"""User node types: `nodes:` in a tree file (module:Class) and the bt_grasp.nodes entry points."""

from __future__ import annotations

import sys
import textwrap

import pytest
from helpers import run_oracle

from bt_grasp.oracles import ScriptedOracle
from bt_grasp.registry import Registry
from bt_grasp.spec.loader import load_tree_text
from bt_grasp.verifier_api import verify_tree

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


def test_a_module_beside_the_tree_file_is_found_without_pythonpath(tmp_path):
    """`nodes: ["my_beeps2:Beep"]` in a tree whose folder holds my_beeps2.py, run from elsewhere."""
    import os
    import subprocess

    from helpers import ROOT

    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "my_beeps2.py").write_text(PLUGIN)
    (folder / "beeper.yaml").write_text(textwrap.dedent("""
        tree: beeper
        nodes: ["my_beeps2:Beep"]
        root: {selector: {children: [{sequence: {children: [beep, {finalize: {reason: beeped}}]}},
                                     {wait_clarify: {reason: silent}}]}}
    """))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bt_grasp.cli", "verify", str(folder / "beeper.yaml")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "PROVEN" in done.stdout, done.stderr
    assert str(folder) not in sys.path


def test_a_missing_node_module_says_where_it_was_looked_for(tmp_path):
    from bt_grasp.errors import UserError
    from bt_grasp.spec.loader import load_tree

    tree = tmp_path / "t.yaml"
    tree.write_text('tree: t\nnodes: ["no_such_nodes:Beep"]\nroot: {wait_clarify: {reason: x}}\n')
    with pytest.raises(UserError) as err:
        load_tree(tree)
    text = str(err.value)
    assert text.startswith(f"{tree}:2:9: cannot load node class 'no_such_nodes:Beep'")
    assert f"beside the tree ({tmp_path})" in text and "write no_such_nodes.py beside the tree" in text


def test_a_class_without_node_type_points_at_a_complete_example(plugin):
    from bt_grasp.errors import UserError

    (plugin / "my_plain.py").write_text("class Plain:\n    pass\n")
    with pytest.raises(UserError, match=r"docs/writing-nodes.md"):
        load_tree_text('tree: t\nnodes: ["my_plain:Plain"]\nroot: {wait_clarify: {reason: x}}\n', file="t.yaml")
    sys.modules.pop("my_plain", None)


def test_the_shipped_example_node_is_proven_and_runs_where_it_is_copied(tmp_path):
    """python -m bt_grasp.examples DIR, then verify the copied tree: its node loads from DIR."""
    import os
    import subprocess

    from helpers import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    copied = subprocess.run([sys.executable, "-m", "bt_grasp.examples", "demo"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert copied.returncode == 0, copied.stderr
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == ["my_nodes.py", "reach.yaml"]
    done = subprocess.run([sys.executable, "-m", "bt_grasp.cli", "verify", "reach.yaml"], cwd=tmp_path / "demo",
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "PROVEN" in done.stdout, done.stderr
    assert "1 x  FINALIZE: in the basket" in done.stdout
