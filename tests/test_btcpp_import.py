"""BehaviorTree.CPP v4 XML -> bt_grasp: node mapping, SubTree remapping, opaque leaves, errors."""

from __future__ import annotations

import pytest
from helpers import doc, spec_of, write_xml

from bt_grasp.errors import UserError
from bt_grasp.interop.btcpp_import import import_btcpp, import_spec


def _root(tmp_path, tree: str, extra: str = "", **kw):
    """Import a one-tree document without the Decision wrapper; return the root NodeSpec."""
    path = write_xml(tmp_path, doc(tree, extra=extra))
    return spec_of(import_btcpp(path, decisions=False, **kw)).root


def _error(tmp_path, text: str) -> UserError:
    path = write_xml(tmp_path, text)
    with pytest.raises(UserError) as info:
        import_btcpp(path)
    assert info.value.file == str(path)
    return info.value


def test_sequences_and_fallbacks_map_to_memory_flags_and_reactive_composites(tmp_path):
    root = _root(tmp_path, """
      <Sequence name="s">
        <ReactiveSequence name="rs"><AlwaysSuccess/></ReactiveSequence>
        <Fallback name="f"><AlwaysSuccess/></Fallback>
        <ReactiveFallback name="rf"><AlwaysSuccess/></ReactiveFallback>
      </Sequence>""")
    assert (root.type, root.params["memory"]) == ("sequence", True)
    got = [(c.id, c.type, c.params.get("memory")) for c in root.children]
    assert got == [("rs", "reactive_sequence", None), ("f", "selector", True), ("rf", "reactive_selector", None)]
    leaf = root.children[0].children[0]
    assert (leaf.type, leaf.params["btcpp_id"], leaf.params["outcomes"]) == (
        "opaque_action", "AlwaysSuccess", ["success"])


def test_parallel_thresholds(tmp_path):
    root = _root(tmp_path, """
      <Sequence>
        <Parallel name="all" success_count="-1" failure_count="1"><AlwaysSuccess/><AlwaysSuccess/></Parallel>
        <Parallel name="one" success_count="1" failure_count="1"><AlwaysSuccess/><AlwaysSuccess/></Parallel>
        <Parallel name="two" success_count="2" failure_count="2">
          <AlwaysSuccess/><AlwaysSuccess/><AlwaysSuccess/>
        </Parallel>
      </Sequence>""")
    a, o, t = root.children
    assert (a.type, a.params["policy"]) == ("parallel", "success_on_all")
    assert (o.type, o.params["policy"]) == ("parallel", "success_on_one")
    assert (t.type, t.params["success_count"], t.params["failure_count"]) == ("btcpp_parallel", 2, 2)


def test_decorators(tmp_path):
    root = _root(tmp_path, """
      <Sequence>
        <RetryUntilSuccessful name="r" num_attempts="3"><AlwaysFailure/></RetryUntilSuccessful>
        <RetryUntilSuccessful name="ours" num_attempts="2" _bt_grasp_refill="false"><AlwaysFailure/></RetryUntilSuccessful>
        <Repeat name="rep" num_cycles="4"><AlwaysSuccess/></Repeat>
        <Repeat name="forever" num_cycles="-1"><AlwaysSuccess/></Repeat>
        <Timeout name="t" msec="1500"><AlwaysSuccess/></Timeout>
        <Inverter name="i"><AlwaysSuccess/></Inverter>
        <ForceSuccess name="fs"><AlwaysFailure/></ForceSuccess>
        <ForceFailure name="ff"><AlwaysSuccess/></ForceFailure>
      </Sequence>""")
    by_id = {c.id: c for c in root.children}
    assert (by_id["r"].type, by_id["r"].params["num_attempts"]) == ("btcpp_retry", 3)
    assert (by_id["ours"].type, by_id["ours"].params["attempts"]) == ("retry", 2)
    assert by_id["rep"].params["times"] == 4 and by_id["forever"].params["times"] is None
    assert (by_id["t"].type, by_id["t"].params["seconds"]) == ("timeout", 1.5)
    assert [by_id[k].type for k in ("i", "fs", "ff")] == ["inverter", "force_success", "force_failure"]


def test_nav2_controls(tmp_path):
    root = _root(tmp_path, """
      <RecoveryNode name="rec" number_of_retries="3">
        <PipelineSequence name="pipe"><AlwaysSuccess/><AlwaysSuccess/></PipelineSequence>
        <RoundRobin name="rr"><AlwaysSuccess/><AlwaysFailure/></RoundRobin>
      </RecoveryNode>""")
    assert (root.type, root.params["number_of_retries"]) == ("recovery_node", 3)
    assert [c.type for c in root.children] == ["pipeline_sequence", "round_robin"]


