"""Why a grasp held something else: re-run one benchmark episode and print, for each grasp, its
plan (the object aimed at, grasp point, yaw, width), the approach, the first contact (which body,
which finger), what the fingers closed on and what the micro-lift and the lift held.

    python tools/aim_replay.py --tree trees/clutter.yaml --seed 0 --episode 5 --lighting easy
    python tools/aim_replay.py --goal "the large green ball" --seed 300 --episodes 10
    python tools/aim_replay.py --from out/bench/results.jsonl [--limit 10]

The episode is re-run exactly as `bt-grasp bench` ran it (the same worker path and scene), so the
grasps printed are the ones scored. `--goal` builds each scene around the object the words
name, as `bt-grasp run --goal` does (the seed picks the rest). `--from` replays the episodes of a results file (of the
PyBullet arm) whose grasps held an object other than the one aimed at, and counts the causes.
Each grasp that missed its aim gets one cause, the first that applies:

- *merged mask*: the planned object's mask was less than 90 % one body (the segmenter joined
  touching objects, often of one colour): the plan aimed at two objects at once;
- *rolled*: the aimed object moved more than 1.5 cm between the start of the grasp and the end
  of the close (pushed away by a finger or rolling), and was not held;
- *finger on a neighbour*: the first object a finger or the palm touched on the way down was not
  the aimed one (a neighbour in the finger's path or under the palm);
- *closed on a neighbour*: the fingers reached the grasp pose clear, but closed on a neighbour;
- *off the aim*: the grasp point was more than 3 cm (sideways) from the aimed object's centre;
- *micro-lift*: the aimed object was between both fingers at the end of the close but was not
  held after the micro-lift;
- *other*.

Ground truth for reading only (simulator contacts and poses): no tree sees any of it. PyBullet
arm only (it reads Bullet's contact points of the gripper's links).
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bt_grasp.threads import use_one_thread

use_one_thread()  # before numpy is imported

ROOT = Path(__file__).resolve().parents[1]
ROLLED_M = 0.015  # the aimed object moved this far during the grasp: it rolled or was pushed
OFF_AIM_M = 0.03  # the grasp point this far sideways from the aimed object's centre
MERGED_PURITY = 0.9  # below this share of one body, the planned mask is two objects


@dataclass
class GraspLog:
    """What one executed grasp did, step by step (ground truth)."""

    start: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # object positions
    after_close: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    first_contact: str | None = None  # "finger 1 on red can (approach, tcp z 0.052 m)"
    first_body: str | None = None
    first_phase: str | None = None
    closed_on: list[list[str]] = field(default_factory=list)  # per finger, bodies touched after the close
    lifted: str | None = None  # what the tree's lift held at its end


def _positions(driver: Any) -> dict[str, tuple[float, float, float]]:
    out = {}
    for name in driver.object_names().values():
        pose = driver.object_pose(name)
        if pose is not None:
            out[name] = tuple(float(v) for v in pose[0])
    return out


class Watcher:
    """A step observer on the PyBullet arm: opens a GraspLog at each grasp's approach and fills it."""

    def __init__(self, driver: Any) -> None:
        import pybullet as pb

        self.pb, self.driver, self.logs = pb, driver, []
        self.prev = ("", "")

    def _name(self, body: int) -> str:
        d = self.driver
        if body == d.table_id:
            return "table"
        spec = d.bodies.get(body)
        return spec.name if spec is not None else f"body {body}"

    def _touches(self) -> list[tuple[str, str]]:
        """(which part of the gripper, which body) for every contact of the robot with a body."""
        d = self.driver
        out = []
        for c in self.pb.getContactPoints(bodyA=d.robot, physicsClientId=d.client):
            part = f"finger {list(d.finger_j).index(c[3])}" if c[3] in d.finger_j else "palm"
            out.append((part, self._name(c[2])))
        return out

    def __call__(self, world: Any) -> None:
        arm = self.driver.readout()
        primitive, phase = arm.primitive, arm.phase
        prev_primitive, prev_phase = self.prev
        self.prev = (primitive, phase)
        if primitive == "grasp" and phase == "approach" and (prev_primitive != "grasp" or prev_phase != "approach"):
            self.logs.append(GraspLog(start=_positions(self.driver)))
        if not self.logs:
            return
        log = self.logs[-1]
        if primitive == "grasp" and phase in ("approach", "close") and log.first_contact is None:
            hits = [(p, b) for p, b in self._touches() if b != "table" or p != "palm"]
            if hits:
                part, body = hits[0]
                log.first_contact = f"{part} on {body} ({phase}, tcp z {arm.tcp_z:.3f} m)"
                log.first_body, log.first_phase = body, phase
        if primitive == "grasp" and prev_phase == "close" and phase != "close":
            log.after_close = _positions(self.driver)
            log.closed_on = [sorted(self._name(b) for b in bodies) for bodies in self.driver.finger_touches()]
        if prev_primitive == "lift" and primitive != "lift":
            log.lifted = self.driver.held_object()


