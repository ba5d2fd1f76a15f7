"""Markdown tables and PNG plots of benchmark metrics (matplotlib with the Agg backend).

The markdown is the artefact people paste into issues and papers, so every number in it is
computed from the records and each table says what was simulated and how many episodes back it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .metrics import GroupMetrics, clutter_split, compute, perf_summary

SIMULATED_NOTE = (
    "All episodes are simulated: PyBullet UR5e + 85 mm parallel gripper, fixed overhead RGB-D "
    "camera (TinyRenderer), 15 objects per scene. Perception `sim` = the simulator's annotator "
    "(renderer instance ids), `geometric` = RGB-D only. Scores use simulator ground truth "
    "(held object, basket contents, instance ids).")


def _f(x: float, pct: bool = False, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:.0f}%" if pct else f"{x:.{digits}f}"


def metrics_table(groups: list[GroupMetrics]) -> str:
    """One row per (method, perception, lighting, clutter) cell."""
    head = ("| Method | Perception | Lighting | Clutter | N | Grounding SR | Grasping SR | Task SR "
            "(95% CI) | Action Steps | Pushes/ep | Displaced/ep | Retries/ep | FINALIZE | "
            "Watchdog agrees |")
    sep = "|" + "---|" * 14
    rows = [head, sep]
    for g in groups:
        ci = f"{_f(g.task_sr, True)} ({_f(g.task_ci[0], True)}–{_f(g.task_ci[1], True)})"
        wd = f"{_f(g.watchdog_agreement, True)} (n={g.watchdog_judged})" if g.watchdog_judged else "–"
        n = f"{g.episodes}" + (f" (+{g.errors} err)" if g.errors else "")
        rows.append(f"| {g.method} | {g.perception} | {g.lighting} | {g.clutter} | {n} | "
                    f"{_f(g.grounding_sr, True)} | {_f(g.grasping_sr, True)} | {ci} | "
                    f"{_f(g.action_steps)} | {_f(g.pushes)} | {_f(g.displaced)} | {_f(g.retries)} | "
                    f"{_f(g.finalize, True)} | {wd} |")
    return "\n".join(rows)


def decisions_table(groups: list[GroupMetrics], top: int = 4) -> str:
    """Decision reasons per method / perception / lighting (clutter = all)."""
    rows = ["| Method | Perception | Lighting | Decision: reason (count) |", "|---|---|---|---|"]
    for g in groups:
        if g.clutter != "all":
            continue
        reasons = "; ".join(f"{k} ({v})" for k, v in list(g.reasons.items())[:top])
        more = len(g.reasons) - top
        rows.append(f"| {g.method} | {g.perception} | {g.lighting} | {reasons}"
                    f"{f'; +{more} more' if more > 0 else ''} |")
    return "\n".join(rows)


def perf_table(records: list[dict[str, Any]]) -> str:
    """Wall time per episode per core by perception backend, with the share of each bucket."""
    rows = ["| Perception | Image | Episodes | Median s/ep | p95 s/ep | Physics | Render | "
            "Perception | Tree | (scene reset) |", "|---|---|---|---|---|---|---|---|---|---|"]
    combos = sorted({(r["perception"], r.get("image_size")) for r in records})
    for p, size in [*combos, ("all", None)]:
        sub = records if p == "all" else [r for r in records if (r["perception"], r.get("image_size")) == (p, size)]
        s = perf_summary(sub)
        if not s["episodes"]:
            continue
        sh = s["shares"]
        rows.append(f"| {p} | {size or '–'} | {s['episodes']} | {_f(s['median_s'])} | {_f(s['p95_s'])} | "
                    f"{_f(sh['physics'], True)} | {_f(sh['render'], True)} | {_f(sh['perception'], True)} | "
                    f"{_f(sh['tree'], True)} | {_f(s['reset_share'], True)} |")
    return "\n".join(rows)


def markdown(records: list[dict[str, Any]], groups: list[GroupMetrics] | None = None) -> str:
    groups = groups if groups is not None else compute(records)
    split = clutter_split(records)
    errors = [r for r in records if "error" in r]
    parts = ["# bt_grasp clutter benchmark", "", SIMULATED_NOTE, "",
             f"Scenes: {split['scenes']} (high clutter {split['high']}, low {split['low']}, "
             f"high share {_f(split['high_share'], True)}); episodes: {len(records)}"
             + (f", {len(errors)} errored" if errors else "") + ".", "",
             "## Metrics", "", metrics_table(groups), "",
             "## Decisions", "", decisions_table(groups), "",
             "## Time per episode (one core)", "", perf_table(records), ""]
    if errors:
        parts += ["## Errors", ""] + [f"- `{r['key']}`: {r['error']}" for r in errors[:20]] + [""]
    return "\n".join(parts)


def plots(groups: list[GroupMetrics], out_dir: str | Path) -> list[Path]:
    """Bar charts: success rates per method (one panel per perception × lighting), and the
    decision split. Returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cells = sorted({(g.perception, g.lighting) for g in groups})
    methods = sorted({g.method for g in groups})
    written = []
    metrics = (("grounding_sr", "Grounding SR"), ("grasping_sr", "Grasping SR"), ("task_sr", "Task SR"))
    for clutter in ("all", "high", "low"):
        fig, axes = plt.subplots(1, max(1, len(cells)), figsize=(4.2 * max(1, len(cells)), 3.6),
                                 squeeze=False, sharey=True)
        for ax, (p, li) in zip(axes[0], cells, strict=False):
            width = 0.8 / len(metrics)
            for k, (attr, label) in enumerate(metrics):
                vals = []
                for m in methods:
                    g = next((g for g in groups if (g.method, g.perception, g.lighting, g.clutter)
                              == (m, p, li, clutter)), None)
                    v = getattr(g, attr) if g else math.nan
                    vals.append(0.0 if v is None or math.isnan(v) else v)
                ax.bar([i + (k - 1) * width for i in range(len(methods))], vals, width, label=label)
            ax.set_xticks(range(len(methods)), methods, rotation=15)
            ax.set_ylim(0, 1.05)
            ax.set_title(f"{p} perception, {li} lighting", fontsize=9)
        axes[0][0].set_ylabel(f"success rate ({clutter} clutter)")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        path = out / f"success_{clutter}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    # decision split
    alls = [g for g in groups if g.clutter == "all"]
    if alls:
        fig, ax = plt.subplots(figsize=(max(5, 0.9 * len(alls)), 3.6))
        labels = [f"{g.method}\n{g.perception}/{g.lighting}" for g in alls]
        fin = [g.decisions.get("FINALIZE", 0) / g.episodes if g.episodes else 0 for g in alls]
        ax.bar(labels, fin, label="FINALIZE")
        ax.bar(labels, [1 - f for f in fin], bottom=fin, label="WAIT_CLARIFY")
        ax.set_ylabel("share of episodes")
        ax.tick_params(axis="x", labelsize=6)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / "decisions.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def write_report(records: list[dict[str, Any]], out_dir: str | Path) -> tuple[Path, list[Path]]:
    """report.md + metrics.json-free PNGs into out_dir; returns (markdown path, png paths)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    groups = compute(records)
    md = out / "report.md"
    md.write_text(markdown(records, groups))
    return md, plots(groups, out)
