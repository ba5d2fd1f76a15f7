"""Tree files (YAML) -> validated TreeSpec/NodeSpec models that remember file:line:col.

Public API (consumed by the compiler, runner, verifier, CLI and exporters):
load_tree, load_tree_text, validate_paths, tree_json_schema, ref_key, dump_tree and the model
classes Pos, NodeSpec, Budgets, TreeSpec. The file format is documented in docs/tree-format.md.
"""

from bt_grasp.spec.dump import dump_tree
from bt_grasp.spec.loader import load_tree, load_tree_text, validate_paths
from bt_grasp.spec.model import Budgets, NodeSpec, Pos, TreeSpec, ref_key
from bt_grasp.spec.schema import tree_json_schema

__all__ = ["Budgets", "NodeSpec", "Pos", "TreeSpec", "dump_tree", "load_tree", "load_tree_text",
           "ref_key", "tree_json_schema", "validate_paths"]
