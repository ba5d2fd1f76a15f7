"""Fit a profile's Watchdog thresholds from labelled traces, report held-out scores, write them back.

Why coordinate search: the classifier is a handful of interpretable thresholds whose effect on the
labels is monotone-ish but discontinuous (hysteresis windows, rule precedence), so gradient methods
do not apply and a full grid is too large. We sweep one threshold at a time over a grid, keep the
value with the best objective on the *train* split, and repeat for a few rounds. Among tied values
the middle one is taken (largest margin to both sides), which generalises better than an edge.

Objective: macro-F1 over the six labels, minus a steep penalty when EMPTY recall falls below
`min_empty_recall`, the share of successes called EMPTY exceeds `max_success_empty`, or the share
called SLIP exceeds `max_success_slip` (the recovery policy depends on those numbers most: each
such success is a needless retry of a grasp that held).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from bt_grasp.errors import UserError
from bt_grasp.watchdog.dataset import Trace, split
from bt_grasp.watchdog.evaluate import Scores, evaluate
from bt_grasp.watchdog.thresholds import SENSOR_FIELDS, WatchdogThresholds

GRID: dict[str, list[float]] = {
    "closed_eps": [0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.1],
    "empty_effort_max": [0.03, 0.05, 0.08, 0.1, 0.15, 0.2],
    "contact_effort_min": [0.03, 0.04, 0.06, 0.08, 0.1, 0.12],
    "hold_effort_min": [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5],
    "settle_window_s": [0.05, 0.075, 0.1, 0.125, 0.15, 0.2],
    "micro_lift_min_m": [0.004, 0.006, 0.008, 0.01, 0.012],
    "aperture_drift_max": [0.03, 0.05, 0.08, 0.12, 0.2],
    "slip_collapse_frac": [0.3, 0.45, 0.6, 0.75],
    "effort_drop_frac": [0.3, 0.45, 0.6, 0.75],
    "stall_velocity_eps": [0.005, 0.01, 0.02, 0.04],
    "stall_window_s": [0.15, 0.2, 0.3, 0.5],
    "lift_progress_min_m": [0.002, 0.004, 0.006],
    "pushed_up_load_n": [-20.0, -10.0, -5.0, 0.0, 2.0],
    "load_drop_max_n": [0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.5],
}


@dataclass
class CalibrationResult:
    thresholds: WatchdogThresholds
    initial: WatchdogThresholds
    train: Scores
    held_out: Scores
    held_out_initial: Scores
    n_train: int
    n_test: int
    rounds: int
    evaluations: int

    def report(self) -> str:
        changed = {k: (getattr(self.initial, k), v) for k, v in self.thresholds.decision_fields().items()
                   if getattr(self.initial, k) != v}
        lines = [f"train n={self.n_train}, held-out n={self.n_test}, {self.rounds} rounds, "
                 f"{self.evaluations} evaluations",
                 "changed thresholds: " + (", ".join(f"{k} {a} -> {b}" for k, (a, b) in changed.items())
                                           or "none"),
                 f"train:    macro-F1 {self.train.macro_f1():.3f}, EMPTY recall {self.train.empty_recall():.3f}, "
                 f"successes called EMPTY {self.train.success_called_empty():.3f}",
                 f"held-out before: macro-F1 {self.held_out_initial.macro_f1():.3f}, EMPTY recall "
                 f"{self.held_out_initial.empty_recall():.3f}, successes called EMPTY "
                 f"{self.held_out_initial.success_called_empty():.3f}",
                 f"held-out after:  macro-F1 {self.held_out.macro_f1():.3f}, EMPTY recall "
                 f"{self.held_out.empty_recall():.3f}, successes called EMPTY "
                 f"{self.held_out.success_called_empty():.3f}",
                 "", "held-out confusion (after):", self.held_out.table()]
        return "\n".join(lines)


def objective(s: Scores, min_empty_recall: float = 0.96, max_success_empty: float = 0.02,
              max_success_slip: float = 0.05) -> float:
    f1 = s.macro_f1()
    er, se, ss = s.empty_recall(), s.success_called_empty(), s.called("SUCCESS", "SLIP")
    pen = 0.0
    if er == er:  # not NaN
        pen += 10 * max(0.0, min_empty_recall - er)
    if se == se:
        pen += 10 * max(0.0, se - max_success_empty)
    if ss == ss:
        pen += 10 * max(0.0, ss - max_success_slip)
    return (f1 if f1 == f1 else 0.0) - pen


def fit(traces: list[Trace], initial: WatchdogThresholds | None = None, rounds: int = 2,
        grid: dict[str, list[float]] | None = None, **obj_kw: float) -> tuple[WatchdogThresholds, int]:
    """Coordinate search on `traces`; returns (best thresholds, number of evaluations)."""
    th = initial or WatchdogThresholds()
    grid = grid or GRID
    evals = 0
    best = objective(evaluate(traces, th), **obj_kw)
    for _ in range(rounds):
        improved = False
        for name, values in grid.items():
            cands = sorted(set(values) | {getattr(th, name)})
            scored: list[tuple[float, float]] = []
            for v in cands:
                try:
                    trial = th.model_copy(update={name: v})
                    WatchdogThresholds(**trial.model_dump())  # validators (model_copy skips them)
                except (ValidationError, ValueError):
                    continue
                evals += 1
                scored.append((v, objective(evaluate(traces, trial), **obj_kw)))
            if not scored:
                continue
            top = max(sc for _, sc in scored)
            tied = [v for v, sc in scored if sc >= top - 1e-12]
            choice = tied[len(tied) // 2]
            if top > best + 1e-12 or (top >= best - 1e-12 and choice != getattr(th, name)):
                improved = improved or top > best + 1e-12
                th = th.model_copy(update={name: choice})
                best = max(best, top)
        if not improved:
            break
    return WatchdogThresholds(**th.model_dump()), evals


def calibrate(traces: list[Trace], initial: WatchdogThresholds | None = None, test_frac: float = 0.3,
              seed: int = 0, rounds: int = 3, **obj_kw: float) -> CalibrationResult:
    """Split, fit on train, score on the held-out split (before and after)."""
    if len(traces) < 6:
        raise UserError(f"calibration needs labelled traces (got {len(traces)}; record some with "
                        "`bt-grasp watchdog record`)")
    initial = initial or WatchdogThresholds()
    train, test = split(traces, test_frac, seed)
    th, evals = fit(train, initial, rounds=rounds, grid=None, **obj_kw)
    seeds = sorted({int(tr.meta["seed"]) for tr in traces if isinstance(tr.meta.get("seed"), int)})
    th = th.model_copy(update={"calibration_seeds": seeds})
    return CalibrationResult(thresholds=th, initial=initial, train=evaluate(train, th),
                             held_out=evaluate(test, th), held_out_initial=evaluate(test, initial),
                             n_train=len(train), n_test=len(test), rounds=rounds, evaluations=evals)


# ----------------------------------------------------------------------------------------------
# writing back into a profile YAML


_TOP_KEY = re.compile(r"^[A-Za-z_][\w-]*\s*:")


def _format_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(round(v, 6))
    if isinstance(v, list):
        return "[" + ", ".join(_format_value(x) for x in v) + "]"
    return str(v)


def watchdog_block(th: WatchdogThresholds, keep: dict[str, Any] | None = None, comment: str = "") -> str:
    """The `watchdog:` YAML block: every decision field, plus sensor-model fields the file had."""
    lines = []
    if comment:
        lines += [f"# {c}" for c in comment.splitlines()]
    lines.append("watchdog:")
    data = th.decision_fields()
    for k in sorted(keep or {}):
        if k in SENSOR_FIELDS:
            data[k] = getattr(th, k)
    if th.calibration_seeds:
        data["calibration_seeds"] = th.calibration_seeds
    for k, v in data.items():
        lines.append(f"  {k}: {_format_value(v)}")
    return "\n".join(lines) + "\n"


def write_profile(path: str | Path, th: WatchdogThresholds, comment: str = "") -> None:
    """Replace only the top-level `watchdog:` block of a profile YAML (or append one).

    Everything outside that block (other keys, their comments and order) is kept byte for byte;
    comments *inside* the old watchdog block are replaced by a provenance comment.
    """
    p = Path(path)
    if not p.exists():
        raise UserError("profile to update not found (calibrate writes into an existing robot profile)",
                        file=str(p))
    text = p.read_text()
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UserError(f"YAML syntax error: {getattr(exc, 'problem', exc)}", file=str(p),
                        line=mark.line + 1 if mark else None) from None
    old = data.get("watchdog") if isinstance(data, dict) else None
    block = watchdog_block(th, old if isinstance(old, dict) else None, comment)
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if re.match(r"^watchdog\s*:", ln)), None)
    if start is None:
        new = text + ("" if text.endswith("\n") or not text else "\n") + block
    else:
        end = start + 1
        while end < len(lines) and not _TOP_KEY.match(lines[end]):
            end += 1
        # trailing comment lines just before the next key belong to that key: keep them
        while end - 1 > start and lines[end - 1].lstrip().startswith("#") and not lines[end - 1].startswith(" "):
            end -= 1
        # drop our own previous provenance comment directly above the block
        s0 = start
        while s0 > 0 and lines[s0 - 1].startswith("# fitted by bt-grasp watchdog calibrate"):
            s0 -= 1
        new = "".join(lines[:s0]) + block + "".join(lines[end:])
    check = yaml.safe_load(new)
    WatchdogThresholds(**check["watchdog"])  # what we write must parse back
    p.write_text(new)
