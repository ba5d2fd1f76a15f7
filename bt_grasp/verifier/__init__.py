"""The verifier: explicit run states, exhaustive search, compositional bounds and the report.

`core.verify_tree` is the entry point (also importable from bt_grasp.verify with the report
type and the static checks). This file imports nothing, so no submodule imports its package back.
"""
