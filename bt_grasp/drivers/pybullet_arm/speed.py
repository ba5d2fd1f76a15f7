"""Switches for the arm's episode speed-ups, all on by default.

lean_robot, shared_generator and scene_cache change no scene, frame or physics step (tests/
test_arm_speed.py); sleep_resting changes physics slightly (see PyBulletArm._sleep_resting).
All off are the earlier paths, which tools/perf/episode_speed.py times against the new ones on the
same episodes in one run.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass
class SpeedOptions:
    lean_robot: bool = True          # headless: load the arm without its (never rendered) visual meshes
    shared_generator: bool = True    # scene generation reuses one DIRECT client (resetSimulation)
    scene_cache: bool = True         # generated scenes are read from the per-user cache (cache.py)
    sleep_resting: bool = True       # objects at rest (0.3 s below the rest thresholds) sleep


OPTIONS = SpeedOptions()


def set_switches(switches: Any, kind: str, values: dict[str, Any]) -> dict[str, Any]:
    """Set fields of the dataclass `switches` in place, each cast to its current value's type;
    returns the previous values. An unknown name is a ValueError naming the `kind` of switch."""
    old = {f.name: getattr(switches, f.name) for f in fields(switches)}
    for k, v in values.items():
        if k not in old:
            raise ValueError(f"unknown {kind} option {k!r} (one of {', '.join(old)})")
        setattr(switches, k, type(old[k])(v))
    return old


def set_options(**values: bool) -> dict[str, bool]:
    """Set switches in place (the driver reads OPTIONS at use); returns the previous values."""
    return set_switches(OPTIONS, "speed", values)

