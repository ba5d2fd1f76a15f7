"""Perceiver factory by name, so trees, the CLI and the benchmark select a backend with a string."""

from __future__ import annotations

from typing import Any

from .geometric import GeometricPerceiver
from .sim_annotator import SimPerceiver
from .types import Perceiver

BACKENDS: dict[str, type] = {"sim": SimPerceiver, "geometric": GeometricPerceiver}


def make_perceiver(name: str, **kwargs: Any) -> Perceiver:
    """A fresh perceiver: "sim" (the simulator's annotator) or "geometric" (RGB-D only)."""
    try:
        return BACKENDS[name](**kwargs)
    except KeyError:
        raise ValueError(f"unknown perception backend {name!r}; choose from {sorted(BACKENDS)}") from None
