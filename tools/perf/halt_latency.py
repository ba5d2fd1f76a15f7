"""Halt latency of the simulated arm's motions, and the cost of polling them.

Halts: each trial picks grasp, lift or push at random and cancels it at a random poll of its run
(uniform over the polls the uncancelled motion takes in the same scene). Per halt it measures
- the physics steps run after cancel() (inside cancel and in the next control period, while the
  arm holds) until the tcp is still (< 5 mm/s), divided by the steps of one control period
  (target <= 1.0);
- the tcp displacement from the moment of cancel() to one control period later, and to 0.5 s
  later (mm);
- whether the finger command stayed frozen over that period.
Cost: the same primitive in the same scene run blocking (grasp() etc.) and polled (start() + one
poll per loop turn reading telemetry and elapsed, as a leaf does), in pairs run back to back;
the geometric mean of the paired wall ratios polled / blocking per primitive with its 95 % CI
(target <= 1.05), the same for process CPU time, and, as a noise floor, the same statistic for
pairs of identical blocking runs.

    python tools/perf/halt_latency.py [--halts 60] [--repeats 5] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from bt_grasp.threads import use_one_thread

use_one_thread()  # before numpy is imported

import numpy as np  # noqa: E402
import pybullet as pb  # noqa: E402

from bt_grasp.bench.objects import ObjectSpec  # noqa: E402
from bt_grasp.drivers.base import GraspPose  # noqa: E402
from bt_grasp.drivers.pybullet_arm.driver import DOWN, PyBulletArm  # noqa: E402
from bt_grasp.profile import load_profile  # noqa: E402
from bt_grasp.stats import percentile, wilson  # noqa: E402

BOX = ObjectSpec("red box", "box", "red", "medium", "box", (0.05, 0.05, 0.06), (0.9, 0.1, 0.1, 1), 0.15)
CENTRE = np.array([0.5, 0.0, 0.03])
STILL_MPS = 0.005
PRIMITIVES = ("grasp", "lift", "push")


def setup(arm: PyBulletArm, primitive: str) -> dict[str, Any]:
    """The scene (and for lift the grasp before it); the primitive's start() arguments."""
    arm.clear_faults()
    arm.reset_scene([BOX], [tuple(CENTRE)], target="red box")
    if primitive == "grasp":
        return {"pose": GraspPose(CENTRE, DOWN, 0.08), "width": 0.08, "force": 60.0}
    if primitive == "lift":
        arm.grasp(GraspPose(CENTRE, DOWN, 0.08), 0.08, 60.0)
        return {"dz": 0.15}
    return {"start": np.array([0.5, -0.12]), "end": np.array([0.5, 0.05]), "height": 0.03}


def tcp(arm: PyBulletArm) -> tuple[np.ndarray, float]:
    st = pb.getLinkState(arm.robot, arm.tcp_link, computeLinkVelocity=1, computeForwardKinematics=True,
                         physicsClientId=arm.client)
    return np.array(st[4]), float(np.linalg.norm(st[6]))


class StepCounter:
    """Counts pybullet.stepSimulation calls (every caller goes through the module attribute)."""

    def __init__(self) -> None:
        self.n = 0
        self._inner = pb.stepSimulation

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.n += 1
            return self._inner(*args, **kwargs)

        pb.stepSimulation = counted


def full_polls(arm: PyBulletArm, primitive: str) -> int:
    motion = arm.start(primitive, **setup(arm, primitive))
    n = 1
    while motion.poll() is None:
        n += 1
    return n


def one_halt(arm: PyBulletArm, counter: StepCounter, primitive: str, at_poll: int) -> dict[str, Any]:
    motion = arm.start(primitive, **setup(arm, primitive))
    for _ in range(at_poll):
        if motion.poll() is not None:
            raise RuntimeError(f"{primitive} ended before poll {at_poll}")
    p0, v0 = tcp(arm)
    before = counter.n
    motion.cancel()
    in_cancel = counter.n - before
    cmd = (arm.gap_cmd, arm.gap_ref)
    still_after = None if tcp(arm)[1] >= STILL_MPS else in_cancel
    period = arm.steps_per_period
    for k in range(1, int(0.5 / 0.05) * period + 1):  # 0.5 s of holding
        pb.stepSimulation(physicsClientId=arm.client)
        _, v = tcp(arm)
        if still_after is None and v < STILL_MPS:
            still_after = in_cancel + k
        if k == period:
            disp_period = float(np.linalg.norm(tcp(arm)[0] - p0))
            frozen = (arm.gap_cmd, arm.gap_ref) == cmd
    disp_long = float(np.linalg.norm(tcp(arm)[0] - p0))
    return {"primitive": primitive, "poll": at_poll, "speed_at_cancel": v0, "steps_in_cancel": in_cancel,
            "steps_to_still": still_after if still_after is not None else 10 ** 9,
            "disp_period_mm": 1000 * disp_period, "disp_long_mm": 1000 * disp_long, "frozen": frozen}


