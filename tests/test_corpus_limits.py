"""What the loader's limits still allow: the corpus shows what they refuse, these pin that
ordinary inputs near them keep working (docs/tree-format.md, "Limits")."""

from __future__ import annotations

import pytest

from bt_grasp.errors import UserError
from bt_grasp.profile import validate_profile
from bt_grasp.spec.loader import load_tree, load_tree_text
from bt_grasp.spec.parse import MAX_TREE_DEPTH
from bt_grasp.trace import read_trace

LEAF = "tree: leaf\nroot: open_gripper\n"


def chain(levels: int) -> str:
    text = "{finalize: {reason: done}}"
    for _ in range(levels):
        text = "{force_success: {child: " + text + "}}"
    return "tree: deep\nroot: " + text + "\n"


def test_a_tree_at_the_depth_limit_loads_and_verifies_one_deeper_is_refused():
    from bt_grasp.verifier_api import verify_tree

    spec = load_tree_text(chain(MAX_TREE_DEPTH - 1))
    assert verify_tree(spec).proven
    with pytest.raises(UserError, match=f"deeper than {MAX_TREE_DEPTH} nodes"):
        load_tree_text(chain(MAX_TREE_DEPTH))


def test_includes_read_the_trees_folder_and_configured_search_paths_only(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "leaf.yaml").write_text(LEAF)
    project = tmp_path / "project"
    project.mkdir()
    main = project / "main.yaml"
    main.write_text("tree: main\nroot:\n  include: {file: leaf.yaml}\n")
    with pytest.raises(UserError, match="not found"):
        load_tree(main)
    assert load_tree(main, include_paths=[shared]).root.type == "open_gripper"
    monkeypatch.setenv("BT_GRASP_INCLUDE_PATH", str(shared))
    assert load_tree(main).includes == [str(shared / "leaf.yaml")]
    main.write_text("tree: main\nroot:\n  include: {file: ../shared/leaf.yaml}\n")
    monkeypatch.delenv("BT_GRASP_INCLUDE_PATH")
    with pytest.raises(UserError, match="outside the folders includes may read"):
        load_tree(main)


def test_a_root_marker_lets_subfolders_include_from_above(tmp_path):
    (tmp_path / ".bt-grasp-root").write_text("")
    (tmp_path / "leaf.yaml").write_text(LEAF)
    (tmp_path / "sub").mkdir()
    sub = tmp_path / "sub" / "main.yaml"
    sub.write_text("tree: main\nroot:\n  include: {file: ../leaf.yaml}\n")
    assert load_tree(sub).root.type == "open_gripper"


def test_a_symlink_out_of_the_include_root_is_refused(tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text(LEAF)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "link.yaml").symlink_to(outside)
    main = tmp_path / "p" / "main.yaml"
    main.write_text("tree: main\nroot:\n  include: {file: link.yaml}\n")
    with pytest.raises(UserError, match="outside"):
        load_tree(main)


def test_modest_aliases_and_a_utf8_bom_still_load(tmp_path):
    text = ("tree: t\nparams: {x: &leaf open_gripper}\nroot:\n  sequence:\n    children: [*leaf, *leaf, "
            "{finalize: {reason: done}}]\n")
    assert len(load_tree_text(text).root.children) == 3
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + LEAF.encode())
    assert load_tree(path).name == "leaf"


def test_profile_errors_point_at_the_field(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("name: p\ndriver: pybullet_arm\ncamera:\n  near: 0.1\n  far: 0.05\n"
                    "  T_cam_base: [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]\n")
    with pytest.raises(UserError) as err:
        validate_profile(path)
    assert (err.value.line, err.value.col) == (5, 8)
    assert "camera.far" in str(err.value) and "greater than near" in str(err.value)


def test_a_later_header_line_refines_the_early_one(tmp_path):
    path = tmp_path / "t.jsonl"
    structure = '{"id": "a", "type": "open_gripper"}'
    path.write_text('{"type": "header", "tree": "t", "structure": ' + structure + ', "goal": {}}\n'
                    '{"type": "header", "tree": "t", "goal": {"object": "mug"}, "run_id": "r1"}\n'
                    '{"type": "tick", "tick": 1, "clock": 0.1, "visited": [["a", "SUCCESS"]]}\n')
    t = read_trace(path)
    assert t.header["goal"] == {"object": "mug"} and t.header["run_id"] == "r1"
    assert t.header["structure"]["id"] == "a" and len(t.ticks) == 1
