"""PyBullet UR5e + Robotiq-class gripper driver and its clutter scenes.

Imports are lazy so that `import bt_grasp.drivers` stays cheap:
    from bt_grasp.drivers.pybullet_arm import PyBulletArm, generate_episode, EpisodeSpec
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "PyBulletArm": "bt_grasp.drivers.pybullet_arm.driver",
    "generate_episode": "bt_grasp.drivers.pybullet_arm.episodes",
    "EpisodeSpec": "bt_grasp.drivers.pybullet_arm.episodes",
    "episode_seed": "bt_grasp.drivers.pybullet_arm.episodes",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(name)
