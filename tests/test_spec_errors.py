"""Bad tree files: each error kind gives ONE line `file:line:col: message` at the offending spot.

Every file under tests/data/trees/bad/ is one mistake; these tests pin where it is reported
and what the message says, so the CLI's `validate` output is a specification.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bt_grasp.errors import UserError
from bt_grasp.spec.loader import load_tree, load_tree_text
from bt_grasp.validate_files import validate_paths

BAD = Path(__file__).parent / "data" / "trees" / "bad"


def error_of(name: str) -> UserError:
    with pytest.raises(UserError) as info:
        load_tree(BAD / name)
    return info.value


def assert_error(name: str, line: int, col: int, *fragments: str) -> UserError:
    err = error_of(name)
    assert (err.file, err.line, err.col) == (str(BAD / name), line, col), str(err)
    for fragment in fragments:
        assert fragment in err.message, str(err)
    return err


def text_error(text: str) -> UserError:
    with pytest.raises(UserError) as info:
        load_tree_text(text, file="t.yaml")
    return info.value


# -- the file itself ----------------------------------------------------------------------------

def test_yaml_syntax_error_points_at_the_problem_and_names_where_the_construct_started():
    assert_error("yaml_syntax.yaml", 8, 1, "YAML syntax error", "expected ',' or '}'",
                 "flow mapping started at line 6, column 16")


def test_an_empty_file_is_not_a_tree():
    assert_error("not_a_tree_empty.yaml", 1, 1, "empty file", "not a tree")


def test_a_list_is_not_a_tree():
    assert_error("not_a_tree_list.yaml", 1, 1, "not a tree", "got a list of 2")


def test_a_mapping_without_root_is_not_a_tree():
    assert_error("not_a_tree_no_root.yaml", 1, 1, "not a tree", "no 'root:'")


def test_unknown_top_level_key_suggests_the_close_one():
    assert_error("unknown_top_key.yaml", 2, 1, "unknown top-level key 'budget'",
                 "(did you mean budgets?)")


def test_duplicate_mapping_keys_are_rejected_instead_of_silently_overwritten():
    assert_error("duplicate_key.yaml", 5, 5, "duplicate key 'force'", "first at line 4")


def test_missing_tree_name():
    err = text_error("root: finalize\n")
    assert (err.line, err.col) == (1, 1) and "missing 'tree:'" in err.message


# -- nodes ----------------------------------------------------------------------------------------

def test_unknown_node_type_suggests_the_close_one():
    assert_error("unknown_type.yaml", 6, 9, "unknown node type 'grap'", "(did you mean grasp?)")


def test_node_with_fields_not_indented_under_its_type():
    assert_error("node_two_keys.yaml", 5, 9, "exactly one key", "(grasp, id)",
                 "indent the fields under 'grasp:'")


def test_a_leaf_takes_no_children():
    assert_error("leaf_with_children.yaml", 4, 5, "grasp is a leaf", "children")


def test_retry_without_a_child():
    assert_error("retry_without_child.yaml", 5, 9, "retry needs exactly one child")


def test_decorator_with_two_children():
    assert_error("decorator_two_children.yaml", 6, 7, "retry takes exactly one child",
                 "got a list of 2", "wrap them in a sequence")


def test_empty_composite():
    assert_error("empty_composite.yaml", 5, 30, "empty selector", "at least one child")


def test_duplicate_node_ids_point_at_the_second_use():
    assert_error("duplicate_ids.yaml", 7, 21, "duplicate node id 'g'", "first used at line 5")


# -- ports ----------------------------------------------------------------------------------------

def test_unknown_port_suggests_the_close_one():
    assert_error("unknown_port.yaml", 4, 5, "unknown port 'atempts' for retry",
                 "(did you mean attempts?)")


def test_missing_required_port_points_at_the_node():
    assert_error("missing_port.yaml", 5, 9, "locate_object is missing required port 'target'")


def test_mistyped_integer_port():
    assert_error("mistyped_int.yaml", 4, 15, "port 'attempts' of retry must be an integer",
                 "'three'")


def test_mistyped_bool_port():
    assert_error("mistyped_bool.yaml", 4, 13, "port 'memory' of sequence must be true or false")


def test_float_port_out_of_range():
    assert_error("float_range.yaml", 5, 43, "port 'distance' of push must be <= 0.2", "got 0.5")


def test_port_value_not_among_its_choices():
    assert_error("bad_choice.yaml", 4, 13, "must be one of success_on_all, success_on_one",
                 "(did you mean success_on_one?)")


def test_integer_port_given_a_float_says_how_to_fix_it():
    err = text_error("tree: t\nroot: {retry: {attempts: 2.0, child: grasp}}\n")
    assert (err.line, err.col) == (2, 26) and "(write 2)" in err.message


def test_decorator_settings_must_be_literals_so_bounds_are_static():
    assert_error("ref_in_budget_port.yaml", 4, 15, "must be a literal value",
                 "not a blackboard reference")


def test_malformed_blackboard_reference():
    assert_error("bad_ref.yaml", 5, 33, "malformed blackboard reference '{goal object}'")


def test_unquoted_blackboard_reference_is_explained():
    assert_error("unquoted_ref.yaml", 6, 19, "quote blackboard references", '"{goal.object}"')


def test_switch_on_must_be_a_reference():
    assert_error("switch_on_not_ref.yaml", 4, 9, "must be a blackboard reference",
                 'write "{grasp.label}"')


# -- labels ---------------------------------------------------------------------------------------

def test_unknown_switch_label_is_checked_against_the_writer_of_the_key():
    assert_error("switch_unknown_label.yaml", 11, 13, "unknown label 'SLIPPED'",
                 "evaluate_grasp writes SUCCESS, EMPTY, SLIP, WEAK, STALL, TIMEOUT",
                 "(did you mean SLIP?)")


def test_unknown_switch_label_without_a_writer_falls_back_to_all_known_labels():
    assert_error("switch_unknown_label_no_writer.yaml", 7, 7, "unknown label 'WEAKK'",
                 "no node in the tree writes 'nobody.writes.this'", "(did you mean WEAK?)")


def test_switch_label_from_another_alphabet_is_rejected():
    err = text_error("""\
