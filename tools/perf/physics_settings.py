"""Could cheaper physics make episodes faster without changing their results? Measured, in one run.

Most of an arm episode's wall time is pybullet's stepSimulation while the gripper is in contact
with a pile (descending, closing, lifting: ~0.8-1.0 ms per 1/240 s step, against ~0.2 ms when the
pile sleeps). The only ways to make those steps cheaper change the physics itself. This runs the
same episodes (clutter tree, one process, one core) under the shipped settings and under each
cheaper candidate, interleaved episode by episode so machine load hits every setting alike:

- `solver 20`:   20 solver iterations instead of 50 (cost per contact step roughly halves);
- `pyramid`:     pyramid instead of cone friction (about 30 % cheaper contact steps);
- `step 1/120`:  a 1/120 s physics step instead of 1/240 s (half the steps; the control period
                 keeps its length in seconds).

Every setting starts from the identical scene: it is applied after the episode's reset, which
generates and settles the scene with the shipped settings. Printed per setting: median / p95 wall
seconds per episode, median physics seconds (stepSimulation alone), how many episodes end with
the shipped setting's decision, reason and task success, and Task SR with a Wilson 95 % CI; then
the floor the shipped settings put under an episode: its stepSimulation seconds, those plus its
rendering (the frames the perceiver needs at --image-size), and those plus the IK calls that give
the motions their joint paths. Any faster IK or smaller frame changes what the robot does or sees.

    python tools/perf/physics_settings.py [--episodes 20] [--seed 0] [--perception sim]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

from bt_grasp.threads import use_one_thread  # noqa: E402

use_one_thread()  # before numpy is imported: one core means one thread


@dataclass(frozen=True)
class Physics:
    """The engine settings an episode runs with after its reset."""

    solver_iterations: int = 50
    cone_friction: bool = True
    timestep: float = 1.0 / 240.0


SETTINGS = {
    "shipped": Physics(),
    "solver 20": Physics(solver_iterations=20),
    "pyramid": Physics(cone_friction=False),
    "step 1/120": Physics(timestep=1.0 / 120.0),
}


def _apply(driver: Any, physics: Physics, control_period_s: float) -> None:
    """Set `physics` on the driver's client. The arm reads its step length from scene.TIMESTEP at
    every use, so the module value is the switch; the control period is re-derived from it."""
    import pybullet as pb

    from bt_grasp.drivers.pybullet_arm import scene

    scene.TIMESTEP = physics.timestep
    pb.setTimeStep(physics.timestep, physicsClientId=driver.client)
    pb.setPhysicsEngineParameter(numSolverIterations=physics.solver_iterations,
                                 enableConeFriction=int(physics.cone_friction), physicsClientId=driver.client)
    driver._init_motions(control_period_s)


def hook_reset(driver: Any, before: Callable[[], None], after: Callable[[], None]) -> None:
    """Make driver.reset call before(), build the scene, then call after(): the scene is generated
    and settled with the shipped settings whatever after() switches on (contact_models.py too)."""
    shipped_reset = type(driver).reset

    def reset(*args: Any, **kwargs: Any) -> Any:
        before()
        obs = shipped_reset(driver, *args, **kwargs)
        after()
        return obs

    driver.reset = reset


def same_outcome(rec: dict[str, Any], base: dict[str, dict[str, Any]]) -> bool:
    """Does `rec` end as the shipped run of its episode (`base`, by key) did: same decision,
    reason and task success?"""
    shipped = base.get(rec["key"])
    return shipped is not None and all(rec.get(k) == shipped.get(k) for k in ("decision", "reason", "task_success"))


def _resetting_with(driver: Any, chosen: Callable[[], Physics], control_period_s: float) -> None:
    """Make driver.reset build the scene with the shipped physics, then switch to chosen()."""
    hook_reset(driver, _apply_shipped_step, lambda: _apply(driver, chosen(), control_period_s))


def _apply_shipped_step() -> None:
    from bt_grasp.drivers.pybullet_arm import scene

    scene.TIMESTEP = SETTINGS["shipped"].timestep


def run(episodes: int, seed: int, perception: str, image_size: int, names: list[str]) -> dict[str, list[dict]]:
    from episode_speed import PhaseClock  # the sibling tool (this script's folder is on sys.path)

    from bt_grasp.bench.tasks import make_tasks
    from bt_grasp.bench.worker import close_worlds, run_task, world_for

    tasks = make_tasks([str(ROOT / "trees" / "clutter.yaml")], [seed], episodes, ["easy"], [perception], image_size)
    clock = PhaseClock()  # seconds inside stepSimulation, getCameraImage and IK, by phase
    current = {"physics": SETTINGS["shipped"]}
    profile, driver = world_for(tasks[0])
    _resetting_with(driver, lambda: current["physics"], profile.control_period_s)
    out: dict[str, list[dict]] = {n: [] for n in names}
    try:
        for i, task in enumerate(tasks, 1):
            for name in names:
                current["physics"] = SETTINGS[name]
                clock.take()
                rec = run_task(task)
                spent = clock.take()
                rec["physics_s"] = spent.get("physics", 0.0) + spent.get("settle", 0.0)
                rec["render_s"], rec["ik_s"] = spent.get("render", 0.0), spent.get("ik", 0.0)
                out[name].append(rec)
                print(f"[{i}/{len(tasks)}] {name:10s} ep {task.episode}: {rec['wall']:.2f} s "
                      f"(physics {rec['physics_s']:.2f}) {rec.get('decision')} {rec.get('task_success')} "
                      f"{rec.get('error', '')}", file=sys.stderr, flush=True)
    finally:
        _apply_shipped_step()
        close_worlds()
    return out


def report(out: dict[str, list[dict]]) -> None:
    from bt_grasp.stats import percentile, wilson

    base = {r["key"]: r for r in out["shipped"]}
    print("| Setting | N | Median s/ep | p95 s/ep | Median physics s/ep | Same decision as shipped | "
          "Task SR [95% CI] |")
    print("|---|---|---|---|---|---|---|")
    for name, recs in out.items():
        ok = [r for r in recs if "error" not in r]
        walls = [r["wall"] for r in ok]
        same = sum(same_outcome(r, base) for r in ok)
        wins = sum(1 for r in ok if r.get("task_success"))
        lo, hi = wilson(wins, len(ok))
        print(f"| {name} | {len(ok)} | {percentile(walls, 50):.2f} | {percentile(walls, 95):.2f} | "
              f"{percentile([r['physics_s'] for r in ok], 50):.2f} | {same}/{len(ok)} | "
              f"{wins}/{len(ok)} [{100 * lo:.0f}, {100 * hi:.0f}] % |")
    ok = [r for r in out["shipped"] if "error" not in r]
    print()
    for label, values in (("stepSimulation alone", [r["physics_s"] for r in ok]),
                          ("stepSimulation + rendering", [r["physics_s"] + r["render_s"] for r in ok]),
                          ("stepSimulation + rendering + IK",
                           [r["physics_s"] + r["render_s"] + r["ik_s"] for r in ok])):
        print(f"physics floor, shipped settings, {label}: median {percentile(values, 50):.2f} s, "
              f"p95 {percentile(values, 95):.2f} s per episode (episode target: 2.0 s / 4.0 s)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--perception", default="sim")
    ap.add_argument("--image-size", type=int, default=512)
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS),
                    help="which to run besides the shipped one (always run, first)")
    args = ap.parse_args(argv)
    names = ["shipped", *(n for n in args.settings if n != "shipped")]
    report(run(args.episodes, args.seed, args.perception, args.image_size, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