def test_switch_cases_and_default(tmp_path):
    root = _root(tmp_path, """
      <Switch2 name="sw" variable="{grasp.label}" case_1="SUCCESS" case_2="EMPTY">
        <AlwaysSuccess name="a"/>
        <AlwaysFailure name="b"/>
        <AlwaysFailure name="dflt"/>
      </Switch2>""")
    assert root.type == "switch" and root.params["on"] == "{grasp.label}"
    assert {k: v.id for k, v in root.cases.items()} == {"SUCCESS": "a", "EMPTY": "b"}
    assert root.default is None  # an AlwaysFailure default is "no default" in bt_grasp


def test_opaque_leaves_kinds_ports_and_outcomes(tmp_path):
    model = """
  <TreeNodesModel>
    <Condition ID="IsDocked"/>
    <Action ID="FollowPath" _bt_grasp_outcomes="success;failure;running"/>
  </TreeNodesModel>
"""
    root = _root(tmp_path, """
      <Sequence>
        <IsDocked/>
        <GoalReached/>
        <Condition ID="BatteryOk" min="0.2"/>
        <FollowPath path="{path}" controller_id="FollowPath"/>
        <Spin name="spin1" spin_dist="1.57"/>
        <RateController hz="2.0"><AlwaysSuccess/></RateController>
      </Sequence>""", extra=model)
    kinds = [(c.type, c.params.get("btcpp_id")) for c in root.children]
    assert kinds == [("opaque_condition", "IsDocked"), ("opaque_condition", "GoalReached"),
                     ("opaque_condition", "BatteryOk"), ("opaque_action", "FollowPath"),
                     ("opaque_action", "Spin"), ("opaque_decorator", "RateController")]
    follow, spin = root.children[3], root.children[4]
    assert follow.params["outcomes"] == ["success", "failure", "running"]
    assert follow.params["ports"] == {"path": "{path}", "controller_id": "FollowPath"}
    assert spin.id == "spin1" and spin.params["outcomes"] == ["success", "failure"]
    assert root.children[5].params["ports"] == {"hz": "2.0"}


def test_outcome_override_by_id(tmp_path):
    root = _root(tmp_path, "<Spin/>", outcomes={"Spin": ["success", "running"]})
    assert root.params["outcomes"] == ["success", "running"]


def test_our_leaves_come_back_typed(tmp_path):
    root = _root(tmp_path, """
      <Sequence>
        <grasp name="g" force="40" target="{target}"/>
        <evaluate_grasp name="w" semantic="true"/>
        <finalize name="done" reason="ok"/>
      </Sequence>""")
    g, w, _ = root.children
    assert g.params["force"] == 40.0 and isinstance(g.params["force"], float)
    assert w.params["semantic"] is True


def test_subtree_remapping_autoremap_and_private_keys(tmp_path):
    text = """
<root BTCPP_format="4" main_tree_to_execute="Main">
  <BehaviorTree ID="Main">
    <Sequence>
      <SubTree ID="Nav" name="nav1" goal="{pose}" speed="0.5"/>
      <SubTree ID="Nav" name="nav2" _autoremap="true"/>
    </Sequence>
  </BehaviorTree>
  <BehaviorTree ID="Nav">
    <Sequence name="body">
      <ComputePathToPose goal="{goal}" path="{path}" speed="{speed}" root="{@global}" same="{=}"/>
    </Sequence>
  </BehaviorTree>
</root>
"""
    root = spec_of(import_btcpp(write_xml(tmp_path, text), decisions=False)).root
    first, second = root.children
    assert first.id == "nav1/body" and second.id == "nav2/body"
    p1 = first.children[0].params["ports"]
    assert p1 == {"goal": "{pose}", "path": "{nav1/path}", "speed": "0.5", "root": "{global}",
                  "same": "{nav1/same}"}
    p2 = second.children[0].params["ports"]
    assert p2 == {"goal": "{goal}", "path": "{path}", "speed": "{speed}", "root": "{global}",
                  "same": "{same}"}
    assert first.children[0].id == "nav1/ComputePathToPose"


