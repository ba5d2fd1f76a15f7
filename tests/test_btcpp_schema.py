"""Exported BT.CPP XML validates against the XSD BT.CPP v4 generates (`writeTreeXSD`) for its nodes.

No BT.CPP build is needed: interop.btcpp_xsd rebuilds that closed schema from node models and
`xmlschema` validates against it. Each shipped tree is checked against two schemas — one from
the document's own <TreeNodesModel>, one from the whole registry (what a C++ port of every
bt_grasp node would register) — and the schema is shown to refuse what BT.CPP's refuses.
"""

from __future__ import annotations

import re

import pytest
import xmlschema
from helpers import BTCPP_DATA, ROOT, spec_of, write_xml

from bt_grasp.interop.btcpp_export import export_btcpp, export_spec
from bt_grasp.interop.btcpp_import import import_btcpp, import_spec
from bt_grasp.interop.btcpp_xsd import BUILTIN_MODELS, document_xsd, registry_xsd
from bt_grasp.interop.common import interop_registry

YAML_TREES = sorted([*(ROOT / "trees").rglob("*.yaml"),
                     *(ROOT / "tests" / "data" / "trees" / "good").glob("*.yaml")])
XML_TREES = sorted(BTCPP_DATA.glob("*.xml"))


@pytest.fixture(scope="module")
def registry_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(registry_xsd(interop_registry()))


def _errors(schema: xmlschema.XMLSchema, text: str) -> list[str]:
    return [str(e).splitlines()[0] for e in schema.iter_errors(text)]


def test_there_are_shipped_trees():
    assert len([p for p in YAML_TREES if "tests" not in p.parts]) >= 8


@pytest.mark.parametrize("path", YAML_TREES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shipped_tree_validates(registry_schema, path):
    text = export_btcpp(path)
    assert _errors(registry_schema, text) == []
    assert _errors(xmlschema.XMLSchema(document_xsd(text)), text) == []


@pytest.mark.parametrize("path", XML_TREES, ids=lambda p: p.name)
def test_reexported_nav2_trees_validate(path):
    text = export_spec(import_spec(path))
    assert _errors(xmlschema.XMLSchema(document_xsd(text)), text) == []


def _clutter() -> str:
    return export_btcpp(ROOT / "trees" / "clutter.yaml")


def test_the_schema_refuses_bt_grasp_attributes_on_nodes(registry_schema):
    text = re.sub(r'(<RetryUntilSuccessful [^>]*?)(/?>)', r'\1 _bt_grasp_refill="false"\2', _clutter(), count=1)
    assert "_bt_grasp_refill" in text
    assert any("_bt_grasp_refill" in e for e in _errors(registry_schema, text))


def test_the_schema_refuses_attributes_on_behaviortree(registry_schema):
    text = _clutter().replace('<BehaviorTree ID="clutter"', '<BehaviorTree ID="clutter" _description="x"')
    assert _errors(registry_schema, text)


def test_the_schema_refuses_a_default_on_an_output_port(registry_schema):
    text = _clutter().replace('<output_port name="outcome"', '<output_port name="outcome" default="{x}"', 1)
    assert any("default" in e for e in _errors(registry_schema, text))


def test_the_schema_refuses_undeclared_missing_and_mistyped_ports(registry_schema):
    good = _clutter()
    grasp = re.search(r"<grasp [^>]*/>", good).group(0)
    undeclared = good.replace(grasp, grasp.replace("<grasp ", '<grasp colour="red" '))
    assert _errors(registry_schema, undeclared)
    missing = good.replace(grasp, re.sub(r' reason="[^"]*"', "", grasp))
    assert _errors(registry_schema, missing)  # derived outputs are required, as BT.CPP's XSD says
    mistyped = good.replace(grasp, re.sub(r'force="[^"]*"', 'force="strong"', grasp))
    assert _errors(registry_schema, mistyped)
    bad_count = re.sub(r'num_attempts="\d+"', 'num_attempts="twice"', good, count=1)
    assert _errors(registry_schema, bad_count)


def test_the_processing_instruction_is_outside_the_schema(registry_schema):
    text = _clutter()
    assert text.splitlines()[1].startswith("<?bt_grasp ")
    assert _errors(registry_schema, text) == []


def test_tiny_floats_and_question_marks_survive(tmp_path):
    """xs:decimal has no exponent, and "?>" would end the instruction early."""
    spec = spec_of("""
tree: t
description: "why?> because"
root:
  sequence:
    children:
      - grasp: {id: g, force: 1.0e-05}
      - finalize: {id: done, reason: "ok?>"}
""")
    text = export_spec(spec)
    assert 'force="0.00001"' in text and "?>\n<root" in text
    assert _errors(xmlschema.XMLSchema(document_xsd(text)), text) == []
    back = spec_of(import_btcpp(write_xml(tmp_path, text)))
    assert back.description == "why?> because"
    assert back.root == spec.root


def test_builtin_manifests_follow_btcpp():
    parallel = BUILTIN_MODELS["Parallel"].ports
    assert (parallel["success_count"].default, parallel["failure_count"].default) == ("-1", "1")
    assert BUILTIN_MODELS["RetryUntilSuccessful"].ports["num_attempts"].default is None
    assert BUILTIN_MODELS["Timeout"].kind == "Decorator"
    assert set(BUILTIN_MODELS["Switch3"].ports) == {"variable", "case_1", "case_2", "case_3"}


def test_old_attribute_documents_still_import(tmp_path):
    """Files written before the metadata moved to <?bt_grasp?> keep their meaning."""
    xml = write_xml(tmp_path, """
        <root BTCPP_format="4" main_tree_to_execute="t">
          <BehaviorTree ID="t" _bt_grasp_exported="true" _bt_grasp_actions="2">
            <RetryUntilSuccessful name="r" num_attempts="2" _bt_grasp_refill="false">
              <finalize name="done" reason="ok"/>
            </RetryUntilSuccessful>
          </BehaviorTree>
        </root>""")
    spec = spec_of(import_btcpp(xml))
    assert spec.root.type == "retry" and spec.budgets.actions == 2
