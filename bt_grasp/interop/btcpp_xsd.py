"""The XSD BehaviorTree.CPP v4 would generate (`writeTreeXSD`) for our node models.

BT.CPP writes a closed schema from its factory's manifests: one element per registered node ID
in the compact form (`<grasp .../>`, never `<Action ID="grasp">`), whose attributes are `name`,
the pre/post-condition scripts and exactly the node's ports — input ports typed by their C++ type
(int / double / bool / std::string, or a `{blackboard}` reference), output ports always a
`{blackboard}` reference, required unless they have a default. `<BehaviorTree>` takes only `ID`,
`<root>` only `BTCPP_format` and `main_tree_to_execute`, and a `<TreeNodesModel>` entry only
`input_port` / `output_port` elements and one `<description>`.

This module rebuilds that schema from node models — the `<TreeNodesModel>` of an exported
document (`document_xsd`) or the whole registry (`registry_xsd`) — plus the manifests of the BT.CPP
built-ins the exporter uses, so exported files can be checked with a pure-Python validator
(`xmlschema`) where no BT.CPP build is at hand.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from bt_grasp.interop.btcpp_export import CPP_TYPES, registry_ports
from bt_grasp.interop.common import BUDGET_DECORATOR, NAV2_CONTROLS
from bt_grasp.registry import Registry

Kind = str  # Action | Condition | Control | Decorator | SubTree


@dataclass(frozen=True)
class PortSpec:
    direction: str               # input | output
    default: str | None = None   # None: no default, so the attribute is required
    cpp_type: str | None = None  # "int", "double", "bool", "std::string" or unknown


@dataclass
class NodeModel:
    kind: Kind
    ports: dict[str, PortSpec] = field(default_factory=dict)


def _builtins() -> dict[str, NodeModel]:
    """Manifests of the BT.CPP v4 built-ins bt_grasp exports to (ports as in providedPorts())."""
    int_in = PortSpec("input", None, "int")
    models = {tag: NodeModel("Control") for tag in (
        "Sequence", "ReactiveSequence", "SequenceWithMemory", "Fallback", "ReactiveFallback")}
    models["Parallel"] = NodeModel("Control", {"success_count": PortSpec("input", "-1", "int"),
                                               "failure_count": PortSpec("input", "1", "int")})
    for n in range(2, 7):
        ports = {"variable": PortSpec("input", None, "std::string")}
        ports.update({f"case_{i}": PortSpec("input", None, "std::string") for i in range(1, n + 1)})
        models[f"Switch{n}"] = NodeModel("Control", ports)
    models["RetryUntilSuccessful"] = NodeModel("Decorator", {"num_attempts": int_in})
    models["Repeat"] = NodeModel("Decorator", {"num_cycles": int_in})
    models["Timeout"] = NodeModel("Decorator", {"msec": PortSpec("input", None, "unsigned int")})
    for tag in ("Inverter", "ForceSuccess", "ForceFailure"):
        models[tag] = NodeModel("Decorator")
    for tag in ("AlwaysSuccess", "AlwaysFailure"):
        models[tag] = NodeModel("Action")
    models["SubTree"] = NodeModel("SubTree")
    return models


BUILTIN_MODELS = _builtins()


def _attr_type(port: PortSpec) -> str | None:
    if port.direction != "input":
        return "blackboardType"
    return {"int": "integerOrBlackboardType", "unsigned int": "integerOrBlackboardType",
            "double": "decimalOrBlackboardType", "bool": "booleanOrBlackboardType",
            "std::string": "stringOrBlackboardType"}.get(port.cpp_type or "")


_COMMON = """
  <xs:simpleType name="blackboardType">
    <xs:restriction base="xs:string"><xs:pattern value="\\{.*\\}"/></xs:restriction>
  </xs:simpleType>
  <xs:simpleType name="booleanOrBlackboardType"><xs:union memberTypes="xs:boolean blackboardType"/></xs:simpleType>
  <xs:simpleType name="integerOrBlackboardType"><xs:union memberTypes="xs:integer blackboardType"/></xs:simpleType>
  <xs:simpleType name="decimalOrBlackboardType"><xs:union memberTypes="xs:decimal blackboardType"/></xs:simpleType>
  <xs:simpleType name="stringOrBlackboardType"><xs:union memberTypes="xs:string blackboardType"/></xs:simpleType>
  <xs:simpleType name="descriptionType">
    <xs:restriction base="xs:string"><xs:whiteSpace value="preserve"/></xs:restriction>
  </xs:simpleType>
  <xs:complexType name="inputPortType">
    <xs:simpleContent><xs:extension base="xs:string">
      <xs:attribute name="name" type="xs:string" use="required"/>
      <xs:attribute name="type" type="xs:string" use="optional"/>
      <xs:attribute name="default" type="xs:string" use="optional"/>
    </xs:extension></xs:simpleContent>
  </xs:complexType>
  <xs:complexType name="outputPortType">
    <xs:simpleContent><xs:extension base="xs:string">
      <xs:attribute name="name" type="xs:string" use="required"/>
      <xs:attribute name="type" type="xs:string" use="optional"/>
    </xs:extension></xs:simpleContent>
  </xs:complexType>
  <xs:attributeGroup name="commonAttributeGroup">
    <xs:attribute name="name" type="xs:string" use="optional"/>
    <xs:attribute name="_failureIf" type="xs:string" use="optional"/>
    <xs:attribute name="_skipIf" type="xs:string" use="optional"/>
    <xs:attribute name="_successIf" type="xs:string" use="optional"/>
    <xs:attribute name="_while" type="xs:string" use="optional"/>
    <xs:attribute name="_onSuccess" type="xs:string" use="optional"/>
    <xs:attribute name="_onFailure" type="xs:string" use="optional"/>
    <xs:attribute name="_post" type="xs:string" use="optional"/>
    <xs:attribute name="_onHalted" type="xs:string" use="optional"/>
  </xs:attributeGroup>
  <xs:complexType name="treeNodesModelNodeType">
    <xs:sequence>
      <xs:choice minOccurs="0" maxOccurs="unbounded">
        <xs:element name="input_port" type="inputPortType"/>
        <xs:element name="output_port" type="outputPortType"/>
      </xs:choice>
      <xs:element name="description" type="descriptionType" minOccurs="0" maxOccurs="1"/>
    </xs:sequence>
    <xs:attribute name="ID" type="xs:string" use="required"/>
  </xs:complexType>
  <xs:group name="treeNodesModelNodeGroup">
    <xs:choice>
      <xs:element name="Action" type="treeNodesModelNodeType"/>
      <xs:element name="Condition" type="treeNodesModelNodeType"/>
      <xs:element name="Control" type="treeNodesModelNodeType"/>
      <xs:element name="Decorator" type="treeNodesModelNodeType"/>
    </xs:choice>
  </xs:group>
  <xs:element name="root">
    <xs:complexType>
      <xs:sequence>
        <xs:choice minOccurs="0" maxOccurs="unbounded">
          <xs:element ref="include"/>
          <xs:element ref="BehaviorTree"/>
        </xs:choice>
        <xs:element ref="TreeNodesModel" minOccurs="0" maxOccurs="1"/>
      </xs:sequence>
      <xs:attribute name="BTCPP_format" type="xs:string" use="required"/>
      <xs:attribute name="main_tree_to_execute" type="xs:string" use="optional"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="include">
    <xs:complexType>
      <xs:attribute name="path" type="xs:string" use="required"/>
      <xs:attribute name="ros_pkg" type="xs:string" use="optional"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="BehaviorTree">
    <xs:complexType>
      <xs:group ref="oneNodeGroup"/>
      <xs:attribute name="ID" type="xs:string" use="required"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="TreeNodesModel">
    <xs:complexType>
      <xs:group ref="treeNodesModelNodeGroup" minOccurs="0" maxOccurs="unbounded"/>
    </xs:complexType>
  </xs:element>
