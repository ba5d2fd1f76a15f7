"""MuJoCo world for the UR5e arm: soft contacts, so penetration is not removed by a velocity kick.

Imports are lazy so that `import bt_grasp.drivers` never needs mujoco:
    from bt_grasp.drivers.mujoco_arm import MujocoArm
"""

from __future__ import annotations

import os
from typing import Any

# Headless rendering unless the user chose a GL backend; it must be set before mujoco is imported.
os.environ.setdefault("MUJOCO_GL", "egl")

_EXPORTS = {"MujocoArm": "bt_grasp.drivers.mujoco_arm.driver"}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(name)
