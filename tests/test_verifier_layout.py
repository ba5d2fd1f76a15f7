"""The verifier is laid out by role (docs/verifier-internals.md): the project imports its modules
only by their places in that layout, and each former flat path still imports the module it moved
to, with a DeprecationWarning, for the code outside the project that used it."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest
from helpers import ROOT

from bt_grasp.verifier import MOVED

PROJECT = [p for d in ("bt_grasp", "tests", "tools", ".ci") if (ROOT / d).is_dir()
           for p in sorted((ROOT / d).rglob("*.py"))]
FORMER = {f"bt_grasp.verifier.{old}" for old in [*MOVED, "tick_cap"]}


def _imported(path) -> set[str]:
    """Every module a file imports by name, at any depth (`from pkg import mod` counts pkg.mod)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_no_project_file_imports_a_former_verifier_path():
    """bt_grasp, the tests and the tools import the verifier by its layout, never a deprecated path."""
    offenders = {p.relative_to(ROOT).as_posix(): sorted(_imported(p) & FORMER) for p in PROJECT}
    assert not {k: v for k, v in offenders.items() if v}


def test_every_former_path_names_an_existing_module():
    """The alias table points only at modules that import."""
    for new in MOVED.values():
        importlib.import_module(f"bt_grasp.verifier.{new}")


# a fresh process: this one has imported the new paths already, and a warning is given once
_FORMER_IMPORT = """
import warnings
warnings.simplefilter("error")
try:
    import bt_grasp.verifier.model_machine
except DeprecationWarning as w:
    print("warned:", w)
warnings.simplefilter("ignore")
import bt_grasp.verifier.model_machine as old
import bt_grasp.verifier.symbolic.machine as new
from bt_grasp.verifier.summary_rules import Rules
from bt_grasp.verifier.summary.rules import Rules as NewRules
print(old is new, Rules is NewRules, old.__spec__.name)
"""


def test_a_former_path_imports_the_moved_module_with_a_deprecation_warning():
    """`bt_grasp.verifier.model_machine` warns, then is the very module symbolic/machine.py."""
    out = subprocess.run([sys.executable, "-c", _FORMER_IMPORT], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.splitlines()
    assert out[0] == ("warned: bt_grasp.verifier.model_machine is deprecated: "
                      "import bt_grasp.verifier.symbolic.machine")
    assert out[1] == "True True bt_grasp.verifier.symbolic.machine"


def test_a_name_that_never_was_a_verifier_module_still_fails_to_import():
    """The alias table answers only for former paths."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("bt_grasp.verifier.no_such_module")
