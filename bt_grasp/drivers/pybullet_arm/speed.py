"""Switches for the arm's episode speed-ups, all on by default.

Each switch keeps scenes and outcomes as they were (see the docstrings where they are used); the
`legacy()` setting turns them all off so that bench/episode_speed.py can time the earlier paths
and the new ones on the same episodes in one run.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class SpeedOptions:
    lean_robot: bool = True          # headless: load the arm without its (never rendered) visual meshes
    shared_generator: bool = True    # scene generation reuses one DIRECT client (resetSimulation)
    scene_cache: bool = True         # generated scenes are read from the per-user cache (cache.py)
    sleep_settled: bool = True       # reset() puts the re-spawned, settled objects to sleep


OPTIONS = SpeedOptions()


def set_options(**values: bool) -> dict[str, bool]:
    """Set switches in place (the driver reads OPTIONS at use); returns the previous values."""
    old = {f.name: getattr(OPTIONS, f.name) for f in fields(OPTIONS)}
    for k, v in values.items():
        if k not in old:
            raise ValueError(f"unknown speed option {k!r} (one of {', '.join(old)})")
        setattr(OPTIONS, k, bool(v))
    return old


def legacy() -> dict[str, bool]:
    """Every switch off: the paths before the speed-ups."""
    return {f.name: False for f in fields(SpeedOptions)}
