"""Valid tree files: what the loader produces (defaults, ids, positions, includes, params, user nodes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bt_grasp.blackboard import ref_key
from bt_grasp.default_registry import default_registry
from bt_grasp.errors import UserError
from bt_grasp.registry import NodeType, Port
from bt_grasp.spec.loader import load_tree, load_tree_text
from bt_grasp.spec.model import Budgets, Pos
from bt_grasp.spec.model import ref_key as model_ref_key

GOOD = Path(__file__).parent / "data" / "trees" / "good"


def test_ports_are_filled_with_defaults_and_remember_where_they_were_written():
    spec = load_tree(GOOD / "clutter.yaml")
    grasp = spec.node("grasp")
    assert grasp.params == {"target": "{target}", "force": 60.0, "execution": "grasp.execution",
                            "outcome": "grasp.outcome"}
    assert grasp.pos == Pos(str(GOOD / "clutter.yaml"), 19, 25)
    locate = spec.node("locate_object_1")
    assert locate.params["target"] == "{goal.object}"
    assert locate.param_pos["target"] == Pos(str(GOOD / "clutter.yaml"), 11, 33)


def test_top_level_fields():
    spec = load_tree(GOOD / "clutter.yaml")
    assert spec.name == "clutter"
    assert spec.goal == {"object": "red mug"} and type(spec.goal) is dict
    assert spec.budgets == Budgets(actions=6, perception_streak=4, max_ticks=None)
    assert spec.source == (GOOD / "clutter.yaml").read_text()
    assert spec.includes == [] and spec.user_nodes == []


def test_ids_are_generated_per_type_in_preorder_and_skip_explicit_ones():
    spec = load_tree_text("""\
tree: t
root:
  sequence:
    children:
      - finalize: {id: finalize_1}
      - finalize
      - sequence: {children: [finalize]}
""")
    assert [n.id for n in spec.root.walk()] == [
        "sequence_1", "finalize_1", "finalize_2", "sequence_2", "finalize_3"]
    assert [n.id_given for n in spec.root.walk()] == [False, True, False, False, False]


def test_walk_is_preorder_over_children_cases_and_default():
    spec = load_tree(GOOD / "clutter.yaml")
    route = spec.node("route")
    assert [n.id for n in route.walk()] == [
        "route", "lift_1", "force_failure_1", "open_gripper_1", "wait_clarify_1"]
    assert list(route.cases) == ["SUCCESS", "EMPTY"]
    assert route.default is not None and route.default.params["reason"] == "unsafe grasp"


def test_a_bare_string_is_a_leaf_with_default_ports():
    spec = load_tree(GOOD / "bare_leaf.yaml")
    assert (spec.root.type, spec.root.id, spec.root.params) == ("finalize", "finalize_1", {"reason": "done"})


def test_unquoted_on_key_is_the_switch_port_not_yaml_true():
    spec = load_tree_text("""\
tree: t
root:
  switch:
    on: "{grasp.label}"
    cases: {SUCCESS: finalize}
""")
    assert spec.root.params == {"on": "{grasp.label}"}


def test_key_ports_accept_bare_and_braced_keys_as_written():
    spec = load_tree_text("""\
tree: t
root:
  sequence:
    children:
      - grasp: {outcome: "{g1.outcome}"}
      - grasp: {outcome: g2.outcome}