def cause(attempt: dict[str, Any], log: GraspLog) -> str:
    """The first cause that applies to a grasp that did not hold its aim (see the module doc)."""
    aimed = attempt.get("aimed")
    if aimed is None:
        return "aim unknown"
    if float(attempt.get("aimed_purity") or 1.0) < MERGED_PURITY:
        return "merged mask"
    p0, p1 = log.start.get(aimed), log.after_close.get(aimed)
    if p0 is not None and p1 is not None and math.dist(p0, p1) > ROLLED_M:
        return "rolled"
    if log.first_body is not None and log.first_body != aimed and log.first_phase == "approach":
        return "finger on a neighbour"
    if log.closed_on and any(b != aimed for side in log.closed_on for b in side if b != "table"):
        if not all(aimed in side for side in log.closed_on):
            return "closed on a neighbour"
    at = (attempt.get("plan") or {}).get("at")
    if at is not None and p0 is not None and math.dist(at[:2], p0[:2]) > OFF_AIM_M:
        return "off the aim"
    if log.closed_on and all(aimed in side for side in log.closed_on):
        return "micro-lift"
    return "other"


def replay(task: Any, quiet: bool = False) -> tuple[dict[str, Any], list[tuple[dict[str, Any], GraspLog]]]:
    """Run the episode with the watcher; (its record, [(executed attempt, its log)])."""
    from bt_grasp.bench.worker import run_task, world_for

    _, driver = world_for(task)
    if not hasattr(driver, "observe_steps") or not hasattr(driver, "robot"):
        raise SystemExit("aim_replay: the PyBullet arm only (it reads Bullet's contact points)")
    watcher = Watcher(driver)
    stop = driver.observe_steps(watcher)
    try:
        record = run_task(task)
    finally:
        stop()
    executed = [a for a in record.get("attempts", []) if a.get("executed")]
    return record, list(zip(executed, watcher.logs, strict=False))


def _fmt_pos(p: Any) -> str:
    return "(" + ", ".join(f"{float(v):.3f}" for v in p) + ")"


