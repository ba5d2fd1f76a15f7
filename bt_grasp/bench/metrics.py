"""Benchmark metrics from episode records (the JSONL lines written by bt_grasp.bench.runner).

Pure functions over plain dicts, so they can be unit-tested on synthetic records and recomputed
from an old results file. Definitions (also in docs/benchmark.md):

- Grounding SR: share of episodes whose first goal locate that returned a mask covered the true
  target (majority of the mask's pixels on the target body, by the simulator's instance ids).
- Grasping SR: per episode, executed grasps the simulator says ended holding an object / executed
  grasps; averaged over the episodes with at least one executed grasp.
- Task SR: share of episodes that end with the target in the basket (simulator ground truth).
- Action Steps: grasp + push calls per episode (the episode's action budget counts these).
- Pushes, objects displaced (non-target objects moved > 2 cm), retries: means per episode.
- Decisions: FINALIZE / WAIT_CLARIFY shares and the reasons behind them.
- Watchdog agreement: executed grasps whose Watchdog label (SUCCESS vs not) matches the
  simulator's held/not-held, pooled over episodes.
- FINALIZE precision: success-FINALIZE episodes (FINALIZE other than a safe stop) with the
  target really in the basket / all success-FINALIZE episodes.
- Aim accuracy: executed grasps that held the object their plan aimed at / executed grasps that
  held anything, pooled (bench/aim.py).
- Failure taxonomy: one category per episode (see `taxonomy`).
Every rate carries a 95 % Wilson interval (bt_grasp.stats.wilson) and its N; N = 0 gives a NaN
rate (undefined), never 0, and the whole interval (0, 1).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bt_grasp.bench.aim import neighbour_grasps
from bt_grasp.stats import percentile, wilson

GROUP_KEYS = ("method", "perception", "lighting", "clutter")
# Failure taxonomy, in the order it is decided (the first that applies names the episode).
TAXONOMY = ("success", "false FINALIZE", "target left the table", "grounding miss",
            "grasped a neighbour of a visible target", "wrong object grasped", "grasp failed", "push ineffective",
            "search budget spent", "not found", "other")
BUDGET_WORDS = ("budget spent", "attempts spent", "rounds spent")
TARGET_GRASP_NODE = "grasp"  # the leaf that grasps the located target in the shipped trees


def success_finalize(rec: dict[str, Any]) -> bool:
    """Did the episode claim success (FINALIZE other than a safe stop after a failed grasp)?"""
    return rec.get("decision") == "FINALIZE" and "safe stop" not in str(rec.get("reason", ""))


def taxonomy(rec: dict[str, Any]) -> dict[str, str]:
    """{"category", "detail"} of one episode from its trace-derived fields and ground truth.

    success: the target is in the basket. false FINALIZE: success claimed, target not in the
    basket. target left the table: the simulator lost the target off the table (knocked, squeezed
    out of the grip or ejected by a contact; ground truth), after which no search can succeed
    (detail = the decision's reason). grounding miss: no locate of the goal ever returned the
    target's mask. grasped a neighbour of a visible target: grasps planned on the target closed
    on and held another object (detail = the neighbours held, most often first). wrong object
    grasped: the target-grasp leaf held another object it was aimed at (the target located as
    another object). grasp failed: grasps aimed at the target never held it (detail = the
    Watchdog label of the last one). push ineffective: pushes made at least half of the actions
    and the target was never held. search budget spent: the action budget, attempts or rounds
    ran out with the target never held, mostly on grasps of other objects (detail = "G grasps,
    P pushes: reason"). not found: the search ended with the target unseen ("not found:
    <goal>"). other: anything else (detail = the decision's reason). Aims are the planner's
    (bench/aim.py)."""
    target = rec.get("target")
    attempts = rec.get("attempts") or []
    reason = str(rec.get("reason", ""))
    held_target = any(a.get("held") == target for a in attempts)
    if rec.get("task_success"):
        return {"category": "success", "detail": reason}
    if success_finalize(rec):
        return {"category": "false FINALIZE", "detail": reason}
    if rec.get("target_left_table"):
        return {"category": "target left the table", "detail": reason}
    if not rec.get("grounded_ever", rec.get("grounded")):
        return {"category": "grounding miss", "detail": reason}
    if held_target:
        return _after_holding(reason)
    neighbours = Counter(str(a["held"]) for a in neighbour_grasps(attempts, target))
    if neighbours:
        return {"category": "grasped a neighbour of a visible target",
                "detail": ", ".join(f"{n} ×{k}" for n, k in neighbours.most_common())}
    wrong = [a for a in attempts if a.get("node") == TARGET_GRASP_NODE and a.get("held")
             and a.get("held") != target]
    if wrong:
        return {"category": "wrong object grasped", "detail": str(wrong[-1]["held"])}
    aimed = [a for a in attempts if a.get("aimed") == target and a.get("executed")]
    if aimed:
        return {"category": "grasp failed", "detail": str(aimed[-1].get("label"))}
    pushes, actions = int(rec.get("pushes", 0)), int(rec.get("actions", 0))
    if pushes and 2 * pushes >= actions:
        return {"category": "push ineffective", "detail": reason}
    if any(w in reason for w in BUDGET_WORDS):
        grasps = int(rec.get("grasp_calls", len(attempts)))
        return {"category": "search budget spent", "detail": f"{grasps} grasps, {pushes} pushes: {reason}"}
    if reason.startswith("not found"):
        return {"category": "not found", "detail": reason}
    return {"category": "other", "detail": reason}


def _after_holding(reason: str) -> dict[str, str]:
    """The target was held at some point yet did not end in the basket."""
    if any(w in reason for w in BUDGET_WORDS):
        return {"category": "search budget spent", "detail": f"target held once: {reason}"}
    if reason.startswith("not found"):
        return {"category": "not found", "detail": reason}
    return {"category": "other", "detail": reason}


CLUTTER_MODES = ("high", "low", "all")


def clutter_of(rec: dict[str, Any]) -> str:
    hc = rec.get("high_clutter")
    return "high" if hc else "low" if hc is not None else "unknown"


def _mean(values: list[float]) -> float:
    return float(statistics.fmean(values)) if values else math.nan


@dataclass
class GroupMetrics:
    """Metrics of one (method, perception, lighting, clutter) cell."""

    method: str
    perception: str
    lighting: str
    clutter: str
    episodes: int
    errors: int
    grounding_sr: float
    grasping_sr: float
    grasping_episodes: int
    task_sr: float
    task_ci: tuple[float, float]
    action_steps: float
    pushes: float
    displaced: float
    retries: float
    grasps_executed: float
    finalize: float
    decisions: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    watchdog_agreement: float = math.nan
    watchdog_judged: int = 0
    wall_median: float = math.nan
    wall_p95: float = math.nan
    grounding_ci: tuple[float, float] = (math.nan, math.nan)
    grasping_ci: tuple[float, float] = (math.nan, math.nan)  # pooled held / executed grasps
    grasping_pooled_n: int = 0
    grasping_held: int = 0
    finalize_ci: tuple[float, float] = (math.nan, math.nan)
    watchdog_ci: tuple[float, float] = (math.nan, math.nan)
    finalize_precision: float = math.nan  # success-FINALIZE with the target in the basket
    finalize_claims: int = 0
    finalize_precision_ci: tuple[float, float] = (math.nan, math.nan)
    taxonomy: dict[str, int] = field(default_factory=dict)
    launches: int = 0  # objects the simulator threw (score.py "launches"), over the cell's episodes
    launch_episodes: int = 0  # episodes with at least one
    grip_jumps: int = 0  # held objects the solver jumped within the grip (launches.py): not launches
    aim_hit: int = 0  # executed grasps that held the object their plan aimed at (aim.py)
    aim_held: int = 0  # executed grasps that held anything, with a known aim
    aim_ci: tuple[float, float] = (math.nan, math.nan)
    aim_episodes: int = 0  # episodes that recorded aims (results from before aims have none)

    @property
    def aim_accuracy(self) -> float:
        return self.aim_hit / self.aim_held if self.aim_held else math.nan

    @property
    def launches_per_100(self) -> float:
        return 100.0 * self.launches / self.episodes if self.episodes else math.nan

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def group_metrics(records: list[dict[str, Any]], method: str, perception: str, lighting: str,
                  clutter: str) -> GroupMetrics:
    """Metrics for one cell; `records` are that cell's episodes (errored ones included, counted)."""
    ok = [r for r in records if "error" not in r]
    n = len(ok)
    grasp_rates = [r["grasps_held"] / r["grasps_executed"] for r in ok if r.get("grasps_executed")]
    task_succ = sum(bool(r["task_success"]) for r in ok)
    judged = sum(int(r.get("watchdog_judged", 0)) for r in ok)
    agree = sum(int(r.get("watchdog_agree", 0)) for r in ok)
    decisions = Counter(r["decision"] for r in ok)
    reasons = Counter(f"{r['decision']}: {r['reason']}" for r in ok)
    walls = [float(r["wall"]) for r in ok if "wall" in r]
    grounded = sum(bool(r["grounded"]) for r in ok)
    executed = sum(int(r.get("grasps_executed", 0)) for r in ok)
    held = sum(int(r.get("grasps_held", 0)) for r in ok)
    claims = [r for r in ok if success_finalize(r)]
    true_claims = sum(bool(r["task_success"]) for r in claims)
    finals = decisions.get("FINALIZE", 0)
    cats = Counter((r.get("taxonomy") or taxonomy(r))["category"] for r in ok)
    aimed = [r for r in ok if "aim_held" in r]  # older records' "aimed" was the nearest body
    aim_hit, aim_held = sum(int(r["aim_hit"]) for r in aimed), sum(int(r["aim_held"]) for r in aimed)
    return GroupMetrics(
        method=method, perception=perception, lighting=lighting, clutter=clutter, episodes=n,
        errors=len(records) - n,
        grounding_sr=_mean([float(bool(r["grounded"])) for r in ok]),
        grasping_sr=_mean(grasp_rates), grasping_episodes=len(grasp_rates),
        task_sr=task_succ / n if n else math.nan, task_ci=wilson(task_succ, n),
        action_steps=_mean([float(r["actions"]) for r in ok]),
        pushes=_mean([float(r["pushes"]) for r in ok]),
        displaced=_mean([float(r["displaced"]) for r in ok]),
        retries=_mean([float(r["retries"]) for r in ok]),
        grasps_executed=_mean([float(r["grasps_executed"]) for r in ok]),
        finalize=decisions.get("FINALIZE", 0) / n if n else math.nan,
        decisions=dict(decisions), reasons=dict(reasons.most_common()),
        watchdog_agreement=agree / judged if judged else math.nan, watchdog_judged=judged,
        wall_median=percentile(walls, 50), wall_p95=percentile(walls, 95),
        grounding_ci=wilson(grounded, n), grasping_ci=wilson(held, executed), grasping_pooled_n=executed,
        grasping_held=held,
        finalize_ci=wilson(finals, n), watchdog_ci=wilson(agree, judged),
        finalize_precision=true_claims / len(claims) if claims else math.nan,
        finalize_claims=len(claims), finalize_precision_ci=wilson(true_claims, len(claims)),
        taxonomy={c: cats[c] for c in TAXONOMY if cats.get(c)},
        launches=sum(len(r.get("launches") or ()) for r in ok),
        launch_episodes=sum(bool(r.get("launches")) for r in ok),
        grip_jumps=sum(len(r.get("grip_jumps") or ()) for r in ok),
        aim_hit=aim_hit, aim_held=aim_held, aim_ci=wilson(aim_hit, aim_held), aim_episodes=len(aimed))


def compute(records: Iterable[dict[str, Any]], clutter_modes: tuple[str, ...] = CLUTTER_MODES
            ) -> list[GroupMetrics]:
    """All cells: every (method, perception, lighting) × clutter mode (high, low and all)."""
    recs = list(records)
    combos = sorted({(r["method"], r["perception"], r["lighting"]) for r in recs})
    out = []
    for m, p, li in combos:
        cell = [r for r in recs if (r["method"], r["perception"], r["lighting"]) == (m, p, li)]
        for mode in clutter_modes:
            # errored episodes have no clutter label: they are counted in "all" only
            sub = cell if mode == "all" else [r for r in cell if "error" not in r and clutter_of(r) == mode]
            if sub:
                out.append(group_metrics(sub, m, p, li, mode))
    return out


def clutter_split(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """High/low clutter counts over distinct scenes (a scene = lighting, seed, episode)."""
    scenes: dict[tuple[Any, ...], bool] = {}
    for r in records:
        if "error" in r or r.get("high_clutter") is None:
            continue
        scenes[(r["lighting"], r["seed"], r["episode"], r.get("image_size"))] = bool(r["high_clutter"])
    high = sum(scenes.values())
    return {"scenes": len(scenes), "high": high, "low": len(scenes) - high,
            "high_share": high / len(scenes) if scenes else math.nan}


def perf_summary(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Median / p95 wall seconds per episode (one core each) and the share of each bucket."""
    recs = [r for r in records if "error" not in r and "time" in r]
    walls = [float(r["wall"]) for r in recs]
    total = sum(walls)
    buckets = ("physics", "render", "perception", "tree")
    shares = {b: (sum(float(r["time"].get(b, 0.0)) for r in recs) / total if total else math.nan)
              for b in buckets}
    reset = sum(float(r["time"].get("reset", 0.0)) for r in recs)
    return {"episodes": len(recs), "median_s": percentile(walls, 50), "p95_s": percentile(walls, 95),
            "mean_s": _mean(walls), "shares": shares,
            "reset_share": reset / total if total else math.nan}
