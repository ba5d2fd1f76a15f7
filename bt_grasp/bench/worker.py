"""One benchmark episode in a worker process: the World is built once per (robot, lighting, image
size) and reused; the perceiver is rebuilt per episode; any crash becomes an error record.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bt_grasp.bench.scene_cache import install_scene_cache
from bt_grasp.bench.score import SnapshotWorld, score_episode
from bt_grasp.bench.tasks import Task

_WORLDS: dict[tuple[Any, ...], Any] = {}


def world_for(task: Task) -> Any:
    """This process's World for the task's (robot, lighting, size); built once, reused."""
    from bt_grasp.profile import load_profile
    from bt_grasp.world import make_driver

    k = (task.robot, task.lighting, task.image_size)
    if k not in _WORLDS:
        profile = load_profile(task.robot)
        _WORLDS[k] = (profile, make_driver(profile, lighting=task.lighting, image_size=task.image_size))
    return _WORLDS[k]


def close_worlds() -> None:
    for _, driver in _WORLDS.values():
        try:
            driver.close()
        except Exception:  # closing is best effort at process exit
            pass
    _WORLDS.clear()


def run_task(task: Task) -> dict[str, Any]:
    """Run one episode and return its record (never raises: an error becomes a record)."""
    t0 = time.perf_counter()
    try:
        return _run_task(task)
    except Exception as exc:  # a crash in one episode must not lose the others
        return {**_task_fields(task), "error": f"{type(exc).__name__}: {exc}",
                "wall": round(time.perf_counter() - t0, 3)}


def _task_fields(task: Task) -> dict[str, Any]:
    out = {"key": task.key, "method": task.method, "tree": task.tree, "perception": task.perception,
           "lighting": task.lighting, "image_size": task.image_size, "seed": task.seed,
           "episode": task.episode}
    return out if task.instruction is None else {**out, "form": task.instruction}


def _run_task(task: Task) -> dict[str, Any]:
    from bt_grasp.bench.instrument import DriverProxy, PerceiverProxy, Probe, timed_services
    from bt_grasp.bench.rates import LeafOutcomeCounter
    from bt_grasp.episode import run_episode
    from bt_grasp.world import World, build_world

    if task.scene_cache:
        install_scene_cache(task.scene_cache)
    profile, driver = world_for(task)
    probe = Probe()
    # A fresh perceiver and services on the reused driver, as every entry point builds them
    # (world.build_world): the profile's vocabulary, else the shipped one, which is the catalogue's
    # (bench/vocabulary.py); a world that does not draw the meshes' textures shows every object in
    # its word's colour, so it gets the vocabulary without texture looks.
    built = build_world(profile, perception=task.perception, driver=driver)
    world = World(profile, DriverProxy(driver, probe), PerceiverProxy(built.perceiver, probe),
                  timed_services(built.services, probe))
    trace = None
    if task.trace_dir:
        Path(task.trace_dir).mkdir(parents=True, exist_ok=True)
        trace = str(Path(task.trace_dir) / (task.key.replace("|", "_") + ".jsonl"))
    before: dict[str, Any] = {}
    instruction = None
    if task.instruction is not None:  # the form's text, from the scene's ground truth
        from bt_grasp.bench.instruction_run import instruction_for

        instruction = instruction_for(task.instruction, driver, task.seed, task.episode)
        if instruction is None:
            return {**_task_fields(task), "robot": profile.name, "skipped": f"no {task.instruction} instruction "
                                                                           "fits this scene"}
    goal = instruction.text if instruction is not None and task.instruction != "name" else task.goal
    outcomes = LeafOutcomeCounter()  # what each leaf answered: the measured rates (bench/rates.py)
    t0 = time.perf_counter()
    result = run_episode(task.tree, robot=task.robot, seed=task.seed, episode=task.episode,
                         trace=trace, perception=task.perception, lighting=task.lighting, goal=goal,
                         image_size=task.image_size,
                         world=SnapshotWorld(world, before, fixed_scene=instruction is not None),
                         observers=[outcomes])
    wall = time.perf_counter() - t0
    rec = {**_task_fields(task), "robot": profile.name, "driver": profile.driver,
           **score_episode(driver, result, probe, before)}
    if instruction is not None:
        from bt_grasp.bench.instruction_run import score_instruction

        rec.update(score_instruction(instruction, rec, probe, driver))
    rec.update(outcomes.record())
    rec["wall"] = round(wall, 4)
    rec["scene_cache"] = bool(task.scene_cache)
    rec["time"] = {k: round(v, 4) for k, v in probe.timings.shares(wall).items()}
    if trace is not None:
        if rec["task_success"]:
            Path(trace).unlink(missing_ok=True)
        else:
            rec["trace"] = trace
    return rec
