"""Read a launch step by step: re-run one benchmark episode and print, around the moment an
object was thrown, its velocity, position and every contact it had, with the gripper's state.

A launch in `results.jsonl` says which body, how fast, in which primitive and phase. Why it flew
is in the steps before: what pressed into it, how deep, with what force, and what let go. The
episode is re-run exactly as `bt-grasp bench` ran it (the same worker path, scene and seeds; both
engines are deterministic), so the printed steps are the ones that threw it.

    python tools/perf/launch_trace.py --tree trees/clutter.yaml --seed 0 --episode 5 --lighting hard \\
        --robot ur5e_robotiq_mujoco [--body "small red can"] [--before 0.4] [--after 0.1] [--every 2]

Without --body the episode runs once to find its first launch, then again to print around it.
Each line: clock (s), primitive/phase, the body's velocity and position, the finger gap, its
reference and effort, the tool height, then `what:depth mm/normal force N` per contact. Ground
truth for reading only: no tree sees any of it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from bt_grasp.threads import use_one_thread

use_one_thread()  # before numpy is imported

ROOT = Path(__file__).resolve().parents[2]


def _line(driver: Any, arm: Any, world: Any, body: int, name: str) -> str:
    """One printed step: `arm` is the driver's readout() at that step."""
    vx, vy, vz = driver.launch_watch.velocity(world, body)
    pose = driver.object_pose(name)
    x, y, z = pose[0] if pose is not None else (float("nan"),) * 3
    contacts = " ".join(f"{what}:{depth * 1000:.1f}mm/{force:.0f}N" for what, depth, force in driver.contacts_of(name))
    return (f"t={arm.clock:7.3f} {arm.primitive}/{arm.phase:10s} "
            f"v=({vx:+.2f},{vy:+.2f},{vz:+.2f}) p=({x:.3f},{y:.3f},{z:.3f}) "
            f"gap={arm.gap_m * 1000:.1f}mm ref={arm.reference_m * 1000:.1f}mm effort={arm.effort:.2f} "
            f"tcp_z={arm.tcp_z:.3f} | {contacts}")


def main(argv: list[str] | None = None) -> int:
    from bt_grasp.bench.tasks import Task, replay_parser

    ap = replay_parser(__doc__.split("\n\n")[0], str(ROOT / "trees" / "clutter.yaml"))
    ap.add_argument("--robot", default=None, help="robot profile (default: the UR5e arm in PyBullet)")
    ap.add_argument("--scene-cache", default=None, help="a bench run's OUT/scene_cache (faster, same scenes)")
    ap.add_argument("--body", default=None, help="the object to follow (default: the episode's first launch)")
    ap.add_argument("--at", type=float, default=None, help="the clock (s) to print around (default: the launch's)")
    ap.add_argument("--before", type=float, default=0.4, help="seconds printed before --at")
    ap.add_argument("--after", type=float, default=0.1, help="seconds printed after --at")
    ap.add_argument("--every", type=int, default=2, help="print every this many physics steps")
    args = ap.parse_args(argv)

    from bt_grasp.bench.worker import run_task, world_for

    task = Task(tree=str(Path(args.tree).resolve()), perception=args.perception, lighting=args.lighting,
                seed=args.seed, episode=args.episode, image_size=args.image_size, robot=args.robot,
                scene_cache=args.scene_cache)
    body_name, at = args.body, args.at
    if body_name is None or at is None:
        record = run_task(task)
        if "error" in record:  # a tree or profile the user pointed at (exit 2), or the episode crashed
            user, _, why = record["error"].partition("UserError: ")
            print(why if not user else f"{task.key}: {record['error']}", file=sys.stderr)
            return 2 if not user else 1
        launch = next((x for x in record["launches"] + record.get("grip_jumps", [])
                       if body_name in (None, x["body"])), None)
        if launch is None:
            print(f"{task.key}: no launch{'' if body_name is None else ' of ' + repr(body_name)} in this episode "
                  "(pass --body and --at to follow an object anyway)")
            return 0
        body_name = body_name or launch["body"]
        at = launch["clock"] if at is None else at
        print(f"{task.key}: {body_name} thrown at {launch['speed']} m/s in {launch['primitive']}/{launch['phase']}, "
              f"t={launch['clock']} s")

    _, driver = world_for(task)
    t0, t1 = at - args.before, at + args.after

    def print_step(world: Any) -> None:
        if not t0 <= driver.clock <= t1:
            return
        arm = driver.readout()
        if arm.step % args.every:
            return
        body = next((b for b, s in driver.bodies.items() if s.name == body_name), None)
        if body is not None:
            print(_line(driver, arm, world, body, body_name))

    stop_printing = driver.observe_steps(print_step)
    try:
        record = run_task(task)
    finally:
        stop_printing()
    print(f"episode: {record.get('decision')} ({record.get('reason')}); launches: {record.get('launches')}; "
          f"grip jumps: {record.get('grip_jumps')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
