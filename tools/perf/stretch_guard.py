"""What the Stretch's collision guard buys and costs, on the simulated Stretch.

Two scenes per seed, each grasped with the guard on and off (same seed, same plan):
- open: the seeded table as it is (objects >= 9 cm apart). The guard should cost nothing here:
  grasp success with it on vs off.
- crowded: the same table with a 14 cm tall box put 10 cm nearer the robot than the target, under
  the sloping fingers. With the guard on the grasp should be refused before moving; with it off
  the robot tries, and we count how often the box is knocked (moved > 1 cm).
The grasp is planned from the head camera (geometric perception, RGB-D only) as the grasp leaf
does: the first of 8 candidates the driver accepts. Scoring (held object, box displacement) reads
the simulator's ground truth; nothing the robot decides does. Also prints the guard's time per
candidate check.

    python tools/perf/stretch_guard.py --n 30
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bt_grasp.drivers.base import GraspPose
from bt_grasp.drivers.stretch.sim.factory import make_sim_stretch_driver
from bt_grasp.perception.backends import make_perceiver
from bt_grasp.perception.grasps import plan_grasps
from bt_grasp.profile import load_profile
from bt_grasp.stats import Z95, wilson


def _rate(k: int, n: int) -> str:
    lo, hi = wilson(k, n, z=Z95)
    return f"{k}/{n} = {k / n if n else 0:.2f} (95% CI {lo:.2f}-{hi:.2f})"


def trial(drv, per, seed: int, crowded: bool, guard: bool, timings: list[float]) -> dict[str, bool]:
    """One grasp of the seed's task object; returns refused / held / knocked."""
    drv.reset(0, seed)
    w = drv.world
    box = None
    target_body = next(b for b, o in w.objects.items() if o.spec.name == drv.task())
    p = w.object_position(target_body)
    if crowded:
        box = w._box((0.04, 0.015, 0.07), (float(p[0]), float(p[1]) + 0.10, 0.55 + 0.07), (0.2, 0.2, 0.2, 1.0),
                     mass=0.3)  # free to be knocked over
    drv._guard().opts.enabled = guard
    try:
        obs = drv.observe()
        scene = per.survey(obs)
        located = per.locate(obs, drv.task(), scene)
        cands = plan_grasps(obs, located)[:8] if located is not None else []
        pose, collision = None, False
        for c in cands:
            t = time.perf_counter()
            ok, why = drv.grasp_feasible(c, c.width)
            if guard:  # the guard's cost: checks with it on only
                timings.append(time.perf_counter() - t)
            collision = collision or "collision" in why
            if ok:
                pose = c
                break
        if pose is None:
            return {"refused": True, "collision": collision, "held": False, "knocked": False}
        b0 = np.array(w.pb.getBasePositionAndOrientation(box, physicsClientId=w.cid)[0]) if box is not None else None
        ex = drv.grasp(GraspPose(pose.position, pose.orientation, pose.width), pose.width, 10.0)
        knocked = False
        if box is not None:
            b1 = np.array(w.pb.getBasePositionAndOrientation(box, physicsClientId=w.cid)[0])
            knocked = bool(np.linalg.norm(b1 - b0) > 0.01)
        refused = bool(ex.fault and ex.fault.startswith("infeasible"))
        return {"refused": refused, "collision": "collision" in (ex.fault or ""),
                "held": drv.held_object() == drv.task(), "knocked": knocked}
    finally:
        drv._guard().opts.enabled = True
        if box is not None:
            w.pb.removeBody(box, physicsClientId=w.cid)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="seeds per condition")
    ap.add_argument("--seed0", type=int, default=100)
    args = ap.parse_args()
    drv = make_sim_stretch_driver(load_profile("robots/stretch3.yaml"))
    per = make_perceiver("geometric")
    timings: list[float] = []
    res: dict[tuple[str, str], list[dict[str, bool]]] = {}
    try:
        for seed in range(args.seed0, args.seed0 + args.n):
            for scene in ("open", "crowded"):
                for guard in ("on", "off"):
                    res.setdefault((scene, guard), []).append(trial(drv, per, seed, scene == "crowded",
                                                                    guard == "on", timings))
    finally:
        drv.close()
    print(f"Stretch collision guard, simulated, geometric perception, N = {args.n} seeds per condition")
    for (scene, guard), rs in sorted(res.items()):
        n = len(rs)
        line = (f"  {scene:8s} guard {guard:3s}: held {_rate(sum(r['held'] for r in rs), n)}; "
                f"no grasp tried {_rate(sum(r['refused'] for r in rs), n)} "
                f"(a collision among the reasons: {sum(r['refused'] and r['collision'] for r in rs)})")
        if scene == "crowded":
            line += f"; neighbour knocked {_rate(sum(r['knocked'] for r in rs), n)}"
        print(line)
    held = {k: sum(r["held"] for r in rs) for k, rs in res.items()}
    if held[("open", "off")]:
        print(f"  open-scene success ratio guard on / off: {held[('open', 'on')] / held[('open', 'off')]:.2f}")
    ms = 1000 * np.array(timings)
    print(f"  guard check per candidate (guard on): median {np.median(ms):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms "
          f"(n = {len(ms)})")


if __name__ == "__main__":
    main()
