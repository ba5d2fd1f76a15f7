"""Which contact model stops the simulator throwing objects without changing what grasps do?

About half of clutter.yaml's failures on untuned scenes were "target left the table", and most of
those were launches (bt_grasp/drivers/pybullet_arm/launches.py): objects are multibodies, whose
solver removes a finger's penetration by velocity (ERP x depth / dt, metres per second for a few
millimetres). This runs the same episodes under the shipped contact model and under candidates,
interleaved episode by episode in one process, each applied after the episode's reset (the scene
is generated and settled with the shipped settings, physics_settings.hook_reset), so every
candidate starts from the identical scene. A candidate is data (ContactModel):

- soft pads:       contactStiffness 3e4, contactDamping 1e3 on the finger links (Franka's pads in
                   pybullet_data), so a penetration is pushed out gently (shipped: rigid;
                   contact.py pad_stiffness_n_m, set when the world is built, so this one is
                   applied before the reset);
- anchor:          frictionAnchor on the finger links (static friction anchored at first contact);
- vcap 3:          maxJointVelocity 3 m/s on every object (Bullet clamps the free base too): a
                   penetration correction cannot throw faster; falls under ~0.45 m are not touched;
- robotiq:         fingers close at 100 mm/s and grip with 20-235 N (a real 2F-85's range;
                   shipped: 160 mm/s, 0-max_force_n), through drivers/pybullet_arm/contact.py;
                   `robotiq 150` at 150 mm/s, the top of that range;
- solver 150:      150 solver iterations (VGN's), residual 1e-4: the solver may stop early;
- gear:            a gear constraint keeps the two fingers symmetric (erp 0.1, 50 N; bullet3 #2101);
- yaw turn:        motion, not contact: `place` carries with the gripper turned to DOWN, the wrist
                   turning at Bullet's 100 rad/s cap as it starts (shipped: keeps the grasp's yaw;
                   contact.py carry_keeps_yaw);
- arm vcap 3.14:   maxJointVelocity 3.14 rad/s on the arm's joints (a UR5e's wrist limit; Bullet's
                   default is 100): no IK jump can spin a joint faster;
- ik wraps:        IK wraps each joint into [-pi, pi), so a joint crossing +-pi spins a full turn
                   (shipped: the turn nearest the seed; contact.py ik_near_seed);
- before: ik wraps + yaw turn: the motion shipped until both were measured and switched on
                   (with the fast depart and the asked yaw below);
- before: fast depart: a grasp or push that starts among objects (after open_gripper where the
                   last grasp closed) rises at free transit, 0.8 m/s, turning to its new yaw at
                   the first IK point (shipped: the first 6 cm at 0.15 m/s, the whole rise keeping
                   the gripper's orientation; contact.py depart_mps), with the asked yaw;
                   `depart 0.3` at 0.3 m/s;
- turn in transit: the transit to the pre-grasp turns the gripper evenly along the line
                   (shipped: at its first IK point; contact.py turn_in_transit);
- before: asked yaw: a grasp or push turns the gripper to the yaw it is asked for (shipped: of that
                   yaw and the yaw a half turn away, the same grasp for mirror-image fingers, the
                   one nearer the gripper's current orientation; contact.py symmetric_yaw);
- joint speed 3.14: the joint targets of a line move at most 3.14 rad/s (a UR5e's 180 deg/s),
                   a step needing more takes longer (shipped: the tcp speed alone; contact.py
                   joint_speed_rps); unlike `arm vcap 3.14` the targets, not the motors, are limited;
- guarded release: `place` lowers into the basket at 0.1 m/s until the wrist load sensor feels
                   the held object rest on something (or the fingertips are 1 cm above the floor)
                   and opens there (shipped: opens at a tcp height of 0.25 m; contact.py
                   release_z_m);
- contact erp 0.02: contactERP 0.02 (pybullet's default 0.08), the share of a contact's
                   penetration the solver removes per step: a penetration is pushed out 4x slower;
- slop 2 mm:       contactSlop 0.002 (default 1e-5): the first 2 mm of a penetration are not pushed
                   out at all;
- grip 40 N:       grip forces capped at 40 N (the tree asks 60; the watchdog's firm hold reads
                   above 30), a lower squeeze on everything held;
- soft close 20:   the fingers close at 20 N (a Robotiq's least force) until both are blocked, the
                   grip then rising to the asked force over the settle's first 0.15 s (contact.py
                   close_force_n): an object wedged out of the closing fingers is pushed less hard;
- finger lead 10:  a closing finger's position target at most 10 mm past the finger (contact.py
                   finger_lead_m; shipped: the reference runs on to the closed stop, up to 4 cm
                   past a blocked finger): a finger that loses its counterpart closes at up to
                   0.48 m/s, not 1.4 m/s, so it cannot throw what it pushes; `finger lead 3` at
                   3 mm (0.14 m/s);
- rigid objects:   objects, table and basket as rigid bodies (maximal coordinates) with split
                   impulse (contact.py rigid_objects; shipped: one-link multibodies, whose
                   penetrations are removed by velocity); set as the reset builds the world;
- before: no retreat: `place` stays where it opened the gripper (shipped: it rises to a tcp
                   height of 0.40 m, clear of what the basket holds, and an object wedged between
                   the open fingers leaves the basket's region with them; contact.py retreat_z_m);
- before: rise when wedged: `place` rises only when the wrist still feels weight after the
                   release (contact.py rise_after_release);
- before: diagonal transit: the transit to a pre-grasp or above a push is one straight line
                   from where the gripper is (shipped: up to SAFE_Z, across, straight down;
                   contact.py level_transit);
- guarded descent: the grasp's last descent stops where the wrist load sensor feels the gripper
                   pushed up by 5 N (`guarded descent 20`, `50`, `150`: that many newtons) and
                   closes there (shipped: it descends to the grasp pose; contact.py descent_guard_n);
- before: full-force close: the fingers close on a low object at the asked force (shipped: at 3 N
                   per millimetre of side between the fingertips and the object's top, the grip
                   then rising to the asked force in the settle; contact.py band_close_n_per_m);
- and combinations of these (names joined by " + ").

Printed per candidate and perception: launches per 100 episodes (episodes with any), Grasping SR
(pooled held / executed grasps), Task SR with its Wilson 95 % CI, FINALIZE precision (with N),
median / p95 wall seconds per episode, and how many episodes end as the shipped model's did
(decision, reason, task success); then where the launches happen. Metrics come from
bt_grasp/bench/metrics.group_metrics. --out keeps every record (JSONL) and resumes from it.

Measured (docs/studies/contact-model.md): no contact candidate threw clearly less than the
shipped model; most launches were the held object in the carry, spun by the wrist at Bullet's
100 rad/s cap when IK targets jump, which the two motion switches now on remove; most of the rest
were the rise out of the objects after a failed grasp, which the slow depart removes. Of the rest,
grasps squeezing an object out at close and settle, soft finger pads threw the fewest on dev but
on fresh test scenes left more delivered objects unconfirmed, so they stay off; the closing-force,
finger-lead, ERP, slop and grip-force candidates did not throw clearly less, and some grasped less;
rigid objects threw as many (split impulse never acts on a finger's contact) and delivered fewer,
with physics 2.3 times cheaper.

    python tools/perf/contact_models.py [--seeds 0] [--episodes 12] [--perception sim geometric]
        [--image-size 256] [--candidates "soft pads" anchor] [--out results.jsonl]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

from bt_grasp.threads import use_one_thread  # noqa: E402

use_one_thread()  # before numpy is imported: one core means one thread

from bt_grasp.drivers.pybullet_arm.params import FREE_TRANSIT_MPS  # noqa: E402

# Driver switches (contact.py ContactOptions) that take effect as the reset builds the world: a
# candidate sets them before the reset; every other switch after it, so the scene is the same.
BUILD_SWITCHES = frozenset({"pad_stiffness_n_m", "pad_damping", "rigid_objects"})


@dataclass(frozen=True)
class ContactModel:
    """A candidate: driver switches by their contact.py names, and engine settings the driver has
    no switch for. The defaults (no switch, no setting) are shipped."""

    switches: tuple[tuple[str, Any], ...] = ()  # (ContactOptions field, value) pairs
    friction_anchor: bool = False        # frictionAnchor on the finger links
    object_max_velocity: float | None = None  # maxJointVelocity of every object (m/s)
    solver_iterations: int | None = None
    residual_threshold: float | None = None
    gear: bool = False                   # gear constraint between the two fingers
    arm_max_velocity: float | None = None  # maxJointVelocity of the six arm joints (rad/s)
    contact_erp: float | None = None     # engine contactERP (penetration share removed per step)
    contact_slop: float | None = None    # engine contactSlop (m of penetration left alone)

    def __post_init__(self) -> None:
        from bt_grasp.drivers.pybullet_arm.contact import ContactOptions

        known = {f.name for f in fields(ContactOptions)}
        unknown = [name for name, _ in self.switches if name not in known]
        if unknown:
            raise ValueError(f"not a contact.py switch: {', '.join(unknown)}")

    def __add__(self, other: ContactModel) -> ContactModel:
        """Both models' settings (other's win where both set one)."""
        changed = {f.name: getattr(other, f.name) for f in fields(other)
                   if f.name != "switches" and getattr(other, f.name) != f.default}
        return replace(self, switches=tuple({**dict(self.switches), **dict(other.switches)}.items()), **changed)

    def switched(self, at_build: bool) -> dict[str, Any]:
        """The driver switches set as the world is built (at_build) or after the reset."""
        return {name: value for name, value in self.switches if (name in BUILD_SWITCHES) == at_build}


def switches(**values: Any) -> ContactModel:
    """A candidate made of driver switches only (contact.py names)."""
    return ContactModel(switches=tuple(values.items()))


SHIPPED = ContactModel()
SOFT_PADS = switches(pad_stiffness_n_m=3e4)
ANCHOR = ContactModel(friction_anchor=True)
VCAP = ContactModel(object_max_velocity=3.0)
ROBOTIQ = switches(finger_speed_mps=0.05, force_min_n=20.0, force_max_n=235.0)
ROBOTIQ_150 = switches(finger_speed_mps=0.075, force_min_n=20.0, force_max_n=235.0)
SOLVER = ContactModel(solver_iterations=150, residual_threshold=1e-4)
GEAR = ContactModel(gear=True)
YAW_TURN = switches(carry_keeps_yaw=False)
ARM_VCAP = ContactModel(arm_max_velocity=3.14)
IK_WRAPS = switches(ik_near_seed=False)
FAST_DEPART = switches(depart_mps=FREE_TRANSIT_MPS)
DEPART_03 = switches(depart_mps=0.3)
TURN = switches(turn_in_transit=True)
DIAGONAL = switches(level_transit=False)
ASKED_YAW = switches(symmetric_yaw=False)
JOINT_SPEED = switches(joint_speed_rps=3.14)
GUARDED = switches(release_z_m=0.0)
CONTACT_ERP = ContactModel(contact_erp=0.02)
SLOP = ContactModel(contact_slop=0.002)
GRIP_40 = switches(force_min_n=0.0, force_max_n=40.0)
SOFT_CLOSE = switches(close_force_n=20.0)
FINGER_LEAD = switches(finger_lead_m=0.003)
FINGER_LEAD_10 = switches(finger_lead_m=0.01)
RIGID = switches(rigid_objects=True)
NO_RETREAT = switches(retreat_z_m=0.0)
RISE_WHEN_WEDGED = switches(rise_after_release=False)
GUARDED_DESCENT = switches(descent_guard_n=5.0)
GUARDED_DESCENT_20 = switches(descent_guard_n=20.0)
GUARDED_DESCENT_50 = switches(descent_guard_n=50.0)
GUARDED_DESCENT_150 = switches(descent_guard_n=150.0)
FULL_FORCE_CLOSE = switches(band_close_n_per_m=math.inf)

CANDIDATES: dict[str, ContactModel] = {
    "shipped": SHIPPED,
    "soft pads": SOFT_PADS,
    "anchor": ANCHOR,
    "vcap 3": VCAP,
    "robotiq": ROBOTIQ,
    "robotiq 150": ROBOTIQ_150,
    "solver 150": SOLVER,
    "gear": GEAR,
    "yaw turn": YAW_TURN,
    "arm vcap 3.14": ARM_VCAP,
    "ik wraps": IK_WRAPS,
    "before: ik wraps + yaw turn": IK_WRAPS + YAW_TURN + FAST_DEPART + ASKED_YAW,
    "before: fast depart": FAST_DEPART + ASKED_YAW,
    "depart 0.3": DEPART_03,
    "turn in transit": TURN,
    "before: asked yaw": ASKED_YAW,
    "joint speed 3.14": JOINT_SPEED,
    "before: asked yaw + joint speed 3.14": ASKED_YAW + JOINT_SPEED,
    "guarded release": GUARDED,
    "joint speed 3.14 + guarded release": JOINT_SPEED + GUARDED,
    "contact erp 0.02": CONTACT_ERP,
    "slop 2 mm": SLOP,
    "grip 40 N": GRIP_40,
    "soft close 20": SOFT_CLOSE,
    "finger lead 3": FINGER_LEAD,
    "finger lead 10": FINGER_LEAD_10,
    "rigid objects": RIGID,
    "before: no retreat": NO_RETREAT,
    "before: rise when wedged": RISE_WHEN_WEDGED,
    "before: diagonal transit": DIAGONAL,
    "before: rise when wedged + diagonal transit": RISE_WHEN_WEDGED + DIAGONAL,
    "guarded descent": GUARDED_DESCENT,
    "guarded descent 20": GUARDED_DESCENT_20,
    "guarded descent 50": GUARDED_DESCENT_50,
    "guarded descent 150": GUARDED_DESCENT_150,
    "before: full-force close": FULL_FORCE_CLOSE,
    "rigid objects + soft pads": RIGID + SOFT_PADS,
    "soft pads + anchor": SOFT_PADS + ANCHOR,
    "soft pads + vcap 3": SOFT_PADS + VCAP,
    "soft pads + anchor + vcap 3 + robotiq": SOFT_PADS + ANCHOR + VCAP + ROBOTIQ,
}


def apply(driver: Any, model: ContactModel) -> None:
    """Switch the driver's freshly reset world to `model` (shipped: nothing is called at all)."""
    import pybullet as pb

    from bt_grasp.drivers.pybullet_arm.contact import set_contact

    c = driver.client
    for j in driver.finger_j if model.friction_anchor else ():
        pb.changeDynamics(driver.robot, j, frictionAnchor=1, physicsClientId=c)
    if model.object_max_velocity is not None:
        for body in driver.bodies:
            pb.changeDynamics(body, -1, maxJointVelocity=model.object_max_velocity, physicsClientId=c)
    set_contact(**model.switched(at_build=False))
    for j in driver.arm_j if model.arm_max_velocity is not None else ():
        pb.changeDynamics(driver.robot, j, maxJointVelocity=model.arm_max_velocity, physicsClientId=c)
    engine: dict[str, Any] = {}
    if model.solver_iterations is not None:
        engine["numSolverIterations"] = model.solver_iterations
    if model.residual_threshold is not None:
        engine["solverResidualThreshold"] = model.residual_threshold
    for key, value in (("contactERP", model.contact_erp), ("contactSlop", model.contact_slop)):
        if value is not None:
            engine[key] = value
    if engine:
        pb.setPhysicsEngineParameter(physicsClientId=c, **engine)
    if model.gear:  # the two prismatic fingers open with positive positions: ratio -1 keeps them equal
        right, left = driver.finger_j
        gear = pb.createConstraint(driver.robot, right, driver.robot, left, pb.JOINT_GEAR, [1, 0, 0],
                                   [0, 0, 0], [0, 0, 0], physicsClientId=c)
        pb.changeConstraint(gear, gearRatio=-1, erp=0.1, maxForce=50, physicsClientId=c)


