"""The recovery-scenario suite of the mobile fetch-and-place task.

Each scenario fixes a household layout, an instruction, what counts as a target and how the
simulated user behaves; each *variant* is a tree (the agentic policy, an open-loop baseline and
three ablations). Metrics are scored from simulator ground truth (`GroundTruth`-style access to
the world, never visible to the tree): where each object ended, what the fingers held after each
grasp. Everything here is simulated; see bt_grasp/drivers/stretch/sim/household.py.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp.drivers.base import Fault
from bt_grasp.drivers.stretch.sim.household import HouseholdWorld
from bt_grasp.drivers.stretch.sim.room import Placement
from bt_grasp.mobile.ground_truth import body_receptacle, count_picks, held_body
from bt_grasp.mobile.user import Revision, SimulatedUser
from bt_grasp.resources import shipped_dir
from bt_grasp.stats import wilson

TREES = shipped_dir("trees")
VARIANTS: dict[str, Path] = {
    "agentic": TREES / "fetch_and_place.yaml",
    "open_loop": TREES / "mobile" / "fetch_open_loop.yaml",
    "no_watchdog": TREES / "mobile" / "fetch_no_watchdog.yaml",
    "no_conditioning": TREES / "mobile" / "fetch_no_conditioning.yaml",
    "no_retry": TREES / "mobile" / "fetch_no_retry.yaml",
}
DESTINATION = "cabinet"
# Slots (standoff base frame) where the simulated grasp of a small can is reliable (measured).
FRONT, BACK = (0.12, -0.62), (-0.12, -0.62)
SLOTS = [(-0.12, -0.62), (0.12, -0.62), (0.05, -0.66), (-0.12, -0.72), (0.12, -0.72)]


@dataclass
class Setup:
    """One trial's task: layout, instruction, targets (names, or slot indices -> bodies), user."""

    layout: list[Placement]
    instruction: str
    targets: frozenset[str]
    target_slots: tuple[int, ...] | None = None  # indices into layout: identical objects differ by place
    revision: Revision | None = None
    fault: Fault | None = None
    expect: str = "FINALIZE"


def _two_slots(rng: np.random.Generator) -> list[tuple[float, float]]:
    return [FRONT, BACK] if rng.random() < 0.5 else [BACK, FRONT]


def single(rng: np.random.Generator) -> Setup:
    a, b = _two_slots(rng)
    return Setup([Placement("small red can", "large table", a), Placement("blue cube", "large table", b)],
                 "Bring me the red can", frozenset({"small red can"}))


def colour(rng: np.random.Generator) -> Setup:
    a, b = _two_slots(rng)
    t, o = ("small red can", "small blue can") if rng.random() < 0.5 else ("small blue can", "small red can")
    layout = [Placement(t, "large table", a), Placement(o, "large table", b)]
    if rng.random() < 0.5:  # spawn order decides tie-breaks between equal matches: randomise it
        layout.reverse()
    return Setup(layout, "Bring me the can", frozenset({t}))


def spatial(rng: np.random.Generator) -> Setup:
    a, b = _two_slots(rng)
    k = int(rng.integers(2))
    return Setup([Placement("small red can", "large table", a), Placement("small red can", "large table", b)],
                 "Bring me the red can", frozenset({"small red can"}), target_slots=(k,))


def distractor(rng: np.random.Generator) -> Setup:
    x = float(rng.uniform(-0.08, 0.0))
    return Setup([Placement("small red can", "large table", (x, -0.62)),
                  Placement("red cube", "large table", (x + 0.085, -0.62))],
                 "Bring me the red can", frozenset({"small red can"}))


def identical(rng: np.random.Generator) -> Setup:
    a, b = _two_slots(rng)
    return Setup([Placement("small green can", "large table", a), Placement("small green can", "large table", b)],
                 "Bring me a green can", frozenset({"small green can"}))


def empty_grasp(rng: np.random.Generator) -> Setup:
    s = identical(rng)
    s.fault = Fault("remove_target_on_close", primitive="grasp", once=True)
    return s


