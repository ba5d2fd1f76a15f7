"""The optional libraries behind each recorder, imported on demand with a one-line hint."""

from __future__ import annotations

import importlib
from types import ModuleType

from bt_grasp.errors import BackendUnavailable

# import name -> the extra that installs it (pyproject.toml [project.optional-dependencies])
EXTRA_OF = {"mcap": "foxglove", "foxglove": "foxglove", "zmq": "groot2", "msgpack": "groot2",
            "rosbags": "ros"}


def need(module: str) -> ModuleType:
    """`module`, or BackendUnavailable naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRA_OF.get(module.split(".")[0], module)
        raise BackendUnavailable(
            f"{module} is not installed (install the {extra} extra: pip install 'bt_grasp[{extra}]')"
        ) from None
