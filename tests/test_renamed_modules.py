"""Modules renamed to say what they hold: the project imports only the new paths, and each former
path still imports the very module it became, with a DeprecationWarning, for one release."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import ROOT

# former path -> current path
RENAMED = {"bt_grasp.verify": "bt_grasp.verifier_api", "bt_grasp.standard": "bt_grasp.py_trees_controls"}

_IMPORT = """
import importlib, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    old = importlib.import_module({former!r})
new = importlib.import_module({current!r})
print(old is new, [(w.category.__name__, str(w.message)) for w in caught])
"""


@pytest.mark.parametrize("former", sorted(RENAMED))
def test_a_former_path_is_the_renamed_module_with_a_deprecation_warning(former):
    """In a fresh process (a warning is given once per import): the old name warns and is the new
    module itself, so its classes are the same classes."""
    current = RENAMED[former]
    out = subprocess.run([sys.executable, "-c", _IMPORT.format(former=former, current=current)],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
    assert out == f"True [('DeprecationWarning', '{former} is deprecated: import {current}')]"


def test_no_project_file_imports_a_former_path():
    """bt_grasp, the tests and the tools use the new names; only the rename table names the old."""
    aliases = {"bt_grasp/__init__.py"}
    offenders = []
    for folder in ("bt_grasp", "tests", "tools"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in aliases or path.name == "test_renamed_modules.py":
                continue
            text = path.read_text(encoding="utf-8")
            offenders += [f"{rel}: {old}" for old in RENAMED
                          if f"import {old}\n" in text or f"from {old} import" in text
                          or f'"{old}"' in text]
    assert offenders == []