def timed(arm: PyBulletArm, primitive: str, polled: bool) -> tuple[float, float]:
    """(wall s, process CPU s) of one run of `primitive`, blocking or polled."""
    kwargs = setup(arm, primitive)
    t0, c0 = time.perf_counter(), time.process_time()
    if polled:
        motion = arm.start(primitive, **kwargs)
        while motion.poll() is None:
            _ = motion.telemetry(), motion.elapsed
    else:
        getattr(arm, primitive)(**kwargs)  # the blocking method
    return time.perf_counter() - t0, time.process_time() - c0


def geo_ci(ratios: list[float]) -> tuple[float, float, float]:
    """Geometric mean of paired ratios and its 95 % CI (normal interval on the log ratios): pairs
    run back to back see the same load, so their ratio cancels most of the machine's noise."""
    logs = np.log(ratios)
    half = 1.96 * float(np.std(logs, ddof=1)) / np.sqrt(len(logs)) if len(logs) > 1 else float("nan")
    m = float(np.mean(logs))
    return float(np.exp(m)), float(np.exp(m - half)), float(np.exp(m + half))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--halts", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=5, help="blocking/polled pairs per primitive")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    arm = PyBulletArm(load_profile("ur5e_robotiq"), image_size=64)
    counter = StepCounter()
    try:
        period = arm.steps_per_period
        polls = {p: full_polls(arm, p) for p in PRIMITIVES}
        print(f"control period {arm.control_period:.4f} s = {period} physics steps; polls per run: "
              + ", ".join(f"{p} {n}" for p, n in polls.items()))
        rows = []
        for _ in range(args.halts):
            prim = PRIMITIVES[int(rng.integers(len(PRIMITIVES)))]
            rows.append(one_halt(arm, counter, prim, int(rng.integers(1, polls[prim]))))
        print(f"\nhalts: {len(rows)} (random primitive, random poll)")
        print("| primitive | n | steps in cancel() | steps to still / period: median, max | "
              "tcp moved in 1 period mm: median, p95, max | in 0.5 s mm: max | command frozen |")
        print("|---|---|---|---|---|---|---|")
        for prim in (*PRIMITIVES, "all"):
            rs = [r for r in rows if prim in ("all", r["primitive"])]
            if not rs:
                continue
            ratio = [r["steps_to_still"] / period for r in rs]
            disp = [r["disp_period_mm"] for r in rs]
            print(f"| {prim} | {len(rs)} | max {max(r['steps_in_cancel'] for r in rs)} | "
                  f"{percentile(ratio, 50):.3f}, {max(ratio):.3f} | "
                  f"{percentile(disp, 50):.3f}, {percentile(disp, 95):.3f}, "
                  f"{max(disp):.3f} | {max(r['disp_long_mm'] for r in rs):.3f} | "
                  f"{sum(r['frozen'] for r in rs)}/{len(rs)} |")
        ok = sum(r["steps_to_still"] <= period for r in rows)
        lo, hi = wilson(ok, len(rows))
        print(f"\nhalts still within one control period: {ok}/{len(rows)} = {ok / len(rows):.3f} "
              f"(95% CI {lo:.3f}-{hi:.3f}); worst steps-to-still / period "
              f"{max(r['steps_to_still'] for r in rows) / period:.3f} (target <= 1.0)")
        print(f"\npolling cost ({args.repeats} blocking/polled pairs per primitive, run back to back, "
              "order alternating)")
        print("| primitive | blocking wall s (median) | polled wall s (median) | "
              "polled / blocking wall, paired: geometric mean [95% CI] | CPU, paired | "
              "noise floor: blocking / blocking wall [95% CI] |")
        print("|---|---|---|---|---|---|")
        worst = 0.0
        for prim in PRIMITIVES:
            pairs, control = [], []
            for i in range(args.repeats):
                order = (False, True) if i % 2 == 0 else (True, False)
                run = {polled: timed(arm, prim, polled) for polled in order}
                pairs.append((run[False], run[True]))
                control.append(timed(arm, prim, False)[0] / timed(arm, prim, False)[0])
            wall_r = [p[1][0] / p[0][0] for p in pairs]
            cpu_r = [p[1][1] / p[0][1] for p in pairs]
            g, lo, hi = geo_ci(wall_r)
            gc, _, _ = geo_ci(cpu_r)
            ga, alo, ahi = geo_ci(control)
            worst = max(worst, g)
            print(f"| {prim} | {np.median([p[0][0] for p in pairs]):.4f} | "
                  f"{np.median([p[1][0] for p in pairs]):.4f} | {g:.3f} [{lo:.3f}, {hi:.3f}] | {gc:.3f} | "
                  f"{ga:.3f} [{alo:.3f}, {ahi:.3f}] |")
        print(f"\npolled / blocking wall ratio, worst primitive: {worst:.3f} (target <= 1.05; the "
              f"blocking / blocking column is what identical runs differ by on this machine now)")
    finally:
        arm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
