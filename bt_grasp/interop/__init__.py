"""Interoperability with BehaviorTree.CPP v4 / Groot2 / Nav2 XML (and, later, MCP).

export_btcpp(tree.yaml) -> XML text; import_btcpp(tree.xml) -> YAML text; document_xsd(xml) and
registry_xsd(registry) give the XSD BT.CPP v4 would generate, to validate exported files against.
The BT.CPP node semantics used by imported trees live in interop.nodes (register_interop_types).
"""

from bt_grasp.interop.btcpp_export import export_btcpp, export_spec
from bt_grasp.interop.btcpp_import import import_btcpp, import_spec
from bt_grasp.interop.btcpp_xsd import document_xsd, registry_xsd
from bt_grasp.interop.nodes import register_interop_types

__all__ = ["document_xsd", "export_btcpp", "export_spec", "import_btcpp", "import_spec",
           "register_interop_types", "registry_xsd"]