def before_reset(model: ContactModel = SHIPPED) -> None:
    """The shipped driver switches for the reset, but `model`'s build-time ones (BUILD_SWITCHES:
    set as the reset builds the robot and objects; the fingers are open and clear of the objects
    until the episode starts). The engine needs nothing: the reset's resetSimulation restores
    Bullet's defaults and scene.configure the shipped ones, and the other finger and object
    dynamics belong to bodies the reset rebuilds."""
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact

    reset_contact()
    set_contact(**model.switched(at_build=True))


def _load(out: Path | None) -> list[dict[str, Any]]:
    if out is None or not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def run(tasks: list[Any], names: list[str], out: Path | None = None,
        log: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Every task under every candidate in `names`, interleaved; records carry `contact_model`.
    Records already in `out` (same candidate and episode key) are kept and not run again."""
    from physics_settings import hook_reset  # the sibling tool (this script's folder is on sys.path)

    from bt_grasp.bench.worker import close_worlds, run_task, world_for

    records = _load(out)
    done = {(r["contact_model"], r["key"]) for r in records}
    current = {"model": SHIPPED}
    _, driver = world_for(tasks[0])
    hook_reset(driver, lambda: before_reset(current["model"]), lambda: apply(driver, current["model"]))
    try:
        for i, task in enumerate(tasks, 1):
            for name in names:
                if (name, task.key) in done:
                    continue
                current["model"] = CANDIDATES[name]
                rec = {**run_task(task), "contact_model": name}
                records.append(rec)
                if out is not None:
                    with out.open("a") as f:
                        f.write(json.dumps(rec) + "\n")
                if log:
                    log(f"[{i}/{len(tasks)}] {name}: {task.key} {rec['wall']:.1f} s {rec.get('decision')} "
                        f"success={rec.get('task_success')} launches={len(rec.get('launches') or ())} "
                        f"{rec.get('error', '')}")
    finally:
        before_reset()
        close_worlds()
    return records


def table(records: list[dict[str, Any]], names: list[str]) -> list[str]:
    """The markdown table, one row per (candidate, perception), candidates in `names` order."""
    from physics_settings import same_outcome

    from bt_grasp.bench.metrics import group_metrics

    def pct(x: float) -> str:
        return f"{100 * x:.0f}"

    lines = ["| Candidate | Perception | N | Launches/100 ep (eps with any) | Grasping SR held/executed | "
             "Task SR [95% CI] | FINALIZE precision (N) | Median s/ep | p95 s/ep | Same outcome as shipped |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    perceptions = sorted({r["perception"] for r in records})
    for perception in perceptions:
        base = {r["key"]: r for r in records if r["contact_model"] == "shipped" and r["perception"] == perception}
        for name in names:
            recs = [r for r in records if r["contact_model"] == name and r["perception"] == perception]
            if not recs:
                continue
            g = group_metrics(recs, recs[0]["method"], perception, recs[0]["lighting"], "all")
            ok = [r for r in recs if "error" not in r]
            grasping = (f"{pct(g.grasping_held / g.grasping_pooled_n)} % ({g.grasping_held}/{g.grasping_pooled_n})"
                        if g.grasping_pooled_n else "n/a (0/0)")
            wins = sum(bool(r["task_success"]) for r in ok)
            precision = f"{pct(g.finalize_precision)} %" if g.finalize_claims else "n/a"
            errors = f" ({g.errors} errors)" if g.errors else ""
            lines.append(
                f"| {name} | {perception} | {g.episodes}{errors} | {g.launches_per_100:.0f} ({g.launch_episodes}) | "
                f"{grasping} | {wins}/{g.episodes} [{pct(g.task_ci[0])}, {pct(g.task_ci[1])}] % | "
                f"{precision} ({g.finalize_claims}) | {g.wall_median:.2f} | {g.wall_p95:.2f} | "
                f"{sum(same_outcome(r, base) for r in ok)}/{len(ok)} |")
    return lines


def where(records: list[dict[str, Any]], names: list[str]) -> list[str]:
    """Per candidate, perceptions pooled: launch speeds (a velocity cap lowers them without
    removing the launch) and where the launches happen, primitive / phase, most common first."""
    from bt_grasp.stats import percentile

    out = []
    for name in names:
        thrown = [t for r in records if r["contact_model"] == name for t in r.get("launches") or ()]
        if thrown:
            speeds = [float(t["speed"]) for t in thrown]
            spots = Counter(f"{t['primitive']}/{t['phase']}" for t in thrown)
            out.append(f"{name}: {len(thrown)} at median {percentile(speeds, 50):.1f} / max {max(speeds):.1f} m/s; "
                       + ", ".join(f"{k} {v}" for k, v in spots.most_common()))
    return out


def main(argv: list[str] | None = None) -> int:
    from bt_grasp.bench.tasks import make_tasks

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--episodes", type=int, default=12, help="episodes per seed")
    ap.add_argument("--perception", nargs="+", default=["sim"])
    ap.add_argument("--image-size", type=int, default=256)
    ap.add_argument("--tree", default=str(ROOT / "trees" / "clutter.yaml"))
    ap.add_argument("--candidates", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES),
                    help="which to run besides the shipped model (always run, first)")
    ap.add_argument("--out", type=Path, help="JSONL of every record; a rerun resumes from it")
    ap.add_argument("--goal", default=None, help='build each scene around the object the words name ("the white domino")')
    args = ap.parse_args(argv)
    names = ["shipped", *(n for n in args.candidates if n != "shipped")]
    tasks = make_tasks([args.tree], args.seeds, args.episodes, ["easy"], args.perception, args.image_size)
    tasks = [replace(t, goal=args.goal) for t in tasks] if args.goal else tasks
    records = run(tasks, names, args.out, log=lambda s: print(s, file=sys.stderr, flush=True))
    keys = {t.key for t in tasks}
    records = [r for r in records if r["key"] in keys and r["contact_model"] in names]
    print(f"{len(args.seeds) * args.episodes} scenes (seeds {' '.join(map(str, args.seeds))}, {args.episodes} "
          f"each, {args.image_size}², easy lighting) per candidate and perception\n")
    print("\n".join(table(records, names)))
    print("\nlaunches (perceptions pooled): speed and primitive/phase")
    print("\n".join(where(records, names)) or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