def test_foreign_tree_is_wrapped_in_decisions_and_bt_attributes_are_read(tmp_path):
    path = write_xml(tmp_path, """
<root BTCPP_format="4">
  <BehaviorTree ID="Only" _description="d" _bt_grasp_max_ticks="77" _bt_grasp_goal='{"object": "cup"}'>
    <AlwaysSuccess/>
  </BehaviorTree>
</root>""")
    spec = import_spec(path)
    assert spec.name == "Only" and spec.description == "d"
    assert spec.budgets.max_ticks == 77 and spec.goal == {"object": "cup"}
    root = spec.root
    assert root.type == "selector" and root.id == "btcpp_episode"
    assert [c.type for c in root.children] == ["sequence", "wait_clarify"]
    assert root.children[0].children[1].type == "finalize"
    assert spec_of(import_btcpp(path)).root == root


# -- errors ------------------------------------------------------------------------------------

def test_malformed_xml_names_the_line(tmp_path):
    err = _error(tmp_path, '<root BTCPP_format="4">\n  <BehaviorTree ID="A">\n    <Sequence>\n'
                           '  </BehaviorTree>\n</root>\n')
    assert err.line == 4 and "malformed XML" in err.message
    assert str(err).startswith(f"{err.file}:4:")


def test_missing_and_unknown_format(tmp_path):
    err = _error(tmp_path, '<root main_tree_to_execute="A">\n<BehaviorTree ID="A"><AlwaysSuccess/>'
                           '</BehaviorTree></root>')
    assert "missing BTCPP_format" in err.message and err.line == 1
    err = _error(tmp_path, doc("<AlwaysSuccess/>", main="A", fmt="3"))
    assert 'unsupported BTCPP_format "3"' in err.message


def test_unknown_main_tree(tmp_path):
    err = _error(tmp_path, doc("<AlwaysSuccess/>", main="Main").replace(
        'main_tree_to_execute="Main"', 'main_tree_to_execute="Mian"'))
    assert "unknown tree 'Mian'" in err.message and "did you mean Main" in err.message


def test_several_trees_need_a_main(tmp_path):
    err = _error(tmp_path, '<root BTCPP_format="4">\n<BehaviorTree ID="A"><AlwaysSuccess/></BehaviorTree>\n'
                           '<BehaviorTree ID="B"><AlwaysSuccess/></BehaviorTree>\n</root>')
    assert "main_tree_to_execute" in err.message


def test_missing_subtree_id_and_unknown_subtree(tmp_path):
    err = _error(tmp_path, doc('    <Sequence>\n      <SubTree name="x"/>\n    </Sequence>'))
    assert err.line == 4 and "needs an ID" in err.message
    err = _error(tmp_path, doc('    <Sequence>\n\n      <SubTree ID="Nowhere"/>\n    </Sequence>'))
    assert err.line == 5 and "missing SubTree 'Nowhere'" in err.message


def test_subtree_cycle(tmp_path):
    err = _error(tmp_path, """<root BTCPP_format="4" main_tree_to_execute="A">
<BehaviorTree ID="A"><SubTree ID="B"/></BehaviorTree>
<BehaviorTree ID="B"><SubTree ID="A"/></BehaviorTree>
</root>""")
    assert "cycle" in err.message and "A -> B -> A" in err.message


@pytest.mark.parametrize("tree, words", [
    ('<RecoveryNode><AlwaysSuccess/></RecoveryNode>', "exactly 2 children"),
    ('<RetryUntilSuccessful num_attempts="{n}"><AlwaysSuccess/></RetryUntilSuccessful>', "literal"),
    ('<RetryUntilSuccessful num_attempts="x"><AlwaysSuccess/></RetryUntilSuccessful>', "integer"),
    ('<Sequence _skipIf="a == 1"><AlwaysSuccess/></Sequence>', "_skipIf"),
    ('<IfThenElse><AlwaysSuccess/><AlwaysSuccess/></IfThenElse>', "unsupported control node"),
    ('<Switch2 variable="{x}" case_1="a" case_2="b"><AlwaysSuccess/></Switch2>', "3 children"),
    ('<Sequence foo="1"><AlwaysSuccess/></Sequence>', "unknown attribute 'foo'"),
    ('<Sequence/>', "at least one child"),
    ('<Spin _bt_grasp_outcomes="maybe"/>', "outcomes of <Spin>"),
])
def test_semantic_errors_name_the_element_line(tmp_path, tree, words):
    err = _error(tmp_path, doc("\n" + tree))
    assert words in err.message
    assert err.line == 4
