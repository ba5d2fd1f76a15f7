"""One world builder: `bt-grasp run`, the Python API and the benchmark give a robot the same
perceiver (plug-in and vocabulary), and a world that does not draw the meshes' textures gets the
vocabulary without texture looks on every path (bt_grasp/world.py)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from bt_grasp import episode, plugins
from bt_grasp.errors import UserError
from bt_grasp.perception.lexicon import default_vocabulary
from bt_grasp.profile import load_profile

ROBOTS = ["ur5e_robotiq", "ur5e_robotiq_mujoco", "stretch3"]


class _Stop(Exception):
    """Raised once the world is built: the episode then ends as 'setup failed' without a scene."""


def _capture(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every world handed to an episode, caught before the scene is reset."""
    seen: list[Any] = []

    def prepare(spec: Any, world: Any, *args: Any) -> Any:
        seen.append(world)
        raise _Stop("world captured")

    monkeypatch.setattr(episode, "_prepare", prepare)
    return seen


def _config(world: Any) -> tuple[str, str, Any]:
    """What a perceiver is configured with: its type, plug-in name and vocabulary."""
    perceiver = getattr(world.perceiver, "_perceiver", world.perceiver)  # the benchmark's timing proxy
    return type(perceiver).__name__, perceiver.name, perceiver.vocabulary


def _via_cli(robot: str, seen: list[Any]) -> Any:
    from bt_grasp.cli import main

    assert main(["run", "clutter", "--robot", robot, "--image-size", "64"]) == episode.EXIT_SETUP
    return seen[-1]


def _via_api(robot: str, seen: list[Any]) -> Any:
    from bt_grasp import api

    assert api.run("clutter", robot=robot, image_size=64).exit_code == episode.EXIT_SETUP
    return seen[-1]


def _via_bench(robot: str, seen: list[Any]) -> Any:
    from bt_grasp.bench import worker
    from bt_grasp.bench.tasks import Task
    from bt_grasp.resources import tree_path

    task = Task(tree=tree_path("clutter"), perception=load_profile(robot).perception, lighting="easy",
                seed=0, episode=0, image_size=64, robot=robot)
    try:
        worker.run_task(task)
    finally:
        worker.close_worlds()
    return seen[-1]


@pytest.mark.parametrize("robot", ROBOTS)
def test_cli_api_and_bench_give_a_robot_the_same_perceiver(robot: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The three entry points build the world through world.build_world, so the perceiver's plug-in
    and vocabulary agree; MuJoCo (draws_mesh_textures False) gets the untextured vocabulary."""
    if "mujoco" in robot:
        monkeypatch.setenv("MUJOCO_GL", os.environ.get("MUJOCO_GL", "egl"))  # headless, before mujoco loads
        pytest.importorskip("mujoco")
        pytest.importorskip("airo_models")
    seen = _capture(monkeypatch)
    configs = {path.__name__: _config(path(robot, seen)) for path in (_via_cli, _via_api, _via_bench)}
    assert len(set(map(repr, configs.values()))) == 1, configs
    vocabulary = next(iter(configs.values()))[2]
    textured = getattr(seen[-1].driver, "draws_mesh_textures", True)
    assert vocabulary == (default_vocabulary() if textured else default_vocabulary().untextured())
    assert textured == ("mujoco" not in robot)


def test_one_driver_factory_and_one_perceiver_factory() -> None:
    """world.py re-exports plugins' factories (no second copy), and an unknown perceiver is a
    UserError on every import path, the old perception.backends one included."""
    from bt_grasp import world
    from bt_grasp.perception import backends

    assert world.make_driver is plugins.make_driver
    assert world.make_perceiver is plugins.make_perceiver is backends.make_perceiver
    with pytest.raises(UserError, match="unknown perceiver 'oracle'"):
        backends.make_perceiver("oracle")