def no_target(rng: np.random.Generator) -> Setup:
    a, b = _two_slots(rng)
    return Setup([Placement("small blue can", "large table", a), Placement("blue cube", "large table", b),
                  Placement("small green can", "small table", a)],
                 "Bring me the yellow ball", frozenset({"small yellow ball"}), expect="WAIT_CLARIFY")


def revision(rng: np.random.Generator) -> Setup:
    """The user changes its mind while the robot drives to the first table (the drive takes about
    7.5 s): a streaming robot halts the drive at once, a blocking one hears it after the drive."""
    a, _ = _two_slots(rng)
    return Setup([Placement("small red can", "large table", a), Placement("small blue can", "small table", a)],
                 "Bring me the red can", frozenset({"small red can"}),
                 revision=Revision(0, "Bring me the blue can", frozenset({"small blue can"}),
                                   delay_s=float(rng.uniform(2.0, 5.0))))


# The scenarios below put a distractor of similar description *nearer* the head camera than the
# target (more pixels: a naive "most visible match" takes it); only the request's qualifier tells
# them apart. The two sides (base x) are drawn at random.
NEAR_Y, FAR_Y, SIDE_X = -0.61, -0.74, 0.14


def _near_far(rng: np.random.Generator) -> tuple[tuple[float, float], tuple[float, float], float]:
    """(target slot: far, distractor slot: near, side) with the side of the target drawn at random."""
    side = 1.0 if rng.random() < 0.5 else -1.0
    return (side * SIDE_X, FAR_Y), (-side * SIDE_X, NEAR_Y), side


def salient_distractor(rng: np.random.Generator) -> Setup:
    """"The red cube": a bigger red box (a cuboid, not a cube) stands nearer."""
    far, near, _ = _near_far(rng)
    return Setup([Placement("red cube", "large table", far), Placement("medium red box", "large table", near)],
                 "Bring me the red cube", frozenset({"red cube"}))


def spatial_qualifier(rng: np.random.Generator) -> Setup:
    """Two identical red cans; the request names the target's place in the robot's view. The head
    camera is mounted rotated: base -x is the top of its image, i.e. "at the back" of the overlay."""
    far, near, side = _near_far(rng)
    where = "at the back" if side < 0 else "in front"
    return Setup([Placement("small red can", "large table", far), Placement("small red can", "large table", near)],
                 f"Bring me the red can {where}", frozenset({"small red can"}), target_slots=(0,))


def colour_similar(rng: np.random.Generator) -> Setup:
    """"The red can" with an orange or a pink can (colours lighting can confuse with red) nearer."""
    far, near, _ = _near_far(rng)
    other = "small orange can" if rng.random() < 0.5 else "small pink can"
    return Setup([Placement("small red can", "large table", far), Placement(other, "large table", near)],
                 "Bring me the red can", frozenset({"small red can"}))


SCENARIOS: dict[str, Callable[[np.random.Generator], Setup]] = {
    "single_target": single, "ambiguity_colour": colour, "ambiguity_spatial": spatial,
    "distractor": distractor, "identical_targets": identical, "induced_empty": empty_grasp,
    "no_valid_target": no_target, "goal_revision": revision,
    "salient_distractor": salient_distractor, "spatial_qualifier": spatial_qualifier,
    "colour_similar": colour_similar,
}
PERCEPTION = ("sim", "geometric")


@dataclass
class Trial:
    scenario: str
    variant: str
    seed: int
    decision: str
    reason: str
    success: bool
    picks: int
    wrong_picks: int
    empty_picks: int
    sim_time: float
    wall: float
    valid: bool = True
    revised: bool = False
    revised_at: float | None = None  # the user's time (world seconds) when it revised the request
    perception: str = "sim"
    events: list[dict[str, Any]] = field(default_factory=list)


