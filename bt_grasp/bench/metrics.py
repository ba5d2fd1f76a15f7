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
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

GROUP_KEYS = ("method", "perception", "lighting", "clutter")
CLUTTER_MODES = ("high", "low", "all")


def clutter_of(rec: dict[str, Any]) -> str:
    hc = rec.get("high_clutter")
    return "high" if hc else "low" if hc is not None else "unknown"


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson interval for a success rate: honest error bars at small n."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def _mean(values: list[float]) -> float:
    return float(statistics.fmean(values)) if values else math.nan


def _pct(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return float(s[lo] + (s[hi] - s[lo]) * (k - lo))


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
        wall_median=_pct(walls, 0.5), wall_p95=_pct(walls, 0.95))


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
    return {"episodes": len(recs), "median_s": _pct(walls, 0.5), "p95_s": _pct(walls, 0.95),
            "mean_s": _mean(walls), "shares": shares,
            "reset_share": reset / total if total else math.nan}
