"""Property: for random trees over every exportable node type, import(export(t)) == t."""

from __future__ import annotations

import itertools
import re

import xmlschema
import yaml
from helpers import node_diff, spec_of, write_xml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_grasp.interop.btcpp_export import export_spec
from bt_grasp.interop.btcpp_import import import_btcpp
from bt_grasp.interop.btcpp_xsd import document_xsd
from bt_grasp.outcomes import LABELS
from bt_grasp.spec.model import looks_like_ref

# Plain text, not a blackboard reference. BT.CPP strips surrounding spaces before it looks for
# braces (the importer strips all whitespace), so " {x}" is a reference to it too: no literal
# of that shape survives the trip: the exporter refuses it (tests/test_btcpp_cli.py).
TEXT = st.text(alphabet="ab <>&\"'\n{}é/.", min_size=1, max_size=12).filter(
    lambda s: s.strip() and not looks_like_ref(s) and not looks_like_ref(s.strip()))
OUTCOMES = st.lists(st.sampled_from(["success", "failure", "running"]), min_size=1, max_size=3,
                    unique=True)
BTCPP_IDS = st.sampled_from(["Spin", "Wait", "BackUp", "FollowPath", "IsStuck", "MyPlugin"])

leaf = st.one_of(
    st.builds(lambda f: {"grasp": {"force": f}},
              st.floats(0, 200, allow_nan=False) | st.sampled_from([1e-05, 2.5e-07, 1e16])),
    st.builds(lambda h, o: {"lift": {"height": h, "outcome": o}}, st.sampled_from([0.0, 0.15, 0.3]),
              st.sampled_from(["lift.outcome", "{lift.outcome}"])),
    st.builds(lambda r: {"finalize": {"reason": r}}, TEXT),
    st.builds(lambda lab: {"label_is": {"key": "{grasp.label}", "label": lab}}, st.sampled_from(LABELS)),
    st.builds(lambda i, o, p: {"opaque_action": {"btcpp_id": i, "outcomes": o, "ports": p}},
              BTCPP_IDS, OUTCOMES, st.none() | st.dictionaries(st.sampled_from(["a", "b_c"]), TEXT,
                                                               min_size=1)),
    st.builds(lambda i: {"opaque_condition": {"btcpp_id": i}}, BTCPP_IDS),
)


def _extend(children):
    many = st.lists(children, min_size=1, max_size=3)
    return st.one_of(
        st.builds(lambda t, c: {t: {"memory": True, "children": c}},
                  st.sampled_from(["sequence", "selector"]), many),
        # memory: false is the reactive composite: it comes back as reactive_* (test_btcpp_roundtrip)
        st.builds(lambda t, c: {t: {"children": c}},
                  st.sampled_from(["reactive_sequence", "reactive_selector"]), many),
        st.builds(lambda p, c: {"parallel": {"policy": p, "children": c}},
                  st.sampled_from(["success_on_all", "success_on_one"]), many),
        st.builds(lambda n, a, b: {"recovery_node": {"number_of_retries": n, "children": [a, b]}},
                  st.integers(0, 3), children, children),
        st.builds(lambda t, c: {t: {"children": c}},
                  st.sampled_from(["pipeline_sequence", "round_robin"]), many),
        st.builds(lambda a, s, c: {"retry": {"attempts": a, "child": c, **({"scope": s} if s else {})}},
                  st.integers(1, 5), st.none() | st.sampled_from(["x", "y"]), children),
        st.builds(lambda n, c: {"btcpp_retry": {"num_attempts": n, "child": c}},
                  st.integers(-1, 4), children),
        st.builds(lambda n, c: {"repeat": {"times": n, "child": c} if n else {"child": c}},
                  st.none() | st.integers(1, 3), children),
        st.builds(lambda s, c: {"timeout": {"seconds": s, "child": c}},
                  st.sampled_from([0.0, 0.0125, 1.5, 30.0]), children),
        st.builds(lambda t, c: {t: {"child": c}},
                  st.sampled_from(["inverter", "force_success", "force_failure"]), children),
        st.builds(lambda a, c: {"budget": {"actions": a, "scope": "s", "child": c}},
                  st.integers(0, 4), children),
        st.builds(lambda i, c: {"opaque_decorator": {"btcpp_id": i, "ports": {"hz": "1.0"},
                                                     "child": c}},
                  st.sampled_from(["RateController", "GoalUpdater"]), children),
        st.builds(lambda cases, d: {"switch": {"on": "{grasp.label}", "cases": cases,
                                               **({"default": d} if d else {})}},
                  st.dictionaries(st.sampled_from(LABELS), children, min_size=1, max_size=3),
                  st.none() | children),
    )


trees = st.recursive(leaf, _extend, max_leaves=8)


def _with_ids(node, counter):
    """Give every node an explicit unique id (the generator does not track them)."""
    (t, fields), = node.items()
    fields = dict(fields)
    fields["id"] = f"n{next(counter)}"
    if "children" in fields:
        fields["children"] = [_with_ids(c, counter) for c in fields["children"]]
    if "child" in fields:
        fields["child"] = _with_ids(fields["child"], counter)
    if "cases" in fields:
        fields["cases"] = {k: _with_ids(v, counter) for k, v in fields["cases"].items()}
    if fields.get("default"):
        fields["default"] = _with_ids(fields["default"], counter)
    return {t: fields}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(root=trees, budget=st.integers(0, 20), desc=st.none() | TEXT)
def test_random_trees_round_trip(tmp_path, root, budget, desc):
    data = {"tree": "prop", "budgets": {"actions": budget}, "goal": {"object": "red mug"},
            "root": _with_ids(root, itertools.count(1))}
    if desc:
        data["description"] = desc
    original = spec_of(yaml.safe_dump(data, sort_keys=False))
    text = export_spec(original)
    if not re.search(r"<(Action|Condition|Decorator) ID=", text.split("<TreeNodesModel")[0]):
        # Compact form throughout (one opaque ID never used as two kinds): BT.CPP's XSD applies.
        errors = list(xmlschema.XMLSchema(document_xsd(text)).iter_errors(text))
        assert errors == [], str(errors[0])
    back = spec_of(import_btcpp(write_xml(tmp_path, text)))
    assert node_diff(original.root, back.root) == []
    assert original.root == back.root
    assert (original.budgets, original.goal, original.description) == (
        back.budgets, back.goal, back.description)
