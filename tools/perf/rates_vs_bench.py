"""Predicted (`verify --rates`) against measured: a tree's decision mix from the outcome rates one
benchmark run measured, beside what another run (other seeds) measured, with 95 % intervals.

`--rates DIR` is a `bt-grasp bench` output whose `rates-<method>-<perception>-<lighting>.yaml`
give the rates (measured on dev seeds, say); `--measured DIR` a bench output on other seeds
(`results.jsonl`). Per method of the measured run it prints, as Markdown tables: each decision
and ending predicted from the first run's rates, predicted from the measured run's own rates
(what the model gives when the rates are right: the rest of the gap is the model's, chiefly
answers that are not independent across attempts), and measured (k/N, 95 % Wilson interval);
Task SR measured beside the predicted FINALIZE; expected actions, perception calls and ticks
against the measured mean (ticks are a figure when the rates give `durations:`); then which leaves' rates move the prediction most from one run to the
other (each leaf's rates swapped alone).

    python tools/perf/rates_vs_bench.py --rates out/rates-dev --measured out/rates-test
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

from bt_grasp.resources import TREES, shipped_path
from bt_grasp.spec.loader import load_tree
from bt_grasp.stats import wilson
from bt_grasp.verifier.core import verify_tree
from bt_grasp.verifier.probability.chances import Chances
from bt_grasp.verifier.probability.rates import Rates, load_rates
from bt_grasp.verifier.probability.report import rate_tree

Pair = tuple[float, float]


def _pct(v: Pair) -> str:
    lo, hi = v
    return f"{100 * lo:.0f} %" if abs(hi - lo) < 5e-4 else f"{100 * lo:.0f}–{100 * hi:.0f} %"


def _measured(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {100 * k / n:.0f} % [{100 * lo:.0f}, {100 * hi:.0f}]"


def _inside(pred: Pair, k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return "yes" if pred[0] <= hi + 1e-9 and pred[1] >= lo - 1e-9 else "**no**"


def _mean(values: list[float], digits: int = 2) -> str:
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, n - 1))
    half = 1.96 * sd / math.sqrt(n)
    return f"{mean:.{digits}f} [{mean - half:.{digits}f}, {mean + half:.{digits}f}]"


def _chances(res: Any, spec: Any, rates: Rates) -> Chances:
    got = rate_tree(res, spec, rates)
    if not isinstance(got, Chances):
        raise SystemExit(f"{spec.name}: {got}")
    return got


def _swapped(base: Rates, other: Rates, key: str) -> Rates:
    table = dict(base.table)
    table[key] = other.table[key]
    return Rates(table, base.pos, base.counts, base.file, base.durations)


def _records(path: Path) -> dict[str, list[dict[str, Any]]]:
    by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("error") or "decision" not in rec:
            continue
        by_method[f"{rec['method']}-{rec['perception']}-{rec['lighting']}"].append(rec)
    return by_method


def compare(method: str, recs: list[dict[str, Any]], rates_dir: Path, measured_dir: Path) -> list[str]:
    tree = recs[0]["method"]
    spec = load_tree(shipped_path(TREES, tree) or recs[0]["tree"])
    res = verify_tree(spec, upper=False)
    dev = load_rates(rates_dir / f"rates-{method}.yaml", spec.registry)
    own_path = measured_dir / f"rates-{method}.yaml"
    own = load_rates(own_path, spec.registry) if own_path.exists() else None
    pred = _chances(res, spec, dev)
    pred_own = _chances(res, spec, own) if own is not None else None
    n = len(recs)
    endings = Counter(f"{r['decision']}: {_reason(r)}" for r in recs)
    decisions = Counter(r["decision"] for r in recs)
    out = [f"### {method}: {n} measured episodes", ""]
    if pred.open_questions:
        out += [f"Questions without rates (intervals): {', '.join(pred.open_questions)}.", ""]
    lost = _unattributed(own_path)
    if lost:
        out += [f"The measured run's own rates file counts {lost} calls as `(unattributed)` (an older "
                "rates file: two leaves writing one key in a tick were not told apart); their leaves "
                "stay open in the second column.", ""]
    out += ["| | predicted (rates of --rates) | predicted (the measured run's own rates) | measured, 95 % CI | "
            "predicted inside the CI |", "|---|---|---|---|---|"]
    rows: list[tuple[str, Pair, Pair | None, int]] = []
    for d in ("FINALIZE", "WAIT_CLARIFY"):
        rows.append((f"**{d}**", pred.decisions[d], pred_own.decisions[d] if pred_own else None, decisions[d]))
        for text in sorted(set(pred.endings) | {e for e in endings if e.startswith(d + ":")}):
            if not text.startswith(d + ":"):
                continue
            p = pred.endings.get(text, (0.0, 0.0))
            po = pred_own.endings.get(text, (0.0, 0.0)) if pred_own else None
            if p[1] < 5e-4 and endings[text] == 0 and (po is None or po[1] < 5e-4):
                continue
            rows.append((f"{text[len(d) + 2:]}", p, po, endings[text]))
    for name, p, po, k in rows:
        out.append(f"| {name} | {_pct(p)} | {_pct(po) if po else 'n/a'} | {_measured(k, n)} | {_inside(p, k, n)} |")
    task = sum(bool(r.get("task_success")) for r in recs)
    out.append(f"| Task SR (target in the basket; predicted: FINALIZE) | {_pct(pred.decisions['FINALIZE'])} | "
               f"{_pct(pred_own.decisions['FINALIZE']) if pred_own else 'n/a'} | {_measured(task, n)} | "
               f"{_inside(pred.decisions['FINALIZE'], task, n)} |")
    for key, field in (("actions", "actions"), ("perception", "perception_calls")):
        values = [float(r[field]) for r in recs]
        out.append(f"| expected {key} (measured: mean, 95 % CI) | {_num(pred.expected.get(key))} | "
                   f"{_num(pred_own.expected.get(key)) if pred_own else 'n/a'} | {_mean(values)} | |")
    ticks = [float(r["ticks"]) for r in recs if "ticks" in r]
    if ticks:  # a figure when the rates give durations (mean ticks per call), else an interval
        out.append(f"| expected ticks (measured: mean, 95 % CI) | {_num(pred.ticks, 1)} | "
                   f"{_num(pred_own.ticks, 1) if pred_own else 'n/a'} | {_mean(ticks, 1)} | |")
    out += ["", *_leaves(res, spec, dev, own, pred)]
    return out


def _unattributed(path: Path) -> int:
    """Calls a rates file's `source.node_counts` could not attribute (older rates files)."""
    if not path.exists():
        return 0
    source = (yaml.safe_load(path.read_text()) or {}).get("source") or {}
    return int(sum(((source.get("node_counts") or {}).get("(unattributed)") or {}).values()))


