"""Writes the malformed-input corpus (tests/corpus/<kind>/...) from the recipes below.

The files are committed; this script documents how each was made and rebuilds them
(`python tests/corpus/build_corpus.py`). Layout, and the command each kind is given to:

  tree/*.yaml            bt-grasp validate FILE
  verify/*.yaml, *.xml   bt-grasp verify FILE
  include/<case>/main.yaml  bt-grasp validate main.yaml   (the other files are what it includes)
  profile/*.yaml         bt-grasp validate FILE
  trace/*.jsonl          bt-grasp dot FILE
  xml/*.xml              bt-grasp import FILE
  watchdog/<case>/       bt-grasp watchdog eval DIR
  mcp/*.json             one MCP tool call {"tool": ..., "args": {...}}
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent

OK_TREE = """tree: t
root:
  sequence:
    children:
      - open_gripper
      - finalize: {reason: done}
"""


def leaf_tree(leaf: str) -> str:
    return f"tree: t\nroot:\n  sequence:\n    children:\n      - {leaf}\n      - finalize: {{reason: done}}\n"


def laughs(levels: int = 9, width: int = 10, where: str = "root") -> str:
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    body = "\n".join("  " + ln for ln in lines)
    if where == "goal":
        return f"tree: t\ngoal:\n  object: mug\n  junk:\n{body.replace('  ', '    ', 0)}\n" \
               f"  all: *a{levels}\nroot: open_gripper\n"
    return f"tree: t\ndescription: x\nparams:\n{body}\nroot:\n  sequence:\n    children: *a{levels}\n"


def deep_flow(levels: int, inner: str = "open_gripper") -> str:
    text = inner
    for _ in range(levels):
        text = "{force_success: {child: " + text + "}}"
    return "tree: deep\nroot: " + text + "\n"


TREES: dict[str, str | bytes] = {
    # YAML syntax
    "tab_indent": "tree: t\nroot:\n\tsequence: {}\n",
    "unclosed_bracket": "tree: t\nroot: {sequence: {children: [open_gripper, finalize}\n",
    "unclosed_quote": 'tree: "t\nroot: open_gripper\n',
    "bad_indent": "tree: t\nroot:\n  sequence:\n    children:\n  - open_gripper\n   - x\n",
    "duplicate_top_key": "tree: t\ntree: u\nroot: open_gripper\n",
    "duplicate_port": "tree: t\nroot:\n  grasp: {target: a, target: b}\n",
    "merge_key": "tree: t\nbase: &b {id: x}\nroot:\n  open_gripper:\n    <<: *b\n",
    "python_tag": "tree: t\nroot: !!python/object/apply:os.system ['true']\n",
    "custom_tag": "tree: t\nroot: !node open_gripper\n",
    "set_tag": "tree: t\nroot: !!set {a, b}\n",
    "recursive_alias": "tree: t\nroot: &r\n  sequence:\n    children: [*r]\n",
    "undefined_alias": "tree: t\nroot: *nowhere\n",
    "complex_key": "tree: t\nroot:\n  ? [a, b]\n  : open_gripper\n",
    "two_documents": "tree: t\nroot: open_gripper\n---\ntree: u\nroot: open_gripper\n",
    "empty_file": "",
    "only_comments": "# nothing here\n# at all\n",
    "top_list": "- tree: t\n- root: open_gripper\n",
    "top_scalar": "just some words\n",
    "top_null": "~\n",
    "passwd_like": "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
    "directive_only": "%YAML 1.1\n---\n",
    "bad_directive": "%YAML 9.9\n---\ntree: t\nroot: open_gripper\n",
    # encodings and bytes
    "utf16_le_bom": "\ufefftree: t\nroot: open_gripper\n".encode("utf-16-le"),
    "utf16_be": "tree: t\nroot: open_gripper\n".encode("utf-16-be"),
    "utf8_bom_error": ("\ufeff" + leaf_tree("grasp: {target: mug, force: -1}")).encode("utf-8"),
    "nul_byte": b"tree: t\nroot: open\x00_gripper\n",
    "latin1": "tree: caf\xe9\nroot: open_gripper\n".encode("latin-1"),
    "binary_png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256)),
    "bell_char": b"tree: t\x07\nroot: open_gripper\n",
    "crlf_error": leaf_tree("grasp: {target: mug, force: -1}").replace("\n", "\r\n").encode(),
    "lone_cr_error": leaf_tree("grasp: {target: mug, force: -1}").replace("\n", "\r").encode(),
    "newline_in_type": 'tree: t\nroot: "open\\nroot:x:0:0:root:/root:/bin/bash"\n',
    "newline_in_key": 'tree: t\nroot:\n  "grasp\\nsecond line": {target: mug}\n',
    "long_type_name": "tree: t\nroot: " + "x" * 20000 + "\n",
    "long_string_port": leaf_tree("grasp: {target: mug, force: '" + "9" * 5000 + "'}"),
    "escape_codes": 'tree: t\nroot: "\\e[31mred\\e[0m"\n',
    # size, depth, aliases
    "deep_flow_3000": deep_flow(3000),
    "deep_flow_150": deep_flow(150),
    "deep_lists": "tree: t\nroot: " + "[" * 5000 + "]" * 5000 + "\n",
    "deep_maps_block": "tree: t\nroot:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(400)),
    "laughs_tree": laughs(),
    "laughs_goal": "tree: t\ngoal:\n  object: mug\n  bomb: &z9 [" + ", ".join(["*z8"] * 10) + "]\nroot: open_gripper\n",
    "wide_children_aliases": "tree: t\nroot:\n  sequence:\n    children: [" + ", ".join(
        ["&l open_gripper"] + ["*l"] * 20000) + "]\n",
    # numbers
    "nan_port": leaf_tree("push: {target: mug, distance: .nan}"),
    "inf_port": leaf_tree("grasp: {target: mug, force: .inf}"),
    "neg_inf_port": leaf_tree("lift: {height: -.inf}"),
    "nan_budget": "tree: t\nbudgets: {actions: .nan}\nroot: open_gripper\n",
    "huge_budget": "tree: t\nbudgets: {max_ticks: " + "9" * 400 + "}\nroot: open_gripper\n",
    "huge_int_port": leaf_tree("retry: {attempts: " + "9" * 50 + ", child: open_gripper}"),
    "float_attempts": leaf_tree("retry: {attempts: 2.0, child: open_gripper}"),
    # structure and ports
    "unknown_type": leaf_tree("grasp_hard: {target: mug}"),
    "unknown_port": leaf_tree("grasp: {target: mug, strength: 3}"),
    "missing_port": leaf_tree("locate_object: {id: l}"),
    "wrong_port_type": leaf_tree("grasp: {target: mug, force: strong}"),
    "out_of_range": leaf_tree("grasp: {target: mug, force: -1}"),
    "bad_ref": leaf_tree('grasp: {target: "{goal..object}"}'),
    "unquoted_ref": leaf_tree("grasp: {target: {goal.object}}"),
    "duplicate_id": "tree: t\nroot:\n  sequence:\n    children:\n      - open_gripper: {id: a}\n      - open_gripper: {id: a}\n",
    "empty_children": "tree: t\nroot:\n  sequence: {children: []}\n",
    "decorator_list": "tree: t\nroot:\n  retry: {attempts: 2, child: [open_gripper, open_gripper]}\n",
    "two_key_node": "tree: t\nroot:\n  sequence:\n  id: s\n",
    "unknown_top_key": "tree: t\nroots: open_gripper\n",
    "missing_tree": "root: open_gripper\n",
    "missing_root": "tree: t\n",
    "empty_tree_name": "tree: ''\nroot: open_gripper\n",
    "description_list": "tree: t\ndescription: [a, b]\nroot: open_gripper\n",
    "goal_scalar": "tree: t\ngoal: red mug\nroot: open_gripper\n",
    "negative_budget": "tree: t\nbudgets: {actions: -1}\nroot: open_gripper\n",
    "string_budget": "tree: t\nbudgets: {actions: many}\nroot: open_gripper\n",
    "unknown_budget": "tree: t\nbudgets: {action: 3}\nroot: open_gripper\n",
    "bad_param_name": "tree: t\nparams: {'a b': 1}\nroot: open_gripper\n",
    "undeclared_param": leaf_tree('grasp: {target: "${obj}"}'),
    "malformed_param": "tree: t\nparams: {obj: mug}\nroot:\n  grasp: {target: '${ob j}'}\n",
    "nodes_not_list": "tree: t\nnodes: my.mod:Cls\nroot: open_gripper\n",
    "nodes_missing_module": "tree: t\nnodes: ['no_such_pkg_xyz.mod:Cls']\nroot: open_gripper\n",
    "nodes_bad_ref": "tree: t\nnodes: ['not a reference']\nroot: open_gripper\n",
    "nodes_int": "tree: t\nnodes: [3]\nroot: open_gripper\n",
    "id_empty": leaf_tree("open_gripper: {id: ''}"),
    "id_list": leaf_tree("open_gripper: {id: [a]}"),
    "fields_list": leaf_tree("grasp: [target, mug]"),
    "node_int": leaf_tree("42"),
    "switch_no_ref": "tree: t\nroot:\n  switch:\n    on: grasp.label\n    cases: {SUCCESS: open_gripper}\n",
    "switch_bad_label": "tree: t\nroot:\n  sequence:\n    children:\n      - grasp: {target: mug}\n      - watchdog_label: {}\n      - switch:\n          on: '{grasp.label}'\n          cases: {SUCESS: open_gripper}\n          default: open_gripper\n",
    "leaf_with_child": leaf_tree("open_gripper: {child: finalize}"),
    "choices_port": leaf_tree("push: {target: mug, direction: diagonal}"),
    "empty_child": "tree: t\nroot:\n  retry: {attempts: 2, child: }\n",
    "include_non_string": "tree: t\nroot:\n  include: {file: 42}\n",
    "include_unknown_field": "tree: t\nroot:\n  include: {file: a.yaml, paramz: {}}\n",
    "include_missing_file_key": "tree: t\nroot:\n  include: {id: x}\n",
}

VERIFY: dict[str, str] = {
    "deep_3000": deep_flow(3000),
    "laughs": laughs(),
    "nan_port": leaf_tree("push: {target: mug, distance: .nan}"),
    "syntax": "tree: t\nroot: [\n",
    "unknown_type": leaf_tree("grab: {target: mug}"),
    "include_escape": "tree: t\nroot:\n  include: {file: ../../../../../../../../etc/passwd}\n",
}

PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


def inc(body: str) -> str:
    return f"tree: main\nroot:\n  sequence:\n    children:\n      - {body}\n      - finalize: {{reason: done}}\n"


INCLUDES: dict[str, dict[str, str | bytes]] = {
    "parent_escape": {"main.yaml": inc("include: {file: ../../../../../../../../../../etc/passwd}")},
    "absolute_path": {"main.yaml": inc("include: {file: /etc/passwd}")},
    "dotdot_sibling": {"main.yaml": inc("include: {file: ../parent_escape/main.yaml}")},
    "non_tree_text": {"main.yaml": inc("include: {file: notes.txt}"), "notes.txt": PASSWD * 20},
    "non_tree_yaml_list": {"main.yaml": inc("include: {file: list.yaml}"), "list.yaml": "- a\n- b\n"},
    "binary_include": {"main.yaml": inc("include: {file: blob.bin}"), "blob.bin": bytes(range(256)) * 4},
    "utf16_include": {"main.yaml": inc("include: {file: sub.yaml}"),
                      "sub.yaml": "tree: s\nroot: open_gripper\n".encode("utf-16")},
    "missing_file": {"main.yaml": inc("include: {file: nowhere.yaml}")},
    "directory": {"main.yaml": inc("include: {file: sub}"), "sub/keep.yaml": "tree: k\nroot: open_gripper\n"},
    "self_cycle": {"main.yaml": inc("include: {file: main.yaml}")},
    "two_cycle": {"main.yaml": inc("include: {file: a.yaml}"),
                  "a.yaml": "tree: a\nroot:\n  include: {file: b.yaml}\n",
                  "b.yaml": "tree: b\nroot:\n  include: {file: a.yaml}\n"},
    "error_in_included": {"main.yaml": inc("include: {file: sub.yaml}"),
                          "sub.yaml": "tree: s\nroot:\n  grasp: {target: mug, force: .nan}\n"},
    "unknown_param": {"main.yaml": inc("include: {file: sub.yaml, params: {colour: red}}"),
                      "sub.yaml": "tree: s\nparams: {obj: mug}\nroot:\n  grasp: {target: '${obj}'}\n"},
    "missing_param": {"main.yaml": inc("include: {file: sub.yaml}"),
                      "sub.yaml": "tree: s\nparams: {obj: null}\nroot:\n  grasp: {target: '${obj}'}\n"},
    "fan_out_bomb": {
        "main.yaml": inc("include: {file: l1.yaml}"),
        **{f"l{i}.yaml": f"tree: l{i}\nroot:\n  sequence:\n    children:\n"
           + "".join(f"      - include: {{file: l{i + 1}.yaml, id: i{k}}}\n" for k in range(8))
           for i in range(1, 8)},
        "l8.yaml": "tree: l8\nroot: open_gripper\n"},
    "long_chain": {
        "main.yaml": inc("include: {file: c1.yaml}"),
        **{f"c{i}.yaml": f"tree: c{i}\nroot:\n  include: {{file: c{i + 1}.yaml}}\n" for i in range(1, 40)},
        "c40.yaml": "tree: c40\nroot: open_gripper\n"},
    "laughs_in_included": {"main.yaml": inc("include: {file: sub.yaml}"), "sub.yaml": laughs()},
}

T_OK = [[0.0, -1.0, 0.0, 0.5], [-1.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.85], [0.0, 0.0, 0.0, 1.0]]


def profile(camera: dict | None = None, gripper: dict | None = None, top: dict | None = None,
            T: object = None) -> str:
    import yaml

    cam = {"width": 256, "height": 256, "fov_deg": 50.0, "near": 0.05, "far": 2.0,
           "T_cam_base": T if T is not None else T_OK, **(camera or {})}
    data = {"name": "p", "driver": "pybullet_arm", "camera": cam,
            "gripper": {"min_aperture_m": 0.0, "max_aperture_m": 0.085, "max_force_n": 100.0, **(gripper or {})},
            **(top or {})}
    return yaml.safe_dump(data, default_flow_style=None, sort_keys=False)


PROFILES: dict[str, str | bytes] = {
    "T_3x3": profile(T=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    "T_4x3": profile(T=[row[:3] for row in T_OK]),
    "T_ragged": profile(T=[T_OK[0], T_OK[1][:2], T_OK[2], T_OK[3]]),
    "T_not_rotation": profile(T=[[2.0, 0.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.85], [0, 0, 0, 1]]),
    "T_reflection": profile(T=[[1.0, 0.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.85], [0, 0, 0, 1]]),
    "T_bad_last_row": profile(T=[T_OK[0], T_OK[1], T_OK[2], [0.0, 0.0, 1.0, 1.0]]),
    "T_nan": profile(T=[[float("nan"), -1.0, 0.0, 0.5], T_OK[1], T_OK[2], T_OK[3]]),
    "T_string": profile(T=[["a", "b", "c", "d"], T_OK[1], T_OK[2], T_OK[3]]),
    "T_missing": profile(camera={"T_cam_base": None}),
    "aperture_order": profile(gripper={"min_aperture_m": 0.09, "max_aperture_m": 0.085}),
    "negative_force": profile(gripper={"max_force_n": -5.0}),
    "inf_force": profile(gripper={"max_force_n": float("inf")}),
    "near_far": profile(camera={"near": 3.0, "far": 2.0}),
    "fov_zero": profile(camera={"fov_deg": 0}),
    "fov_200": profile(camera={"fov_deg": 200}),
    "width_zero": profile(camera={"width": 0}),
    "width_huge": profile(camera={"width": 10 ** 9}),
    "unknown_key": profile(top={"colour": "red"}),
    "unknown_camera_key": profile(camera={"exposure": 3}),
    "missing_camera": "name: p\ndriver: pybullet_arm\n",
    "unknown_driver": profile(top={"driver": "warp_drive"}),
    "name_list": profile(top={"name": ["a"]}),
    "watchdog_list": profile(top={"watchdog": [1, 2]}),
    "not_mapping": "- a\n- b\n",
    "syntax_error": "name: p\ncamera: {width: 3\n",
    "empty": "",
    "utf16": profile().encode("utf-16"),
    "laughs": "name: p\ndriver: pybullet_arm\nwatchdog:\n  a0: &a0 [1]\n" + "".join(
        f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10)) + "camera: {}\n",
    "deep": "name: p\ndriver: pybullet_arm\ndriver_options: " + "[" * 4000 + "]" * 4000 + "\n",
}

HEADER = {"type": "header", "tree": "t", "structure": {"id": "root", "type": "open_gripper", "params": {}}}
TICK = {"type": "tick", "tick": 1, "clock": 0.1, "visited": [["root", "SUCCESS"]], "blackboard": {},
        "events": []}


def jl(*records: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


TRACES: dict[str, str | bytes] = {
    "binary": bytes(range(256)) * 8,
    "utf16": jl(HEADER, TICK).encode("utf-16"),
    "empty": "",
    "blank_lines": "\n\n\n",
    "no_header": jl(TICK),
    "header_no_structure": jl({"type": "header", "tree": "t"}, TICK),
    "structure_list": jl({**HEADER, "structure": [1, 2]}, TICK),
    "structure_no_id": jl({**HEADER, "structure": {"type": "sequence", "children": [{"type": "x"}]}}, TICK),
    "structure_deep": jl('{"type": "header", "tree": "t", "structure": '
                         + '{"id": "a", "type": "x", "children": [' * 3000 + '{"id": "b", "type": "y"}'
                         + "]}" * 3000 + "}", TICK),
    "deep_json": jl(HEADER, '{"type": "tick", "x": ' + "[" * 100000 + "]" * 100000 + "}"),
    "invalid_json_middle": jl(HEADER, "{not json", TICK),
    "array_line": jl(HEADER, [1, 2, 3], TICK),
    "string_line": jl(HEADER, '"tick"', TICK),
    "unknown_type": jl(HEADER, {**TICK, "type": "tock"}),
    "visited_string": jl(HEADER, {**TICK, "visited": "root"}),
    "visited_bad_pair": jl(HEADER, {**TICK, "visited": [["root"]]}),
    "visited_numbers": jl(HEADER, {**TICK, "visited": [[1, 2]]}),
    "tick_string": jl(HEADER, {**TICK, "tick": "one"}),
    "clock_string": jl(HEADER, {**TICK, "clock": "soon"}),
    "events_not_list": jl(HEADER, {**TICK, "events": {"a": 1}}),
    "event_not_dict": jl(HEADER, {**TICK, "events": [3]}),
    "header_type_int": jl({**HEADER, "type": 3}, TICK),
    "nul_bytes": (jl(HEADER) + "\x00\x00\x00\n" + jl(TICK)).encode(),
    "final_not_dict_reason": jl(HEADER, TICK, {"type": "final", "decision": ["x"], "reason": {"a": 1}}),
    "tree_name_dict": jl({**HEADER, "tree": {"a": 1}}, TICK),
    "structure_children_not_list": jl({**HEADER, "structure": {"id": "a", "type": "sequence", "children": 5}}),
    "structure_cases_not_dict": jl({**HEADER, "structure": {"id": "a", "type": "switch", "cases": [1]}}),
}

XML_HEAD = '<?xml version="1.0"?>\n'


def bt(body: str, head: str = "") -> str:
    return XML_HEAD + head + ('<root BTCPP_format="4" main_tree_to_execute="Main">\n'
                              '  <BehaviorTree ID="Main">\n' + body + "\n  </BehaviorTree>\n</root>\n")


XMLS: dict[str, str | bytes] = {
    "dtd_internal": bt("    <AlwaysSuccess/>", '<!DOCTYPE root [<!ENTITY e "x">]>\n'),
    "dtd_external_param": bt("    <AlwaysSuccess/>",
                             '<!DOCTYPE root [<!ENTITY % ext SYSTEM "file:///etc/passwd"> %ext;]>\n'),
    "dtd_external_system": bt("    <AlwaysSuccess name=\"&xxe;\"/>",
                              '<!DOCTYPE root [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'),
    "dtd_public": bt("    <AlwaysSuccess/>", '<!DOCTYPE root PUBLIC "-//x//y" "http://example.com/x.dtd">\n'),
    "xml_laughs": bt("    <AlwaysSuccess name=\"&l9;\"/>", "<!DOCTYPE root [\n<!ENTITY l0 \"lol\">\n" + "".join(
        f"<!ENTITY l{i} \"" + f"&l{i - 1};" * 10 + "\">\n" for i in range(1, 10)) + "]>\n"),
    "malformed": bt("    <Sequence><AlwaysSuccess></Sequence>"),
    "unclosed_root": XML_HEAD + '<root BTCPP_format="4">\n  <BehaviorTree ID="Main">\n',
    "empty": "",
    "not_xml": "tree: t\nroot: open_gripper\n",
    "binary": bytes(range(256)) * 4,
    "utf16": bt('    <Sequence>\n      <grasp target="mug" force="-3"/>\n      <finalize reason="d"/>\n    </Sequence>').replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>').encode("utf-16"),
    "latin1_undeclared": bt('    <AlwaysSuccess name="caf\xe9"/>').encode("latin-1"),
    "nul_byte": bt("    <AlwaysSuccess/>").encode().replace(b"Always", b"Alw\x00ays"),
    "wrong_root": XML_HEAD + "<tree><BehaviorTree ID=\"Main\"><AlwaysSuccess/></BehaviorTree></tree>\n",
    "btcpp_v3": XML_HEAD + '<root main_tree_to_execute="Main" BTCPP_format="3">\n<BehaviorTree ID="Main"><AlwaysSuccess/></BehaviorTree></root>\n',
    "no_behaviortree": XML_HEAD + '<root BTCPP_format="4"/>\n',
    "main_missing": XML_HEAD + '<root BTCPP_format="4" main_tree_to_execute="Nope">\n<BehaviorTree ID="Main"><AlwaysSuccess/></BehaviorTree></root>\n',
    "two_roots_in_tree": bt("    <AlwaysSuccess/>\n    <AlwaysFailure/>"),
    "empty_sequence": bt("    <Sequence/>"),
    "retry_text": bt('    <RetryUntilSuccessful num_attempts="abc"><AlwaysSuccess/></RetryUntilSuccessful>'),
    "retry_nan": bt('    <RetryUntilSuccessful num_attempts="nan"><AlwaysSuccess/></RetryUntilSuccessful>'),
    "retry_negative": bt('    <RetryUntilSuccessful num_attempts="-5"><AlwaysSuccess/></RetryUntilSuccessful>'),
    "timeout_text": bt('    <Timeout msec="soon"><AlwaysSuccess/></Timeout>'),
    "subtree_missing": bt('    <SubTree ID="Nowhere"/>'),
    "subtree_recursive": XML_HEAD + '<root BTCPP_format="4" main_tree_to_execute="Main">\n'
                         '<BehaviorTree ID="Main"><SubTree ID="Main"/></BehaviorTree></root>\n',
    "deep_3000": bt("<Sequence>" * 3000 + "<AlwaysSuccess/>" + "</Sequence>" * 3000),
    "deep_inverters": bt("<Inverter>" * 3000 + "<AlwaysSuccess/>" + "</Inverter>" * 3000),
    "decorator_two_children": bt("    <Inverter><AlwaysSuccess/><AlwaysFailure/></Inverter>"),
    "grasp_nan_force": bt('    <Sequence>\n      <grasp target="mug" force="nan"/>\n      <finalize reason="d"/>\n    </Sequence>'),
    "grasp_negative_force": bt('    <Sequence>\n      <grasp target="mug" force="-3"/>\n      <finalize reason="d"/>\n    </Sequence>'),
    "grasp_unknown_port": bt('    <Sequence>\n      <grasp target="mug" strength="3"/>\n      <finalize reason="d"/>\n    </Sequence>'),
    "processing_instruction_only": XML_HEAD + "<?foo bar?>\n",
}

MCP: dict[str, dict] = {
    "push_direction": {"tool": "push", "args": {"target": "mug", "direction": "diagonal"}},
    "push_distance_big": {"tool": "push", "args": {"target": "mug", "distance": 5.0}},
    "push_distance_nan": {"tool": "push", "args": {"target": "mug", "distance": "NaN"}},
    "push_distance_string": {"tool": "push", "args": {"target": "mug", "distance": "far"}},
    "push_extra": {"tool": "push", "args": {"target": "mug", "speed": 3}},
    "lift_negative": {"tool": "lift", "args": {"height": -1.0}},
    "lift_high": {"tool": "lift", "args": {"height": 3.0}},
    "grasp_force_huge": {"tool": "grasp", "args": {"target": "mug", "force": 1e9}},
    "grasp_force_negative": {"tool": "grasp", "args": {"target": "mug", "force": -1}},
    "grasp_extra": {"tool": "grasp", "args": {"target": "mug", "grip": "hard"}},
    "target_long": {"tool": "locate_object", "args": {"target": "red " * 300}},
    "target_int": {"tool": "locate_object", "args": {"target": 42}},
    "target_missing": {"tool": "locate_object", "args": {}},
    "finish_decision": {"tool": "finish", "args": {"decision": "MAYBE"}},
    "finish_extra": {"tool": "finish", "args": {"decision": "FINALIZE", "why": "x"}},
    "reset_negative": {"tool": "reset_episode", "args": {"episode": -1}},
    "reset_float": {"tool": "reset_episode", "args": {"seed": 1.5}},
    "status_extra": {"tool": "status", "args": {"verbose": True}},
    "place_long": {"tool": "place", "args": {"target": "b" * 1000}},
}


def _write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))


def watchdog_cases(root: Path) -> None:
    good = json.dumps({"id": "00000", "file": "00000.npz", "label": "SUCCESS"})
    cases: dict[str, dict[str, str | bytes]] = {
        "no_index": {"readme.txt": "no index here\n"},
        "bad_json": {"index.jsonl": good + "\n{broken\n"},
        "bad_label": {"index.jsonl": json.dumps({"id": "1", "file": "1.npz", "label": "HAPPY"}) + "\n"},
        "missing_npz": {"index.jsonl": json.dumps({"id": "1", "file": "1.npz", "label": "EMPTY"}) + "\n"},
        "corrupt_npz": {"index.jsonl": json.dumps({"id": "1", "file": "1.npz", "label": "EMPTY"}) + "\n",
                        "1.npz": b"PK\x03\x04 this is not really a zip"},
        "escape_file": {"index.jsonl": json.dumps({"id": "1", "file": "../../../../../../etc/passwd",
                                                   "label": "EMPTY"}) + "\n"},
        "index_binary": {"index.jsonl": bytes(range(256))},
        "entry_list": {"index.jsonl": "[1, 2]\n"},
    }
    for name, files in cases.items():
        for rel, content in files.items():
            _write(root / name / rel, content)


def main() -> None:
    for kind in ("tree", "verify", "include", "profile", "trace", "xml", "watchdog", "mcp"):
        shutil.rmtree(HERE / kind, ignore_errors=True)
    for name, text in TREES.items():
        _write(HERE / "tree" / f"{name}.yaml", text)
    for name, text in VERIFY.items():
        _write(HERE / "verify" / f"{name}.yaml", text)
    for name in ("grasp_nan_force", "dtd_external_param", "deep_inverters", "retry_negative"):
        _write(HERE / "verify" / f"xml_{name}.xml", XMLS[name])
    for case, files in INCLUDES.items():
        for rel, text in files.items():
            _write(HERE / "include" / case / rel, text)
    for name, text in PROFILES.items():
        _write(HERE / "profile" / f"{name}.yaml", text)
    for name, text in TRACES.items():
        _write(HERE / "trace" / f"{name}.jsonl", text)
    for name, text in XMLS.items():
        _write(HERE / "xml" / f"{name}.xml", text)
    for name, call in MCP.items():
        _write(HERE / "mcp" / f"{name}.json", json.dumps(call) + "\n")
    watchdog_cases(HERE / "watchdog")


if __name__ == "__main__":
    main()