def run_trial(world_obj: Any, scenario: str, variant: str, seed: int, trace: str | None = None,
              perception: str = "sim") -> Trial:
    """One episode of `scenario` under `variant` on an existing World (driver reused across trials),
    perceived by a fresh `perception` backend (sim: the annotator; geometric: RGB-D only)."""
    from bt_grasp.episode import run_episode
    from bt_grasp.world import world_perceiver

    world_obj.perceiver = world_perceiver(world_obj.profile, world_obj.driver, perception)
    driver = world_obj.driver
    world: HouseholdWorld = driver.world
    setup = SCENARIOS[scenario](np.random.default_rng(seed))
    world.layout = setup.layout
    target_bodies: set[int] = set()
    user_box: dict[str, SimulatedUser] = {}

    def make_user(w: HouseholdWorld) -> SimulatedUser:
        bodies = list(w.objects)  # spawn order = layout order
        nonlocal target_bodies
        if setup.target_slots is not None:
            target_bodies = {bodies[i] for i in setup.target_slots if i < len(bodies)}
        else:
            target_bodies = {b for b in bodies if w.objects[b].spec.name in setup.targets}
        u = SimulatedUser(setup.instruction, setup.targets, setup.revision,
                          frozenset(target_bodies) if setup.target_slots is not None else None,
                          clock=lambda: w.t)
        user_box["u"] = u
        return u

    driver.user_factory = make_user
    picks: list[int | None] = []  # ground truth after each grasp that ran to its end (halted ones excluded)
    hook = count_picks(driver, lambda: picks.append(held_body(world)))
    driver.clear_faults()
    if setup.fault is not None:
        driver.inject(setup.fault)
    t0 = time.time()
    try:
        res = run_episode(str(VARIANTS[variant]), world=world_obj, seed=seed, goal=setup.instruction, trace=trace)
    finally:
        delattr(driver, hook)
        driver.clear_faults()
    user = user_box.get("u")
    if user is not None:
        user.speak_if_due()  # a user whose time to revise came while the robot was not listening
    if user is not None and user.revision is not None and user.goal == user.revision.instruction:
        final_targets = {b for b in world.objects if world.objects[b].spec.name in user.revision.targets}
        revised = True
    else:
        final_targets, revised = set(target_bodies), False
    all_targets = final_targets | target_bodies
    wrong = sum(1 for p in picks if p is not None and p not in all_targets)
    empty = sum(1 for p in picks if p is None)
    delivered = any(body_receptacle(world, b) == DESTINATION for b in final_targets if b in world.objects)
    if setup.expect == "WAIT_CLARIFY":
        success = res.decision.value == "WAIT_CLARIFY" and not picks
    else:
        success = res.decision.value == "FINALIZE" and delivered and wrong == 0
    return Trial(scenario, variant, seed, res.decision.value, res.reason, success, len(picks), wrong, empty,
                 round(res.clock, 2), round(time.time() - t0, 2), world.valid, revised,
                 None if user is None or user.revised_at is None else round(user.revised_at, 3), perception,
                 [e.model_dump(mode="json") for e in res.events])


def make_world(profile: str = "stretch3_household") -> Any:
    """The household world the scenarios run in: the simulator's annotator as its perceiver
    (run_trial swaps in the one each trial asks for), built as every entry point builds it."""
    from bt_grasp.drivers.stretch.sim.household_driver import make_household_driver
    from bt_grasp.profile import load_profile
    from bt_grasp.world import build_world

    p = load_profile(profile)
    return build_world(p, perception="sim", driver=make_household_driver(p))


def run_suite(trials: int = 10, scenarios: list[str] | None = None, variants: list[str] | None = None,
              seed0: int = 0, progress: Callable[[Trial], None] | None = None,
              perceptions: list[str] | None = None) -> list[Trial]:
    world = make_world()
    out: list[Trial] = []
    try:
        for k in range(trials):  # trials outermost: a cut-short run still covers every cell evenly
            for sc in scenarios or list(SCENARIOS):
                for per in perceptions or ["sim"]:
                    for v in variants or list(VARIANTS):
                        t = run_trial(world, sc, v, seed0 + k, perception=per)
                        out.append(t)
                        if progress:
                            progress(t)
    finally:
        world.close()
    return out


