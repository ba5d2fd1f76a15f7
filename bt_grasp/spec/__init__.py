"""Tree files (YAML) -> validated TreeSpec/NodeSpec models that remember file:line:col.

Public API (consumed by the compiler, runner, verifier, CLI and exporters), by module:
`loader` (load_tree, load_tree_text), `model` (Pos, NodeSpec, Budgets, TreeSpec,
ref_key), `schema` (tree_json_schema) and `dump` (dump_tree). The file format is documented in
docs/tree-format.md. This file imports nothing, so no submodule imports its package back.
"""
