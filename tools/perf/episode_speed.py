"""Episode wall time on the simulated arm, before and after the speed-ups, in one run.

Runs the same episodes (tree × seed × episode, one process, one core, BLAS capped to one
thread) through the instrumented benchmark path (bt_grasp/bench/worker.run_task) in three modes,
interleaved episode by episode so that load on the machine hits every mode alike:

- legacy: every switch of bt_grasp/drivers/pybullet_arm/speed.py off (the paths before);
- cold:   every switch on, the scene cache empty (a fresh folder): scenes are generated;
- warm:   every switch on, the scenes read back from that cache (the same scenes: content-keyed);
- exact:  as warm but resting objects are not put to sleep: the physics of legacy, step for step,
          so its outcomes must equal legacy's (the other speed-ups change no result);
- mujoco: the same scenes on the MuJoCo arm (profile ur5e_robotiq_mujoco, `bt_grasp[mujoco]`):
          another engine, so other outcomes; its phases are the benchmark's own timers (physics
          includes settling, loading and IK there).

Prints median / p95 wall seconds per episode and process CPU seconds per mode, the phase split
(physics, settle, load, render, IK, perception, other) and the ratios against legacy and against
warm (the shipped PyBullet arm), then checks the outcomes: the same decision per episode across
the PyBullet modes and Task SR with Wilson 95 % CIs.
Targets: median <= 2.0 s and p95 <= 4.0 s per episode at 512² on one core.

    python tools/perf/episode_speed.py [--episodes 20] [--seed 0] [--image-size 512] [--perception sim]
    python tools/perf/episode_speed.py --modes cold warm mujoco --perception geometric   # the engines
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from bt_grasp.threads import use_one_thread

use_one_thread()  # before numpy is imported: one core means one thread

ROOT = Path(__file__).resolve().parents[2]
PHASES = ("physics", "settle", "load", "render", "ik", "perception", "other")
LOAD_CALLS = ("connect", "resetSimulation", "loadURDF", "createMultiBody", "createCollisionShape",
              "createVisualShape", "loadTexture", "removeBody")


class PhaseClock:
    """Wall seconds inside pybullet calls by phase, by wrapping the module's functions (every
    caller does `pb.<name>(...)`, so the wrappers see every call). Steps taken by scene.settle
    (scene generation) are `settle`; all other steps are `physics`."""

    def __init__(self) -> None:
        import pybullet as pb

        from bt_grasp.drivers.pybullet_arm import scene

        self.t: dict[str, float] = defaultdict(float)
        settle_code = scene.settle.__code__

        def wrap(name: str, phase: str | None) -> None:
            inner = getattr(pb, name)

            def timed(*args: Any, **kwargs: Any) -> Any:
                p = phase or ("settle" if sys._getframe(1).f_code is settle_code else "physics")
                t0 = time.perf_counter()
                try:
                    return inner(*args, **kwargs)
                finally:
                    self.t[p] += time.perf_counter() - t0

            setattr(pb, name, timed)

        wrap("stepSimulation", None)
        wrap("getCameraImage", "render")
        wrap("calculateInverseKinematics", "ik")
        for name in LOAD_CALLS:
            wrap(name, "load")

    def take(self) -> dict[str, float]:
        out = dict(self.t)
        self.t.clear()
        return out


_ALL_ON = {k: True for k in ("lean_robot", "shared_generator", "scene_cache", "sleep_resting")}
MODES = {"legacy": {k: False for k in _ALL_ON}, "cold": _ALL_ON, "warm": _ALL_ON,
         "exact": {**_ALL_ON, "sleep_resting": False}, "mujoco": _ALL_ON}
ROBOTS = {"mujoco": "ur5e_robotiq_mujoco"}  # modes on another arm than the default profile's


def run(episodes: int, seed: int, image_size: int, perception: str, tree: str,
        modes: list[str]) -> dict[str, list[dict[str, Any]]]:
    from bt_grasp.bench.tasks import make_tasks
    from bt_grasp.bench.worker import close_worlds, run_task
    from bt_grasp.drivers.pybullet_arm import speed

    clock = PhaseClock()
    tasks = make_tasks([tree], [seed], episodes, ["easy"], [perception], image_size)
    out: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for i, task in enumerate(tasks, 1):
        for mode in modes:
            speed.set_options(**MODES[mode])
            clock.take()
            c0 = time.process_time()
            rec = run_task(replace(task, robot=ROBOTS.get(mode)))
            rec["cpu"] = time.process_time() - c0
            phases = clock.take()
            timers = rec.get("time", {})
            if mode in ROBOTS:  # no pybullet calls to time: the benchmark's timers
                phases = {k: float(timers.get(k, 0.0)) for k in ("physics", "render")}
            phases["perception"] = float(timers.get("perception", 0.0))
            phases["other"] = max(0.0, rec["wall"] - sum(phases.values()))
            rec["phases"] = phases
            out[mode].append(rec)
            err = f" ERROR {rec['error']}" if "error" in rec else ""
            print(f"[{i}/{len(tasks)}] {mode:6s} ep {task.episode}: {rec['wall']:.2f} s "
                  f"{rec.get('decision')} {rec.get('task_success')}{err}", file=sys.stderr)
    speed.set_options(**_ALL_ON)
    close_worlds()
    return out


def report(out: dict[str, list[dict[str, Any]]]) -> None:
    from bt_grasp.stats import percentile, wilson

    print("| Mode | N | Median s/ep | p95 s/ep | Median CPU s | Task SR [95% CI] | "
          + " | ".join(PHASES) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(PHASES))
    med: dict[str, float] = {}
    p95: dict[str, float] = {}
    for mode, recs in out.items():
        ok = [r for r in recs if "error" not in r]
        walls = [r["wall"] for r in ok]
        med[mode], p95[mode] = percentile(walls, 50), percentile(walls, 95)
        total = sum(walls) or 1.0
        shares = [100 * sum(r["phases"].get(p, 0.0) for r in ok) / total for p in PHASES]
        wins = sum(1 for r in ok if r.get("task_success"))
        lo, hi = wilson(wins, len(ok))
        print(f"| {mode} | {len(ok)} | {med[mode]:.2f} | {p95[mode]:.2f} | "
              f"{percentile([r['cpu'] for r in ok], 50):.2f} | {wins}/{len(ok)} [{lo:.2f}, {hi:.2f}] | "
              + " | ".join(f"{s:.0f}%" for s in shares) + " |")
    for ref, against in (("legacy", [m for m in out if m != "legacy"]), ("warm", [m for m in out if m in ROBOTS])):
        for mode in against:
            if ref in out:
                print(f"\nspeed-up {mode} vs {ref}: median x{med[ref] / med[mode]:.2f}, "
                      f"p95 x{p95[ref] / p95[mode]:.2f}")
    if "legacy" in out:
        base = {r["key"]: r for r in out["legacy"]}
        for mode in out:
            if mode == "legacy" or mode in ROBOTS:
                continue
            pairs = [(base[r["key"]], r) for r in out[mode] if r["key"] in base]
            same = sum(1 for a, b in pairs if (a.get("decision"), a.get("reason"), a.get("task_success"))
                       == (b.get("decision"), b.get("reason"), b.get("task_success")))
            print(f"same decision, reason and task success as legacy ({mode}): {same}/{len(pairs)}")
    for mode in out:
        if mode == "legacy":
            continue
        meets = med[mode] <= 2.0 and p95[mode] <= 4.0
        print(f"{mode}: median {med[mode]:.2f} s, p95 {p95[mode]:.2f} s per episode: "
              f"{'meets' if meets else 'misses'} the 2.0 s / 4.0 s target")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", default=str(ROOT / "trees" / "clutter.yaml"))
    ap.add_argument("--perception", default="sim")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--image-size", type=int, default=512)
    ap.add_argument("--modes", nargs="+", default=["legacy", "cold", "warm", "exact"], choices=list(MODES),
                    help="run in this order per episode; cold must precede warm/exact to fill the cache")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bt_grasp_speed_cache_") as cache:
        os.environ["BT_GRASP_CACHE_DIR"] = cache  # cold starts empty; warm reads what cold wrote
        out = run(args.episodes, args.seed, args.image_size, args.perception,
                  str(Path(args.tree).resolve()), args.modes)
    if not any(out.values()):
        print("no episodes", file=sys.stderr)
        return 1
    report(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
