"""Former module paths kept for one release: importing one warns and gives the module it became.

One import hook serves every rename (`register` adds a package's table): the former path is not a
file, so nothing but this table names it, and the module it yields is the current one itself (its
classes are the same classes)."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

# former module path -> the module it became
FORMER: dict[str, str] = {}


def register(renames: dict[str, str]) -> None:
    """Add former -> current module paths (full dotted names) to the table the hook reads."""
    FORMER.update(renames)


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a former path in FORMER and loads it as the module it became, with a warning."""

    _specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in FORMER else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = FORMER[spec.name]
        warnings.warn(f"{spec.name} is deprecated: import {new}", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system set the alias's spec on the shared module: give it its own back
        module.__spec__ = self._specs.pop(module.__spec__.name if module.__spec__ else "", module.__spec__)


if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
    sys.meta_path.insert(0, _Alias())