def _reason(rec: dict[str, Any]) -> str:
    """The episode's reason as the verifier words it: the goal's object is "target object"."""
    target = rec.get("target")
    reason = str(rec["reason"])
    return reason.replace(f": {target}", ": target object") if target else reason


def _num(v: Pair | None, digits: int = 2) -> str:
    if v is None:
        return "0"
    return f"{v[0]:.{digits}f}" if abs(v[1] - v[0]) < 5e-3 else f"{v[0]:.{digits}f}–{v[1]:.{digits}f}"


def _leaves(res: Any, spec: Any, dev: Rates, own: Rates | None, pred: Chances) -> list[str]:
    """Each leaf's rates taken from the measured run alone: how far the predicted FINALIZE moves."""
    if own is None:
        return []
    base = pred.decisions["FINALIZE"]
    moves = []
    for key in sorted(set(dev.table) & set(own.table)):
        if dev.table[key] == own.table[key]:
            continue
        got = _chances(res, spec, _swapped(dev, own, key)).decisions["FINALIZE"]
        moves.append((abs(got[1] - base[1]) + abs(got[0] - base[0]), key, got))
    moves.sort(reverse=True)
    if not moves:
        return []
    out = ["| leaf (rates key) | rates of --rates (calls) | measured run's rates (calls) | predicted FINALIZE "
           "with this leaf's measured rates alone |", "|---|---|---|---|"]
    for _, key, got in moves[:6]:
        out.append(f"| {key} | {_dist(dev, key)} | {_dist(own, key)} | {_pct(base)} → {_pct(got)} |")
    return out


def _dist(rates: Rates, key: str) -> str:
    counts = rates.counts.get(key, {})
    n = sum(counts.values())
    shown = ", ".join(f"{o} {p:.2f}" for o, p in sorted(rates.table[key].items(), key=lambda kv: -kv[1]) if p > 0)
    return f"{shown} ({n})" if n else shown


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", required=True, type=Path, help="bench output whose rates predict")
    ap.add_argument("--measured", required=True, type=Path, help="bench output to compare with")
    args = ap.parse_args(argv)
    for method, recs in sorted(_records(args.measured / "results.jsonl").items()):
        print("\n".join(compare(method, recs, args.rates, args.measured)))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
