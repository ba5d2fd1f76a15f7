"""The benchmark's tasks: one episode each, keyed by (tree, perception, lighting, image size,
seed, episode) so a results file can be resumed, in scene-major order so a partial run is fair.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Task:
    """One episode to run; `key` identifies it in the results file."""

    tree: str
    perception: str
    lighting: str
    seed: int
    episode: int
    image_size: int
    robot: str | None = None
    trace_dir: str | None = None
    scene_cache: str | None = None  # directory of generated scenes shared by the workers
    instruction: str | None = None  # a referring-expression form (bench/instructions.py); None: the name
    goal: str | None = None  # a goal text that also chooses the scene's target (as `bt-grasp run --goal`)

    @property
    def method(self) -> str:
        return Path(self.tree).stem

    @property
    def key(self) -> str:
        key = task_key(self.method, self.perception, self.lighting, self.image_size, self.seed, self.episode)
        key = key if self.instruction is None else f"{key}|{self.instruction}"
        return key if self.goal is None else f"{key}|goal={self.goal}"


def task_key(method: str, perception: str, lighting: str, image_size: int, seed: int,
             episode: int) -> str:
    return f"{method}|{perception}|{lighting}|{image_size}|{seed}|{episode}"


def make_tasks(trees: list[str], seeds: list[int], episodes: int, lighting: list[str],
               perception: list[str], image_size: int, robot: str | None = None,
               trace_dir: str | None = None, scene_cache: str | None = None,
               interleave: int = 1, instructions: list[str] | None = None) -> list[Task]:
    """Scene-major order (every method and perception on a scene before the next scenes) so a
    partial run is still a fair comparison. With `interleave` = number of workers, groups of that
    many scenes are dealt round-robin, so workers starting together build different scenes and
    the scene cache serves the remaining methods of each scene instead of all missing at once.
    `instructions`: referring-expression forms, each run on every scene (None: the name, as ever)."""
    scenes = [(li, s, e) for li in lighting for s in seeds for e in range(episodes)]
    forms: list[str | None] = list(instructions) if instructions else [None]
    per_scene = [[Task(str(t), p, li, s, e, image_size, robot, trace_dir, scene_cache, f)
                  for f in forms for p in perception for t in trees] for li, s, e in scenes]
    out: list[Task] = []
    k = max(1, interleave)
    for g in range(0, len(per_scene), k):
        group = per_scene[g:g + k]
        for i in range(max(len(x) for x in group)):
            out.extend(x[i] for x in group if i < len(x))
    return out


def tasks_as_dicts(tasks: Iterable[Task]) -> list[dict[str, Any]]:
    return [asdict(t) for t in tasks]


def replay_parser(description: str, default_tree: str) -> argparse.ArgumentParser:
    """A replay tool's parser, holding the arguments that choose one episode's Task; shared so
    tools that replay an episode (tools/aim_replay.py, tools/perf/launch_trace.py) read them alike."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--tree", default=default_tree)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--episode", type=int, default=0)
    ap.add_argument("--lighting", default="easy", choices=["easy", "hard"])
    ap.add_argument("--perception", default="geometric", choices=["geometric", "sim"])
    ap.add_argument("--image-size", type=int, default=512)
    return ap
