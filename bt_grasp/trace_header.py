"""The header record of a trace, built in one place: before set-up (what the tree and the
command say, so even a run killed while its robot starts leaves a readable file) and again by
the Runner once the context exists (the goal the scene gave, the run id). A reader merges the
two, later fields winning (trace_reader.read_trace)."""

from __future__ import annotations

import platform
from collections.abc import Mapping
from typing import Any

from bt_grasp import __version__
from bt_grasp.context import EpisodeLimits
from bt_grasp.json_encoding import jsonable
from bt_grasp.structure import structure


def versions() -> dict[str, str]:
    """The versions a trace was recorded with: bt_grasp, Python and the libraries runs depend on."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"bt_grasp": __version__, "python": platform.python_version()}
    for pkg in ("py_trees", "pybullet", "numpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def header_record(spec: Any, limits: EpisodeLimits, goal: Mapping[str, Any], about: Mapping[str, Any],
                  run_id: str | None = None) -> dict[str, Any]:
    """The header: the tree, its structure and source, the budgets in force, the goal (the
    `goal.*` keys of `goal`, a blackboard), the run id once there is one, the versions, and
    `about` (robot, seed, episode, lighting, perception)."""
    record: dict[str, Any] = {
        "type": "header", "tree": spec.name, "file": getattr(spec, "file", None),
        "structure": structure(spec.root), "source": getattr(spec, "source", None),
        "budgets": {"actions": limits.actions, "perception_streak": limits.perception_streak,
                    "max_ticks": limits.max_ticks},
        "goal": {k[5:]: v for k, v in goal.items() if k.startswith("goal.")}}
    if run_id is not None:
        record["run_id"] = run_id
    return {**record, "versions": versions(), **jsonable(dict(about))}
