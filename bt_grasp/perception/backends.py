"""Perceiver factory by name, so trees, the CLI and the benchmark select a backend with a string.

Backends are plug-ins (entry point group `bt_grasp.perceivers`, see bt_grasp/plugins.py); the
built-in ones are `geometric` (RGB-D only) and `sim` (the simulator's annotator).
"""

from __future__ import annotations

from typing import Any

from .types import Perceiver


def make_perceiver(name: str, **kwargs: Any) -> Perceiver:
    """A fresh perceiver of the installed backend `name`; an unknown name is a ValueError naming
    the known ones."""
    from bt_grasp.plugins import PERCEIVERS, discover, load, unknown_message

    if name not in discover(PERCEIVERS):
        raise ValueError(unknown_message(PERCEIVERS, name))
    return load(PERCEIVERS, name)(**kwargs)  # a broken plug-in: one UserError naming it
