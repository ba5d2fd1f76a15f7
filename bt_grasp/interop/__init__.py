"""Interoperability with BehaviorTree.CPP v4 / Groot2 / Nav2 XML.

`btcpp_export.export_btcpp(tree.yaml)` -> XML text; `btcpp_import.import_btcpp(tree.xml)` -> YAML
text; `btcpp_xsd.document_xsd(xml)` and `btcpp_xsd.registry_xsd(registry)` give the XSD BT.CPP v4
would generate, to validate exported files against. The BT.CPP node semantics used by imported
trees live in `nodes` (register_interop_types). This file imports nothing, so no submodule
imports its package back.
"""
