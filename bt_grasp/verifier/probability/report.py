"""`verify --rates`: the probabilities and expected costs of a verified tree, as text and JSON."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from bt_grasp.verifier.probability.chances import Chances, TimeMatters, chances
from bt_grasp.verifier.probability.rates import Rates, load_rates
from bt_grasp.verifier.report import VerifyResult

__all__ = ["load_rates", "rate_tree", "render_chances"]


def rate_tree(res: VerifyResult, spec: Any, rates: Rates) -> Chances | str:
    """The chances of `res`'s tree under the rates, or why there are none (the rates need
    the exact search's run graph of a proven tree)."""
    if not res.proven or res.graph is None:
        return ("no probabilities: they are computed on the exact search's graph of every run, "
                "and this verification has none (" + (res.problem or "another way answered") + ")")
    try:
        got = chances(res.graph, res.graph_root, rates, spec, res.outcome_classes)
    except TimeMatters as exc:
        return str(exc)
    if got.ticks_idle:  # idle ticks are not in the chain: the most any run takes bounds them
        worst = res.bounds.get("ticks", res.longest)
        got.ticks = (got.ticks[0], math.inf if worst is None else max(float(worst), got.ticks[1]))
    return got


def _num(v: tuple[float, float], digits: int) -> str:
    lo, hi = v
    if abs(hi - lo) <= 1e-12:
        return f"{lo:.{digits}f}"
    return f"{lo:.{digits}f} .. {hi:.{digits}f}"


def _listed(names: list[str], most: int = 6) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def render_chances(ch: Chances | str, rates_path: str | Path) -> list[str]:
    if isinstance(ch, str):
        return [ch]
    shown = _listed(ch.open_questions)
    how = ("exact (the run graph solved as an absorbing Markov chain)" if ch.exact else
           f"bounds: min .. max over the answers of the questions without rates ({shown})")
    out = [f"probabilities with the rates of {rates_path}, {how}:"]
    for decision, p in ch.decisions.items():
        out.append(f"  {decision:<13} {_num(p, 4)}")
        for text, q in sorted(ch.endings.items(), key=lambda kv: -kv[1][1]):
            if text.startswith(decision + ":"):
                out.append(f"    {_num(q, 4)}  {text[len(decision) + 2:]}")
    out.append("expected per run:")
    for key, v in ch.expected.items():
        out.append(f"  {key:<22} {_num(v, 3)}")
    out.append(f"  {'ticks':<22} {_num(ch.ticks, 1)}")
    if ch.ticks_idle:
        out.append("  (ticks: a call is watched or a timeout runs, so time passes in ticks the run "
                   "graph skips: the upper end is the most ticks any run takes)")
    elif ch.lengths_open:
        out.append(f"  (ticks: the calls of {_listed(ch.lengths_open)} last from 1 tick to their longest; "
                   "their `durations:` in the rates give a figure)")
    if not ch.exact:
        out.append("  (an interval's ends are each reached by some answers to the open questions, "
                   "not all by the same ones)")
    return out