tree: t
root:
  sequence:
    children:
      - locate_object: {target: mug}
      - switch:
          "on": "{target.outcome}"
          cases: {found: finalize, SUCCESS: wait_clarify}
""")
    assert (err.line, err.col) == (8, 36)
    assert "unknown label 'SUCCESS'" in err.message and "found, occluded, not_found" in err.message


def test_label_is_compares_with_a_label_its_key_can_hold():
    assert_error("label_is_unknown.yaml", 6, 52, "unknown label 'fund'",
                 "locate_object writes found, occluded, not_found", "(did you mean found?)")


# -- budgets --------------------------------------------------------------------------------------

def test_negative_budget():
    assert_error("budget_negative.yaml", 3, 12, "budget 'actions' must be a non-negative integer")


def test_non_integer_budget():
    assert_error("budget_not_integer.yaml", 2, 42, "budget 'perception_streak' must be a literal integer")


def test_unknown_budget_key():
    assert_error("budget_unknown.yaml", 3, 3, "unknown budget 'action'", "(did you mean actions?)")


def test_max_ticks_must_be_positive():
    err = text_error("tree: t\nbudgets: {max_ticks: 0}\nroot: finalize\n")
    assert (err.line, err.col) == (2, 22) and "positive" in err.message


# -- includes and params --------------------------------------------------------------------------

def test_include_cycle_reports_the_chain():
    a, b = str(BAD / "cycle_a.yaml"), str(BAD / "cycle_b.yaml")
    err = error_of("cycle_a.yaml")
    assert (err.file, err.line, err.col) == (b, 7, 17)
    assert err.message == f"include cycle: {a} -> {b} -> {a}"


def test_two_includes_with_the_same_id_clash():
    text = """\
tree: t
root:
  sequence:
    children:
      - include: {id: g, file: grasp_with_retry.yaml}
      - include: {id: g, file: grasp_with_retry.yaml}
