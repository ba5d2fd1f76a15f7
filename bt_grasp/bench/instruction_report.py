"""Per-form figures of the referring-expression benchmark (`bt-grasp bench --instructions`):
grounding accuracy, Task SR (for `ambiguous` and `absent`: the right decision) and FINALIZE
precision, each with a 95 % Wilson interval and its N, per clutter level."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bt_grasp.bench.instructions import FORMS
from bt_grasp.bench.metrics import clutter_of
from bt_grasp.stats import wilson

CLUTTER = ("low", "high", "all")


@dataclass(frozen=True)
class FormCell:
    """One table row: a (method, perception, lighting, form, clutter) cell's counts."""

    method: str
    perception: str
    lighting: str
    form: str
    clutter: str
    n: int
    skipped: int
    grounded: int
    right: int
    claimed: int
    true_claims: int

    def rate(self, k: int, n: int) -> tuple[float, tuple[float, float], int]:
        return (k / n if n else math.nan), wilson(k, n), n


def form_cells(records: list[dict[str, Any]]) -> list[FormCell]:
    """Every cell with episodes of an instruction form (errored episodes are left out)."""
    recs = [r for r in records if r.get("form") and "error" not in r]
    combos = sorted({(r["method"], r["perception"], r["lighting"], r["form"]) for r in recs},
                    key=lambda c: (c[0], c[1], c[2], FORMS.index(c[3]) if c[3] in FORMS else 99))
    out = []
    for m, p, li, f in combos:
        cell = [r for r in recs if (r["method"], r["perception"], r["lighting"], r["form"]) == (m, p, li, f)]
        for mode in CLUTTER:
            ran = [r for r in cell if "skipped" not in r and (mode == "all" or clutter_of(r) == mode)]
            skipped = sum(1 for r in cell if "skipped" in r) if mode == "all" else 0
            if not ran and not skipped:
                continue
            out.append(FormCell(m, p, li, f, mode, len(ran), skipped,
                                sum(bool(r.get("form_grounded")) for r in ran),
                                sum(bool(r.get("right_decision")) for r in ran),
                                sum(bool(r.get("finalize_claimed")) for r in ran),
                                sum(bool(r.get("finalize_true")) for r in ran)))
    return out


def _rate(x: float, ci: tuple[float, float], n: int) -> str:
    if n == 0 or math.isnan(x):
        return "n/a (n=0)"
    return f"{100 * x:.0f}% ({100 * ci[0]:.0f}–{100 * ci[1]:.0f}%, n={n})"


def form_tables(records: list[dict[str, Any]]) -> str:
    """A markdown table per form ("" when no record has one)."""
    cells = form_cells(records)
    if not cells:
        return ""
    parts = ["## Instructions (referring expressions)", "",
             "Grounding: the first locate of the instruction that returned a mask covers the object it "
             "refers to (`ambiguous`: its candidates cover both objects; `absent`: no locate returned one). "
             "Task SR: the object in the basket (`ambiguous`: WAIT_CLARIFY asking \"ambiguous ...\"; "
             "`absent`: WAIT_CLARIFY \"not found ...\"). FINALIZE precision: success-FINALIZEs with an object "
             "the instruction refers to in the basket / all success-FINALIZEs. Skipped: scenes with no "
             "instruction of the form.", ""]
    for form in [f for f in FORMS if any(c.form == f for c in cells)]:
        parts += [f"### {form}", "",
                  "| method | perception | lighting | clutter | N | skipped | grounding | Task SR | FINALIZE precision |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for c in (c for c in cells if c.form == form):
            parts.append(f"| {c.method} | {c.perception} | {c.lighting} | {c.clutter} | {c.n} | {c.skipped} | "
                         f"{_rate(*c.rate(c.grounded, c.n))} | {_rate(*c.rate(c.right, c.n))} | "
                         f"{_rate(*c.rate(c.true_claims, c.claimed))} |")
        parts.append("")
    return "\n".join(parts)
