"""Export then import gives the same tree: structure, ids, ports, budgets, goal, description."""

from __future__ import annotations

import pytest
from helpers import BTCPP_DATA, ROOT, node_diff, spec_of, write_xml

from bt_grasp.interop.btcpp_export import export_btcpp, export_spec
from bt_grasp.interop.btcpp_import import import_btcpp
from bt_grasp.interop.common import interop_registry
from bt_grasp.registry import NodeType, Port
from bt_grasp.spec.loader import load_tree

YAML_TREES = sorted([*(ROOT / "trees").glob("*.yaml"), *(ROOT / "trees" / "subtrees").glob("*.yaml"),
                     *(ROOT / "tests" / "data" / "trees" / "good").glob("*.yaml")])
XML_TREES = sorted(BTCPP_DATA.glob("*.xml"))


def _same(a, b) -> None:
    assert node_diff(a.root, b.root) == []
    assert a.root == b.root
    assert (a.name, a.description, a.goal, a.budgets, a.user_nodes) == (
        b.name, b.description, b.goal, b.budgets, b.user_nodes)


def test_there_are_trees_to_round_trip():
    assert any(p.parent.name == "trees" for p in YAML_TREES)
    assert len(XML_TREES) >= 2


@pytest.mark.parametrize("path", YAML_TREES, ids=lambda p: p.name)
def test_yaml_export_import_is_identity(tmp_path, path):
    original = load_tree(path, interop_registry())
    xml = write_xml(tmp_path, export_btcpp(path))
    _same(original, spec_of(import_btcpp(xml)))


@pytest.mark.parametrize("path", XML_TREES, ids=lambda p: p.name)
def test_imported_nav2_trees_survive_export_and_reimport(tmp_path, path):
    first = spec_of(import_btcpp(path))
    xml = write_xml(tmp_path, export_spec(first))
    _same(first, spec_of(import_btcpp(xml)))


def test_interop_types_round_trip(tmp_path):
    text = """
<root BTCPP_format="4" main_tree_to_execute="T">
  <BehaviorTree ID="T">
    <Sequence name="top">
      <Parallel name="p" success_count="2" failure_count="2">
        <AlwaysSuccess name="a1"/><AlwaysSuccess name="a2"/><AlwaysFailure name="a3"/>
      </Parallel>
      <RetryUntilSuccessful name="r" num_attempts="-1"><Spin name="s" spin_dist="1.0"/></RetryUntilSuccessful>
      <RoundRobin name="rr"><Wait name="w"/><GoalReached name="g" _bt_grasp_outcomes="failure"/></RoundRobin>
      <Timeout name="t" msec="250"><Repeat name="rep" num_cycles="2"><AlwaysSuccess name="a4"/></Repeat></Timeout>
    </Sequence>
  </BehaviorTree>
</root>"""
    first = spec_of(import_btcpp(write_xml(tmp_path, text)))
    again = spec_of(import_btcpp(write_xml(tmp_path, export_spec(first), "again.xml")))
    _same(first, again)
    kinds = {n.id: n.type for n in first.root.walk()}
    assert kinds["p"] == "btcpp_parallel" and kinds["r"] == "btcpp_retry"
    assert kinds["g"] == "opaque_condition"


class WaveHand:
    """A user leaf class (module:Class in `nodes:`) for the round trip below."""

    NODE_TYPE = NodeType("wave_hand", "action", {
        "times": Port("times", "int", default=1, minimum=1),
        "outcome": Port("outcome", "key", default="wave.outcome"),
    }, outcomes=("waved", "tired"), outcome_port="outcome")


def test_user_node_classes_round_trip(tmp_path):
    text = """
tree: t
nodes: ["test_btcpp_roundtrip:WaveHand"]
root:
  sequence:
    children:
      - wave_hand: {id: wave, times: 3}
      - switch: {"on": "{wave.outcome}", cases: {waved: finalize, tired: wait_clarify}}
"""
    original = spec_of(text)
    xml_text = export_spec(original)
    assert '"nodes": ["test_btcpp_roundtrip:WaveHand"]' in xml_text and "<wave_hand" in xml_text
    back = spec_of(import_btcpp(write_xml(tmp_path, xml_text)))
    _same(original, back)
    assert back.root.children[0].type == "wave_hand"


def test_reactive_composites_round_trip_as_reactive_sequence_and_fallback(tmp_path):
    from helpers import tree

    original = tree("""
        tree: reactive
        budgets: {max_ticks: 5000}
        root:
          reactive_selector:
            id: top
            children:
              - reactive_sequence:
                  id: guarded
                  children:
                    - label_is: {id: still, key: "{grasp.label}", label: SUCCESS}
                    - lift: {id: up}
              - wait_clarify: {id: stop, reason: lost}
    """)
    xml = export_spec(original)
    assert "<ReactiveFallback" in xml and "<ReactiveSequence" in xml
    _same(original, spec_of(import_btcpp(write_xml(tmp_path, xml))))


def test_memory_false_exports_as_reactive_and_comes_back_as_the_reactive_composite(tmp_path):
    from helpers import tree

    original = tree("""
        tree: m
        root:
          sequence: {id: s, memory: false, children: [{finalize: {id: f}}]}
    """)
    again = spec_of(import_btcpp(write_xml(tmp_path, export_spec(original))))
    assert (again.root.type, again.root.id) == ("reactive_sequence", "s")