def print_episode(record: dict[str, Any], pairs: list[tuple[dict[str, Any], GraspLog]]) -> Counter[str]:
    """Print each grasp; returns the causes of the grasps that held something other than the aim."""
    causes: Counter[str] = Counter()
    print(f"{record.get('key')}: target {record.get('target')!r}, visibility {record.get('visibility')}, "
          f"{record.get('decision')} ({record.get('reason')}); taxonomy {record.get('taxonomy', {}).get('category')}; "
          f"goal first located as {record.get('located_name')!r} (on the target: {record.get('grounded')}), "
          f"{record.get('goal_locates')} locates")
    for i, (a, log) in enumerate(pairs):
        plan = a.get("plan") or {}
        aimed = a.get("aimed")
        print(f"  grasp {i + 1} [{a.get('node')}] aimed at {aimed!r} (seen as {a.get('aimed_as')!r}, "
              f"mask purity {a.get('aimed_purity')}); plan {plan.get('rank', '?')}/{plan.get('candidates', '?')}: "
              f"at {_fmt_pos(plan.get('at', ()))} yaw {plan.get('yaw')}° width {1000 * float(plan.get('width', 0)):.0f} mm; "
              f"nearest body {a.get('nearest')!r}")
        if aimed in log.start:
            print(f"    aimed object at {_fmt_pos(log.start[aimed])}"
                  + (f", after the close {_fmt_pos(log.after_close[aimed])}" if aimed in log.after_close else ""))
        print(f"    first contact: {log.first_contact or 'none'}")
        print("    closed on: " + "; ".join(f"finger {k}: {', '.join(s) or 'nothing'}"
                                            for k, s in enumerate(log.closed_on)))
        held = a.get("held")
        verdict = "aim" if held == aimed else "nothing" if not held else "NEIGHBOUR"
        line = f"    micro-lift held: {held!r} ({verdict}), Watchdog {a.get('label')}"
        if log.lifted is not None or held:
            line += f"; lift held: {log.lifted!r}"
        if held and held != aimed:
            why = cause(a, log)
            causes[why] += 1
            line += f"; cause: {why}"
        print(line)
    return causes


def main(argv: list[str] | None = None) -> int:
    from bt_grasp.bench.tasks import Task, replay_parser

    ap = replay_parser(__doc__.split("\n\n")[0], str(ROOT / "trees" / "clutter.yaml"))
    ap.add_argument("--episodes", type=int, default=1, help="replay this many episodes from --episode on")
    ap.add_argument("--goal", default=None,
                    help='a goal text that also chooses the target, as `bt-grasp run --goal` ("the large green ball")')
    ap.add_argument("--scene-cache", default=None, help="a bench run's OUT/scene_cache (faster, same scenes)")
    ap.add_argument("--from", dest="results", default=None,
                    help="replay the episodes of this results.jsonl whose grasps held a neighbour of their aim")
    ap.add_argument("--limit", type=int, default=20, help="with --from: at most this many episodes")
    args = ap.parse_args(argv)

    from bt_grasp.bench.splits import split_of
    from bt_grasp.errors import UserError

    if args.results:
        path = Path(args.results)
        if not path.is_file():
            print(f"{path}: no such results file (give a bench run's OUT/results.jsonl)", file=sys.stderr)
            return 2
        recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        chosen = [r for r in recs if "error" not in r and r.get("aim_held", 0) > r.get("aim_hit", 0)]
        tasks = [Task(tree=r["tree"], perception=r["perception"], lighting=r["lighting"], seed=r["seed"],
                      episode=r["episode"], image_size=r["image_size"], scene_cache=args.scene_cache)
                 for r in chosen[: args.limit]]
    else:
        tasks = [Task(tree=str(Path(args.tree).resolve()), perception=args.perception, lighting=args.lighting,
                      seed=args.seed, episode=e, image_size=args.image_size, scene_cache=args.scene_cache,
                      goal=args.goal) for e in range(args.episode, args.episode + max(1, args.episodes))]
    total: Counter[str] = Counter()
    hit = held = done = 0
    for task in tasks:
        try:
            split = split_of(task.seed)
        except UserError as exc:
            print(exc, file=sys.stderr)
            return 2
        if split == "test":
            print(f"--seed {task.seed}: a test seed (read why aim misses on dev seeds, 0-499)", file=sys.stderr)
            return 2
        record, pairs = replay(task)
        if "error" in record:
            print(f"{task.key}: {record['error']}", file=sys.stderr)
            return 1
        total += print_episode(record, pairs)
        hit, held, done = hit + record["aim_hit"], held + record["aim_held"], done + bool(record["task_success"])
    print(f"{len(tasks)} episodes: target in the basket in {done}; aim {hit}/{held} holds")
    print("causes of neighbour holds: " + (", ".join(f"{c} {n}" for c, n in total.most_common()) or "none"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
