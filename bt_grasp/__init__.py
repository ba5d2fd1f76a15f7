"""bt_grasp: declarative behavior trees for robot grasping with provably bounded recovery.

The Python API (bt_grasp.api, docs/python-api.md) is re-exported here but imported only when
first used, so `import bt_grasp` stays cheap for the CLI and for plug-in packages.
"""

from __future__ import annotations

import importlib
from typing import Any

from bt_grasp._renamed import register

__version__ = "0.1.0"

# renamed to say what they hold; the former paths import, warned, for one release
register({"bt_grasp.verify": "bt_grasp.verifier_api", "bt_grasp.standard": "bt_grasp.py_trees_controls"})

_API = ("Budgets", "Driver", "EpisodeResult", "Node", "OutcomeEvent", "Perceiver", "Tick", "Tree",
        "TreeSpec", "UserError", "as_spec", "budget", "force_failure", "force_success", "from_dict", "from_yaml",
        "include", "inverter", "leaf", "load", "node", "parallel", "repeat", "retry", "run",
        "selector", "sequence", "switch", "timeout", "verify")


def __getattr__(name: str) -> Any:
    """bt_grasp.Tree, bt_grasp.run, ...: loaded from bt_grasp.api on first access."""
    if name in _API:
        # The package's one façade: loaded by name on first use (PEP 562), never at import
        # time, and no bt_grasp module imports these names from the package top level.
        return getattr(importlib.import_module("bt_grasp.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