def aggregate(trials: list[Trial]) -> list[dict[str, Any]]:
    rows = []
    keys = sorted({(t.scenario, t.perception, t.variant) for t in trials},
                  key=lambda k: (list(SCENARIOS).index(k[0]), _index(PERCEPTION, k[1]), _index(list(VARIANTS), k[2])))
    for sc, per, v in keys:
        ts = [t for t in trials if t.scenario == sc and t.variant == v and t.perception == per]
        n = len(ts)
        picks = sum(t.picks for t in ts)
        ok = sum(t.success for t in ts)
        lo, hi = wilson(ok, n)
        rows.append({"scenario": sc, "perception": per, "variant": v, "n": n,
                     "success": ok / n, "ci_low": lo, "ci_high": hi,
                     "finalize": sum(t.decision == "FINALIZE" for t in ts) / n,
                     "wait_clarify": sum(t.decision == "WAIT_CLARIFY" for t in ts) / n,
                     "retries": statistics.mean(max(t.picks - 1, 0) for t in ts),
                     "wrong_object": sum(t.wrong_picks for t in ts) / picks if picks else 0.0,
                     "empty_grasp": sum(t.empty_picks for t in ts) / picks if picks else 0.0,
                     "median_sim_s": statistics.median(t.sim_time for t in ts),
                     "invalid": sum(not t.valid for t in ts)})
    return rows


def _index(seq: Any, item: str) -> int:
    return list(seq).index(item) if item in seq else len(seq)


def markdown(rows: list[dict[str, Any]]) -> str:
    head = ("| scenario | perception | variant | n | success [95 % CI] | FINALIZE | WAIT_CLARIFY | retries (mean) "
            "| wrong-object | empty-grasp | median sim s |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        lines.append(f"| {r['scenario']} | {r['perception']} | {r['variant']} | {r['n']} | {r['success']:.0%} "
                     f"[{r['ci_low']:.0%}, {r['ci_high']:.0%}] | {r['finalize']:.0%} | "
                     f"{r['wait_clarify']:.0%} | {r['retries']:.2f} | {r['wrong_object']:.0%} | "
                     f"{r['empty_grasp']:.0%} | {r['median_sim_s']:.1f} |")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> Path:
    """Success rate per scenario and variant with 95 % CIs; one panel per perception backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scen = list(dict.fromkeys(r["scenario"] for r in rows))
    vars_ = list(dict.fromkeys(r["variant"] for r in rows))
    pers = list(dict.fromkeys(r.get("perception", "sim") for r in rows))
    fig, axes = plt.subplots(len(pers), 1, figsize=(13, 3.6 * len(pers)), squeeze=False)
    w = 0.8 / max(len(vars_), 1)
    for ax, per in zip(axes[:, 0], pers, strict=True):
        for i, v in enumerate(vars_):
            cell = [next((r for r in rows if r["scenario"] == s and r["variant"] == v
                          and r.get("perception", "sim") == per), None) for s in scen]
            ys = [c["success"] if c else 0.0 for c in cell]
            err = [[c["success"] - c["ci_low"] if c else 0.0 for c in cell],
                   [c["ci_high"] - c["success"] if c else 0.0 for c in cell]]
            ax.bar(np.arange(len(scen)) + i * w, ys, w, yerr=err, capsize=2, label=v)
        ax.set_xticks(np.arange(len(scen)) + w * (len(vars_) - 1) / 2, scen, rotation=20, ha="right")
        ax.set_ylabel("success rate")
        ax.set_ylim(0, 1.3)
        ax.legend(fontsize=8, ncol=len(vars_), loc="upper center")
        ax.set_title(f"Mobile fetch-and-place, simulated Stretch, perception: {per} (95 % Wilson CIs)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