""")
    assert [c.params["outcome"] for c in spec.root.children] == ["{g1.outcome}", "g2.outcome"]


def test_leaf_ports_may_read_the_blackboard():
    spec = load_tree_text('tree: t\nroot: {grasp: {force: "{profile.force}"}}\n')
    assert spec.root.params["force"] == "{profile.force}"


def test_ref_key():
    """One reference parser: strict is the spelling a tree file must use; lenient (what a run
    binds) also takes surrounding spaces and an empty key segment."""
    for strict in (True, False):
        assert ref_key("{goal.object}", strict=strict) == "goal.object"
        assert ref_key("{target}", strict=strict) == "target"
        assert ref_key("{inc/grasp_1.trial_id}", strict=strict) == "inc/grasp_1.trial_id"
        for not_a_ref in ("goal.object", "{goal object}", "{}", 3, None, "x {a.b}"):
            assert ref_key(not_a_ref, strict=strict) is None
    assert ref_key("{goal.}", strict=True) is None and ref_key("{goal.}") == "goal."
    assert ref_key(" {goal.object} ", strict=True) is None and ref_key(" {goal.object} ") == "goal.object"
    assert model_ref_key("{goal.}") is None  # the old strict import path


# -- includes ---------------------------------------------------------------------------------------

def test_included_ids_are_prefixed_so_including_twice_does_not_clash():
    spec = load_tree(GOOD / "include_twice.yaml")
    ids = [n.id for n in spec.root.walk()]
    assert "first/grasp" in ids and "subtree_1/grasp" in ids
    assert len(ids) == len(set(ids))
    assert spec.includes == [str((GOOD / "grasp_with_retry.yaml").resolve())]


def test_include_params_keep_their_type_and_are_interpolated_inside_strings():
    spec = load_tree(GOOD / "include_twice.yaml")
    assert spec.node("first/retry_1").params["attempts"] == 3  # "${tries}" -> 3, an int
    assert spec.node("subtree_1/retry_1").params["attempts"] == 2  # the included default
    assert spec.node("first/locate_object_1").params["target"] == "red mug"
    assert spec.node("subtree_1/evaluate_grasp_1").params["label"] == "second.label"
    assert spec.node("subtree_1/label_is_1").params["key"] == "{second.label}"


def test_positions_of_included_nodes_point_into_the_included_file():
    spec = load_tree(GOOD / "include_twice.yaml")
    inner = str(GOOD / "grasp_with_retry.yaml")
    assert spec.node("first/grasp").pos == Pos(inner, 14, 13)
    # a substituted value points at where it was written: the `tries` default of the includer
    assert spec.node("first/retry_1").param_pos["attempts"] == Pos(str(GOOD / "include_twice.yaml"), 4, 10)


def test_errors_inside_an_included_file_name_that_file(tmp_path: Path):
    (tmp_path / "part.yaml").write_text("tree: part\nroot:\n  grasp: {forse: 3}\n")
    (tmp_path / "main.yaml").write_text("tree: main\nroot: {include: {file: part.yaml}}\n")
    with pytest.raises(UserError) as info:
        load_tree(tmp_path / "main.yaml")
    err = info.value
    assert (err.file, err.line, err.col) == (str(tmp_path / "part.yaml"), 3, 11)
    assert "(did you mean force?)" in err.message


def test_a_parameter_can_be_a_whole_node(tmp_path: Path):
    (tmp_path / "wrap.yaml").write_text(
        "tree: wrap\nparams: {body: null}\nroot: {retry: {attempts: 2, child: \"${body}\"}}\n")
    (tmp_path / "main.yaml").write_text(
        "tree: main\nroot:\n  include:\n    id: w\n    file: wrap.yaml\n"
        "    params: {body: {lift: {height: 0.3}}}\n")
    spec = load_tree(tmp_path / "main.yaml")
    assert [(n.id, n.type) for n in spec.root.walk()] == [("w/retry_1", "retry"), ("w/lift_1", "lift")]
    assert spec.node("w/lift_1").params["height"] == 0.3


def test_a_parameter_without_default_is_required(tmp_path: Path):
    (tmp_path / "wrap.yaml").write_text("tree: wrap\nparams: {body: null}\nroot: \"${body}\"\n")
    (tmp_path / "main.yaml").write_text("tree: main\nroot:\n  include: {file: wrap.yaml}\n")
    with pytest.raises(UserError) as info:
        load_tree(tmp_path / "main.yaml")
    assert (info.value.line, info.value.col) == (3, 3)
    assert "missing parameter 'body'" in info.value.message


def test_a_file_including_itself_is_a_cycle(tmp_path: Path):
    (tmp_path / "self.yaml").write_text("tree: s\nroot:\n  subtree: {file: ./self.yaml}\n")
    with pytest.raises(UserError) as info:
        load_tree(tmp_path / "self.yaml")
    me = str(tmp_path / "self.yaml")
    assert str(info.value) == f"{me}:3:19: include cycle: {me} -> {me}"


def test_load_tree_params_override_the_file_defaults():
    spec = load_tree(GOOD / "grasp_with_retry.yaml", params={"attempts": 5})
    assert spec.root.params["attempts"] == 5
    with pytest.raises(UserError, match="unknown parameter 'attempt'.*did you mean attempts"):
        load_tree(GOOD / "grasp_with_retry.yaml", params={"attempt": 5})


def test_load_tree_text_resolves_includes_against_base_dir():
    text = "tree: t\nroot: {include: {id: g, file: grasp_with_retry.yaml}}\n"
    spec = load_tree_text(text, base_dir=GOOD)
    assert spec.root.id == "g/retry_1" and spec.file == "<string>"


# -- user node classes ---------------------------------------------------------------------------------

class WaveHand:
    """A user leaf: the spec only needs its NODE_TYPE."""

    NODE_TYPE = NodeType("wave_hand", "action", {
        "times": Port("times", "int", default=1, minimum=1),
        "outcome": Port("outcome", "key", default="wave.outcome"),
    }, outcomes=("waved", "tired"), outcome_port="outcome")


def test_user_node_classes_are_registered_in_a_copy_of_the_registry():
    spec = load_tree_text("""\
tree: t
nodes: ["test_spec_load:WaveHand"]
root:
  sequence:
    children:
      - wave_hand: {times: 2}
      - switch: {"on": "{wave.outcome}", cases: {waved: finalize, tired: wait_clarify}}
""")
    assert spec.user_nodes == ["test_spec_load:WaveHand"]
    assert spec.root.children[0].params == {"times": 2, "outcome": "wave.outcome"}
    assert "wave_hand" in spec.registry and "wave_hand" not in default_registry()


def test_user_node_labels_are_checked_against_their_alphabet():
    with pytest.raises(UserError, match=r"unknown label 'wavd'.*\(did you mean waved\?\)"):
        load_tree_text("""\
tree: t
nodes: ["test_spec_load:WaveHand"]
root:
  sequence:
    children:
      - wave_hand
      - switch: {"on": "{wave.outcome}", cases: {wavd: finalize}}
""")
