"""Former module paths kept for one release: importing one warns and gives the renamed module."""

from __future__ import annotations

import importlib
import sys
import warnings


def alias(former: str, current: str) -> None:
    """Make `former` (a module being imported) the module `current`, with a DeprecationWarning."""
    warnings.warn(f"{former} is deprecated: import {current}", DeprecationWarning, stacklevel=3)
    sys.modules[former] = importlib.import_module(current)
