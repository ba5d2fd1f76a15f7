"""bt_grasp YAML -> BehaviorTree.CPP v4 XML: format, node mapping, TreeNodesModel, metadata."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from helpers import ROOT, tree_spec

from bt_grasp.interop.btcpp_export import BUILTIN_SWITCH_MAX, export_btcpp, export_spec
from bt_grasp.interop.btcpp_meta import read_metadata

ALL_TYPES = ROOT / "tests" / "data" / "trees" / "good" / "all_types.yaml"


def _xml(path) -> ET.Element:
    return ET.fromstring(export_btcpp(path))


def _meta(text: str) -> dict:
    """The <?bt_grasp ...?> metadata of an exported document."""
    meta = read_metadata(text, "<export>")
    assert meta is not None
    return meta


def test_document_is_btcpp_v4_with_main_tree_and_model():
    root = _xml(ROOT / "trees" / "clutter.yaml")
    assert root.tag == "root"
    assert root.get("BTCPP_format") == "4"
    assert root.get("main_tree_to_execute") == "clutter"
    trees = root.findall("BehaviorTree")
    assert [t.get("ID") for t in trees] == ["clutter"]
    assert len(list(trees[0])) == 1  # exactly one root node, as BT.CPP requires
    model = root.find("TreeNodesModel")
    assert model is not None
    declared = {el.get("ID"): el.tag for el in model}
    assert declared["grasp"] == "Action"
    assert declared["label_is"] == "Condition"
    assert declared["finalize"] == "Action"


def test_model_declares_ports_with_direction_type_and_default():
    model = _xml(ROOT / "trees" / "clutter.yaml").find("TreeNodesModel")
    grasp = model.find("Action[@ID='grasp']")
    ports = {p.get("name"): (p.tag, p.get("type"), p.get("default")) for p in grasp.iter()
             if p.tag.endswith("_port")}
    assert ports["force"] == ("input_port", "double", "60.0")
    assert ports["target"] == ("input_port", "std::string", "{target}")
    # BT.CPP's XSD allows no default on an output port: bt_grasp's default is in the text.
    assert ports["outcome"] == ("output_port", None, None)
    assert "{grasp.outcome}" in grasp.find("output_port[@name='outcome']").text
    assert grasp.find("description").text.startswith("Plan a grasp")


def test_every_leaf_element_is_declared_or_builtin():
    root = _xml(ALL_TYPES)
    declared = {el.get("ID") for el in root.find("TreeNodesModel")}
    builtin = {"Sequence", "Fallback", "ReactiveSequence", "ReactiveFallback", "Parallel",
               "RetryUntilSuccessful", "Repeat", "Timeout", "Inverter", "ForceSuccess",
               "ForceFailure", "AlwaysFailure", "AlwaysSuccess"} | {
                   f"Switch{n}" for n in range(2, BUILTIN_SWITCH_MAX + 1)}
    for el in root.find("BehaviorTree")[0].iter():
        assert el.tag in builtin or el.tag in declared, el.tag


def test_mapping_of_composites_and_decorators():
    text = export_btcpp(ALL_TYPES)
    root = ET.fromstring(text)
    bt = root.find("BehaviorTree")
    top = bt[0]
    assert top.tag == "ReactiveFallback"  # reactive_selector
    par = top.find("Parallel")
    assert (par.get("success_count"), par.get("failure_count")) == ("1", "1")
    sw = top.find("Switch3")
    assert sw.get("variable") == "{target.outcome}"
    assert [sw.get(f"case_{i}") for i in (1, 2, 3)] == ["found", "occluded", "not_found"]
    assert sw[-1].tag == "AlwaysFailure"  # no default: a label without a case fails
    budget = sw.find("BtGraspActionBudget")
    assert (budget.get("actions"), budget.get("scope")) == ("4", "grasping")
    timeout = budget.find("Timeout")
    assert timeout.get("msec") == "30000"
    repeat = timeout.find("Repeat")
    assert repeat.get("num_cycles") == "2"
    assert repeat.find("Sequence") is not None
    retry = top.find("RetryUntilSuccessful")
    assert retry.get("num_attempts") == "2"
    assert [k for k in retry.attrib if k.startswith("_")] == []
    assert _meta(text)["nodes"][retry.get("name")] == {"refill": False, "scope": "shared"}
    model = root.find("TreeNodesModel")
    assert model.find("Decorator[@ID='BtGraspActionBudget']") is not None


def test_budgets_goal_and_description_ride_in_the_processing_instruction():
    spec = tree_spec("""
        tree: t
        description: |
          two
          lines
        goal: {object: red mug}
        budgets: {actions: 3, perception_streak: 2, max_ticks: 50}
        root:
          sequence:
            memory: false
            children:
              - finalize
    """)
    text = export_spec(spec)
    bt = ET.fromstring(text).find("BehaviorTree")
    assert bt.attrib == {"ID": "t"}  # BT.CPP's XSD allows nothing else on <BehaviorTree>
    assert text.index("<?bt_grasp") < text.index("<root")  # tinyxml2 wants it before the root
    assert _meta(text)["tree"] == {"exported": True, "description": "two\nlines\n",
                                   "goal": {"object": "red mug"},
                                   "budgets": {"actions": 3, "perception_streak": 2, "max_ticks": 50}}
    assert bt[0].tag == "ReactiveSequence"


def test_wide_switch_and_fractional_timeout_are_declared_and_kept():
    labels = ["SUCCESS", "EMPTY", "SLIP", "WEAK", "STALL", "TIMEOUT", "fault"]
    cases = "\n".join(f"                    {lab}: {{finalize: {{id: f{i}}}}}"
                      for i, lab in enumerate(labels))
    spec = tree_spec(f"""
        tree: t
        root:
          sequence:
            children:
              - timeout:
                  seconds: 0.0125
                  child: {{finalize: {{id: f}}}}
              - switch:
                  on: "{{x.label}}"
                  cases:
{cases}
    """)
    text = export_spec(spec)
    root = ET.fromstring(text)
    timeout = root.find(".//Timeout")
    assert timeout.get("msec") == "12"
    assert _meta(text)["nodes"][timeout.get("name")] == {"seconds": "0.0125"}
    sw = root.find(".//Switch7")
    assert sw is not None and len(list(sw)) == 8
    assert root.find("TreeNodesModel/Control[@ID='Switch7']") is not None