"""
    with pytest.raises(UserError) as info:
        load_tree_text(text, file="t.yaml", base_dir=Path(__file__).parent / "data" / "trees" / "good")
    err = info.value
    assert (err.line, err.col) == (6, 23) and "duplicate node id 'g'" in err.message


def test_include_of_a_missing_file():
    assert_error("include_missing_file.yaml", 3, 19, "included file 'no_such_file.yaml' not found")


def test_include_with_an_unknown_parameter():
    assert_error("include_unknown_param.yaml", 5, 14, "unknown parameter 'atempts'",
                 "(did you mean attempts?)")


def test_mistyped_include_parameter_is_reported_where_the_value_was_written():
    assert_error("include_mistyped_param.yaml", 6, 17, "port 'attempts' of retry must be an integer",
                 "'many'")


def test_undeclared_parameter():
    assert_error("undeclared_param.yaml", 5, 27, "undeclared parameter 'objct'",
                 "(did you mean object?)")


def test_user_node_class_that_cannot_be_imported():
    assert_error("bad_user_node.yaml", 2, 9, "cannot load node class")


# -- the whole directory ----------------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(BAD.glob("*.yaml")), ids=lambda p: p.name)
def test_every_bad_file_gives_one_located_line(path: Path):
    errors = validate_paths([str(path)])
    assert len(errors) == 1
    line = str(errors[0])
    assert "\n" not in line
    assert errors[0].line is not None and errors[0].col is not None
    assert line.startswith(f"{errors[0].file}:{errors[0].line}:{errors[0].col}: ")


def test_validate_paths_reports_a_missing_file_and_passes_good_ones():
    good = Path(__file__).parent / "data" / "trees" / "good" / "clutter.yaml"
    errors = validate_paths([str(good), "does/not/exist.yaml"])
    assert [str(e) for e in errors] == ["does/not/exist.yaml: no such file"]


# -- hints: what the user most likely meant ------------------------------------------------------

@pytest.mark.parametrize("written, hint", [
    ("locate", "(did you mean locate_object, or the baseline locate_any?)"),
    ("pick_up", "(did you mean grasp, or the Stretch node pick?)"),
    ("finalise", "(did you mean finalize?)"),
    ("Sequence", "(did you mean sequence?)"),
    ("fallback", "(did you mean selector?)"),
])
def test_an_unknown_node_type_hints_the_core_node_a_user_most_likely_meant(written, hint):
    """Spelling alone gives locate_any (a baseline) and pick (a Stretch node): the core node comes
    first, and spelling's own pick second only when it differs."""
    err = text_error(f"tree: t\nroot:\n  {written}: {{id: n}}\n")
    assert str(err) == f"t.yaml:3:3: unknown node type '{written}' {hint}"


@pytest.mark.parametrize("parent, where", [("retry: {attempts: 3, ", "under 'child:'"),
                                           ("sequence: {", "under 'children:'")])
def test_a_node_written_among_a_parent_s_ports_says_where_it_belongs(parent, where):
    err = text_error(f"tree: t\nroot:\n  {parent}grasp: {{id: g}}}}\n")
    assert f"'grasp' is a node, not a port of {parent.split(':')[0]}" in err.message and where in err.message


def test_a_switch_case_in_the_wrong_case_hints_the_label():
    err = text_error("tree: t\nroot:\n  sequence:\n    children:\n      - grasp\n      - evaluate_grasp\n"
                     "      - switch:\n          \"on\": \"{grasp.label}\"\n          cases: {empty: finalize}\n"
                     "          default: wait_clarify\n")
    assert err.message.endswith("(did you mean EMPTY?)") and (err.line, err.col) == (9, 19)


def test_a_short_name_hints_the_name_it_begins():
    from bt_grasp.errors import did_you_mean

    assert did_you_mean("ur5", ["stretch3", "ur5e_robotiq", "ur5e_robotiq_mujoco"]) == " (did you mean ur5e_robotiq?)"
    assert did_you_mean("zz", ["stretch3"]) == ""


# -- every error of a file ------------------------------------------------------------------------

MANY = """tree: t
root:
  sequence:
    children:
      - locate: {target: x}
      - retry: {attempts: 3, grasp: {id: g}}
      - grasp: {forse: 3}
      - lift: {height: high}
      - finalize: {reason: done}
"""


def test_every_error_of_a_file_is_reported_one_located_line_each(tmp_path, capsys):
    from bt_grasp.cli import main

    path = tmp_path / "many.yaml"
    path.write_text(MANY)
    assert main(["validate", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [f"{path}:{n}" for n in ("5:9", "6:30", "7:17", "8:24")]
    assert "unknown node type 'locate'" in lines[0] and "unknown port 'forse'" in lines[2]


def test_errors_stop_at_the_limit_and_say_so():
    from bt_grasp.errors import MAX_ERRORS

    children = "".join(f"      - grap: {{id: g{i}}}\n" for i in range(MAX_ERRORS + 5))
    err = text_error(f"tree: t\nroot:\n  sequence:\n    children:\n{children}")
    lines = str(err).splitlines()
    assert len(lines) == MAX_ERRORS + 1 and lines[-1] == f"t.yaml: stopped after {MAX_ERRORS} errors"
    assert all(line.startswith("t.yaml:") and "unknown node type 'grap'" in line for line in lines[:MAX_ERRORS])


def test_a_misspelt_required_port_is_one_error_not_two():
    err = text_error("tree: t\nroot:\n  retry: {atempts: 3, child: grasp}\n")
    assert str(err).count("\n") == 0 and "unknown port 'atempts'" in err.message
