"""The JSON Schema of tree files: built from pydantic models per node type, useful to editors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from bt_strategies import BUILTIN_REG, BUILTIN_TREES, number_ids
from hypothesis import given, settings
from pydantic import ValidationError

from bt_grasp.registry import NodeType, Port
from bt_grasp.spec.loader import copy_registry
from bt_grasp.spec.schema import build_models, tree_json_schema
from bt_grasp.spec.yaml_pos import load_positioned, plain

GOOD = Path(__file__).parent / "data" / "trees" / "good"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return tree_json_schema(BUILTIN_REG)


def test_schema_is_json_and_names_the_top_level_keys(schema):
    json.dumps(schema)
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert set(schema["properties"]) == {"tree", "description", "goal", "budgets", "params",
                                         "nodes", "root"}
    assert schema["required"] == ["tree", "root"]
    assert schema["additionalProperties"] is False


def test_nodes_are_one_of_single_key_objects_or_bare_leaf_names(schema):
    node = schema["$defs"]["Node"]
    refs = [alt["$ref"] for alt in node["oneOf"] if "$ref" in alt]
    assert "#/$defs/RetryNode" in refs and "#/$defs/IncludeNode" in refs
    bare = next(alt for alt in node["oneOf"] if alt.get("type") == "string")["enum"]
    assert "survey_scene" in bare and "locate_object" not in bare  # target is required
    retry_node = schema["$defs"]["RetryNode"]
    assert retry_node["required"] == ["retry"] and retry_node["additionalProperties"] is False


def test_ports_carry_types_defaults_descriptions_and_enums(schema):
    defs = schema["$defs"]
    retry = defs["RetryFields"]
    assert set(retry["required"]) == {"attempts", "child"}
    attempts = retry["properties"]["attempts"]
    assert {"type": "integer", "minimum": 1} in attempts["anyOf"]
    assert "never refilled" in attempts["description"]
    assert retry["properties"]["child"] == {"$ref": "#/$defs/Node"}
    policy = defs["ParallelFields"]["properties"]["policy"]
    assert policy["default"] == "success_on_all"
    assert {"enum": ["success_on_all", "success_on_one"], "type": "string"} in policy["anyOf"]
    assert defs["SequenceFields"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert defs["SwitchFields"]["properties"]["cases"]["additionalProperties"] == {"$ref": "#/$defs/Node"}
    distance = defs["PushFields"]["properties"]["distance"]
    assert {"type": "number", "minimum": 0.03, "maximum": 0.2} in distance["anyOf"]
    assert defs["BudgetsFields"]["properties"]["actions"]["minimum"] == 0


def test_user_node_types_appear_in_the_schema():
    reg = copy_registry(BUILTIN_REG)
    reg.add(NodeType("wave_hand", "action", {"times": Port("times", "int", default=1)}))
    schema = tree_json_schema(reg)
    assert "WaveHandFields" in schema["$defs"]
    assert "wave_hand" in next(a for a in schema["$defs"]["Node"]["oneOf"] if "enum" in a)["enum"]


@pytest.mark.parametrize("path", sorted(GOOD.glob("*.yaml")), ids=lambda p: p.name)
def test_good_trees_validate_against_the_models(path: Path):
    tree_model, _ = build_models(BUILTIN_REG)
    # the loader's YAML reading (keys stay strings: `on:` is not `true:`), as YAML 1.2 editors do
    tree_model.model_validate(plain(load_positioned(path.read_text(), str(path))))


def test_the_models_reject_an_unknown_port():
    tree_model, _ = build_models(BUILTIN_REG)
    with pytest.raises(ValidationError):
        tree_model.model_validate({"tree": "t", "root": {"retry": {"atempts": 2, "child": "grasp"}}})


@settings(max_examples=40, deadline=None)
@given(root=BUILTIN_TREES)
def test_random_valid_trees_validate_against_the_models(root: Any):
    number_ids(root, [0])
    tree_model, _ = build_models(BUILTIN_REG)
    tree_model.model_validate({"tree": "generated", "root": yaml.safe_load(yaml.safe_dump(root))})
