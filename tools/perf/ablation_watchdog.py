"""Watchdog ablation: induced-EMPTY grasps, with and without the Watchdog + bounded retry.

    python tools/perf/ablation_watchdog.py [--n 20] [--seed 0] [--fault remove_target_on_close]

Each episode (PyBullet arm, sim perception, 256 px images) gets one injected fault before the
run: by default `Fault("remove_target_on_close", once=True)`, so the first grasp closes on
nothing. The same episodes run `trees/clutter.yaml` (Watchdog + retry) and
`trees/open_loop.yaml` (one grasp, the driver's word as success).

Task success is ground truth from the simulator, `driver.object_in_basket(target)`, never the
tree's decision. A *false success* is a FINALIZE that claims the task done (any FINALIZE but a
"safe stop") while the target is not in the basket: the failure the Watchdog exists to prevent. With `remove_target_on_close` the grasped object is taken
out of the world, so when the first grasp is aimed at the target no policy can deliver it; the
honest outcome for that episode is WAIT_CLARIFY. Use `--fault grasp_offset` for an EMPTY grasp
whose object stays on the table (recoverable by a retry), and `--fault none` for the same
episodes without a fault (the baseline both trees start from).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bt_grasp.drivers.base import Fault
from bt_grasp.episode import build_context, goal_blackboard
from bt_grasp.profile import load_profile
from bt_grasp.runner import EpisodeResult, Runner
from bt_grasp.spec.loader import load_tree
from bt_grasp.world import World, build_world

ROOT = Path(__file__).resolve().parents[2]
TREES = {"clutter (Watchdog + retry)": ROOT / "trees/clutter.yaml",
         "open_loop (no Watchdog, no retry)": ROOT / "trees/open_loop.yaml"}


@dataclass
class Tally:
    episodes: int = 0
    success: int = 0
    false_success: int = 0
    target_removed: int = 0
    grasps: int = 0
    wall: float = 0.0
    decisions: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)

    def add(self, res: EpisodeResult, in_basket: bool, removed: bool, wall: float) -> None:
        self.episodes += 1
        self.success += int(in_basket)
        claims_done = res.decision.value == "FINALIZE" and not res.reason.startswith("safe stop")
        self.false_success += int(claims_done and not in_basket)
        self.target_removed += int(removed)
        self.grasps += res.counters["primitive_calls"].get("grasp", 0)
        self.wall += wall
        self.decisions[res.decision.value] += 1
        self.reasons[f"{res.decision.value}: {res.reason}"] += 1


def run_one(world: World, tree_path: Path, episode: int, seed: int,
            fault: Fault | None) -> tuple[EpisodeResult, bool, bool]:
    spec = load_tree(str(tree_path))
    driver = world.driver
    driver.clear_faults()
    driver.reset(episode=episode, seed=seed, target=None)
    target = driver.task()
    if fault is not None:
        driver.inject(Fault(fault.kind, dict(fault.params), fault.primitive, fault.once))
    ctx = build_context(spec, world, goal_blackboard(None, spec.goal, target))
    res = Runner(spec, ctx).run()
    removed = driver.object_pose(target) is None
    in_basket = bool(driver.object_in_basket(target))
    driver.clear_faults()
    return res, in_basket, removed


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100.0 * k / n:.0f} %)" if n else "0/0"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20, help="episodes per tree (default 20)")
    ap.add_argument("--seed", type=int, default=0, help="base scene seed (episode k uses seed + 1000 k)")
    ap.add_argument("--fault", default="remove_target_on_close",
                    help="fault injected once into the first grasp (default remove_target_on_close; "
                         "'none' for no fault)")
    ap.add_argument("--robot", default="ur5e_robotiq")
    args = ap.parse_args()

    profile = load_profile(args.robot)
    world = build_world(profile, image_size=256)
    fault = None if args.fault == "none" else Fault(args.fault, {}, primitive="grasp", once=True)
    tallies = {name: Tally() for name in TREES}
    try:
        for ep in range(args.n):
            for name, path in TREES.items():
                t0 = time.perf_counter()
                res, in_basket, removed = run_one(world, path, ep, args.seed, fault)
                tallies[name].add(res, in_basket, removed, time.perf_counter() - t0)
                print(f"  ep {ep:2d} {path.stem:9s} {res.decision.value:12s} in_basket={in_basket!s:5s} "
                      f"grasps={res.counters['primitive_calls'].get('grasp', 0)} {res.reason}", flush=True)
    finally:
        world.close()

    print()
    print(f"Induced-EMPTY ablation: {args.n} episodes, robot {profile.name}, fault {args.fault} "
          f"(once, first grasp), seed {args.seed}")
    print()
    print("| tree | task success (target in basket) | false success (FINALIZE, target not in basket) | FINALIZE | WAIT_CLARIFY "
          "| grasps / episode | target removed by fault | wall s / episode |")
    print("|---|---|---|---|---|---|---|---|")
    for name, t in tallies.items():
        n = t.episodes
        print(f"| {name} | {pct(t.success, n)} | {pct(t.false_success, n)} | {t.decisions['FINALIZE']} "
              f"| {t.decisions['WAIT_CLARIFY']} | {t.grasps / n:.2f} | {t.target_removed} | {t.wall / n:.1f} |")
    print()
    print("| tree | decision: reason | episodes |")
    print("|---|---|---|")
    for name, t in tallies.items():
        for reason, k in t.reasons.most_common():
            print(f"| {name} | {reason} | {k} |")


if __name__ == "__main__":
    main()