"""


def _node_type(node_id: str, model: NodeModel) -> str:
    out = [f'  <xs:complexType name="{node_id}Type">']
    if model.kind == "Decorator":
        out.append('    <xs:group ref="oneNodeGroup" minOccurs="1" maxOccurs="1"/>')
    elif model.kind == "Control":
        out.append('    <xs:group ref="oneNodeGroup" minOccurs="0" maxOccurs="unbounded"/>')
    out.append('    <xs:attributeGroup ref="commonAttributeGroup"/>')
    for name in sorted(model.ports):
        port = model.ports[name]
        kind = _attr_type(port)
        typed = f' type="{kind}"' if kind else ""
        use = f" default={quoteattr(port.default)}" if port.default is not None else ' use="required"'
        out.append(f'    <xs:attribute name="{name}"{typed}{use}/>')
    if model.kind == "SubTree":
        out.append('    <xs:attribute name="ID" type="xs:string" use="required"/>')
        out.append('    <xs:anyAttribute processContents="skip"/>')
    out.append("  </xs:complexType>")
    return "\n".join(out)


def tree_xsd(models: dict[str, NodeModel]) -> str:
    """The schema for a factory holding the BT.CPP built-ins and `models` (these win on a clash)."""
    every = {**BUILTIN_MODELS, **models}
    choice = "".join(f'<xs:element name="{i}" type="{i}Type"/>' for i in sorted(every))
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">',
             _COMMON,
             f'  <xs:group name="oneNodeGroup"><xs:choice>{choice}</xs:choice></xs:group>',
             *(_node_type(i, every[i]) for i in sorted(every)),
             "</xs:schema>", ""]
    return "\n".join(parts)


def models_from_document(xml_text: str) -> dict[str, NodeModel]:
    """The node models a document's <TreeNodesModel> declares."""
    root = ET.fromstring(xml_text)
    models: dict[str, NodeModel] = {}
    for entry in root.findall("TreeNodesModel/*"):
        ports = {}
        for port in entry:
            if port.tag.endswith("_port"):
                ports[port.get("name", "")] = PortSpec(port.tag.removesuffix("_port"), port.get("default"),
                                                       port.get("type"))
        models[entry.get("ID", "")] = NodeModel(entry.tag, ports)
    return models


def registry_models(registry: Registry) -> dict[str, NodeModel]:
    """The models the exporter declares for every bt_grasp leaf type and its own decorator."""
    models: dict[str, NodeModel] = {}
    for nt in registry:
        if nt.kind in ("composite", "decorator") or nt.name.startswith("opaque_"):
            continue
        models[nt.name] = NodeModel("Condition" if nt.kind == "condition" else "Action", {
            name: PortSpec(d, default if d == "input" else None, cpp)
            for name, (d, default, _doc, cpp) in registry_ports(nt).items()})
    models[BUDGET_DECORATOR] = NodeModel("Decorator", {
        "actions": PortSpec("input", None, CPP_TYPES["int"]),
        "scope": PortSpec("input", "", CPP_TYPES["str"])})
    for tag in NAV2_CONTROLS.values():
        models[tag] = NodeModel("Control", {"number_of_retries": PortSpec("input", "1", "int")}
                                if tag == "RecoveryNode" else {})
    return models


def document_xsd(xml_text: str) -> str:
    """The XSD of a factory that registered exactly the nodes this document declares."""
    return tree_xsd(models_from_document(xml_text))


def registry_xsd(registry: Registry) -> str:
    """The XSD of a factory that registered every bt_grasp node type (what a C++ port would have)."""
    return tree_xsd(registry_models(registry))
