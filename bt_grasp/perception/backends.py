"""Perceiver factory by name (kept for older imports): bt_grasp.plugins.make_perceiver is the
one factory, and bt_grasp.world.world_perceiver the perceiver a run's world gets.

Backends are plug-ins (entry point group `bt_grasp.perceivers`, see bt_grasp/plugins.py); the
built-in ones are `geometric` (RGB-D only) and `sim` (the simulator's annotator). An unknown name
is one UserError naming the known ones.
"""

from __future__ import annotations

from bt_grasp.plugins import make_perceiver as make_perceiver  # deprecated alias

__all__ = ["make_perceiver"]
