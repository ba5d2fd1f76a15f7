"""Markdown tables and PNG plots of benchmark metrics (matplotlib with the Agg backend).

The markdown is the artefact people paste into issues and papers, so every number in it is
computed from the records and each table says what was simulated and how many episodes back it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .metrics import TAXONOMY, GroupMetrics, clutter_split, compute, perf_summary

ENGINES = {  # profile driver -> what simulates the arm and draws the camera
    "pybullet_arm": "PyBullet UR5e + 85 mm parallel gripper, fixed overhead RGB-D camera (TinyRenderer)",
    "mujoco_arm": "MuJoCo UR5e + 85 mm parallel gripper, fixed overhead RGB-D camera (MuJoCo's OpenGL "
                  "renderer, meshes untextured)",
}


def simulated_note(records: list[dict[str, Any]]) -> str:
    """What simulated the episodes: the engines of the records' robot profiles (records written
    before the driver was recorded ran the default arm, PyBullet's)."""
    drivers = sorted({str(r.get("driver", "pybullet_arm")) for r in records}) or ["pybullet_arm"]
    arms = "; ".join(ENGINES.get(d, f"driver {d}") for d in drivers)
    return (f"All episodes are simulated: {arms}, 15 objects per scene. Perception `sim` = the "
            "simulator's annotator (renderer instance ids), `geometric` = RGB-D only. Scores use "
            "simulator ground truth (held object, basket contents, instance ids).")


def _f(x: float, pct: bool = False, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:.0f}%" if pct else f"{x:.{digits}f}"


def _rate(x: float, ci: tuple[float, float], n: int) -> str:
    """"62% (41–79%, n=8)"; an undefined rate (n = 0) is "n/a (n=0)", never 0."""
    if n == 0 or x is None or math.isnan(x):
        return "n/a (n=0)"
    return f"{_f(x, True)} ({_f(ci[0], True)}–{_f(ci[1], True)}, n={n})"


def metrics_table(groups: list[GroupMetrics]) -> str:
    """One row per (method, perception, lighting, clutter) cell; every rate with its 95 % CI and N."""
    head = ("| Method | Perception | Lighting | Clutter | N | Grounding SR | Grasping SR (pooled) | "
            "Task SR | FINALIZE precision | Action Steps | Pushes/ep | Displaced/ep | Retries/ep | "
            "FINALIZE | Watchdog agrees | Launches/100 ep |")
    sep = "|" + "---|" * 16
    rows = [head, sep]
    for g in groups:
        n = f"{g.episodes}" + (f" (+{g.errors} err)" if g.errors else "")
        rows.append(f"| {g.method} | {g.perception} | {g.lighting} | {g.clutter} | {n} | "
                    f"{_rate(g.grounding_sr, g.grounding_ci, g.episodes)} | "
                    f"{_rate(_pooled(g), g.grasping_ci, g.grasping_pooled_n)} | "
                    f"{_rate(g.task_sr, g.task_ci, g.episodes)} | "
                    f"{_rate(g.finalize_precision, g.finalize_precision_ci, g.finalize_claims)} | "
                    f"{_f(g.action_steps)} | {_f(g.pushes)} | {_f(g.displaced)} | {_f(g.retries)} | "
                    f"{_rate(g.finalize, g.finalize_ci, g.episodes)} | "
                    f"{_rate(g.watchdog_agreement, g.watchdog_ci, g.watchdog_judged)} | "
                    f"{_f(g.launches_per_100, digits=1)}{_jumps(g)} |")
    return "\n".join(rows)


def _jumps(g: GroupMetrics) -> str:
    """Grip jumps beside the launches, when there were any: a held object that never left the grip."""
    return f" (+{g.grip_jumps} in the grip)" if g.grip_jumps else ""


def _pooled(g: GroupMetrics) -> float:
    """Pooled grasping rate (held / executed over the cell), the one the CI is computed for."""
    return math.nan if not g.grasping_pooled_n else g.grasping_held / g.grasping_pooled_n


def taxonomy_table(groups: list[GroupMetrics]) -> str:
    """Failure taxonomy: episodes per category (share of the cell), clutter high / low / all."""
    rows = ["| Method | Perception | Lighting | Clutter | N | " + " | ".join(TAXONOMY) + " |",
            "|" + "---|" * (5 + len(TAXONOMY))]
    for g in groups:
        cells = [f"{g.taxonomy.get(c, 0)} ({_f(g.taxonomy.get(c, 0) / g.episodes, True)})"
                 if g.episodes else "n/a" for c in TAXONOMY]
        rows.append(f"| {g.method} | {g.perception} | {g.lighting} | {g.clutter} | {g.episodes} | "
                    + " | ".join(cells) + " |")
    return "\n".join(rows)


def aim_table(groups: list[GroupMetrics]) -> str:
    """Aim accuracy per cell: grasps that held the object their plan aimed at / grasps that held
    anything; cells of records from before aims were recorded are left out."""
    rows = ["| Method | Perception | Lighting | Clutter | N | Aim accuracy (held the aimed object / held any) |",
            "|---|---|---|---|---|---|"]
    for g in groups:
        if g.aim_episodes:
            rows.append(f"| {g.method} | {g.perception} | {g.lighting} | {g.clutter} | {g.aim_episodes} | "
                        f"{_rate(g.aim_accuracy, g.aim_ci, g.aim_held)} |")
    return "\n".join(rows) if len(rows) > 2 else ""


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


def named(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The episodes whose goal is the target's name (today's benchmark): the main tables' input."""
    return [r for r in records if r.get("form") in (None, "name") and "skipped" not in r]


def markdown(records: list[dict[str, Any]], groups: list[GroupMetrics] | None = None) -> str:
    from bt_grasp.bench.instruction_report import form_tables

    forms = form_tables(records)
    records = named(records)
    groups = groups if groups is not None else compute(records)
    split = clutter_split(records)
    errors = [r for r in records if "error" in r]
    parts = ["# bt_grasp clutter benchmark", "", simulated_note(records), "",
             f"Scenes: {split['scenes']} (high clutter {split['high']}, low {split['low']}, "
             f"high share {_f(split['high_share'], True)}); episodes: {len(records)}"
             + (f", {len(errors)} errored" if errors else "") + ".", "",
             "## Metrics", "", metrics_table(groups), "",
             "FINALIZE precision: success-FINALIZE episodes with the target really in the basket "
             "/ all success-FINALIZE episodes. Rates: 95 % Wilson CI and N; n/a = undefined (N = 0).", "",
             "## Failure taxonomy", "", taxonomy_table(groups), ""]
    aims = aim_table(groups)
    if aims:
        parts += ["## Aim", "", aims, "",
                  "Aim: the object a grasp's plan was made for (the located target, or the occluder or "
                  "hider the tree chose), by the simulator's instance ids under its mask; held: the "
                  "simulator's held object after the micro-lift.", ""]
    parts += [
             "## Decisions", "", decisions_table(groups), "",
             "## Time per episode (one core)", "", perf_table(records), ""]
    if forms:
        parts += [forms]
    if errors:
        parts += ["## Errors", ""] + [f"- `{r['key']}`: {r['error']}" for r in errors[:20]] + [""]
    return "\n".join(parts)


def plots(groups: list[GroupMetrics], out_dir: str | Path) -> list[Path]:
    """Bar charts: success rates per method (one panel per perception × lighting) with 95 % CI
    whiskers and N on each bar; an undefined rate (N = 0) is an outlined, hatched "n/a" bar, not
    a bar at 0; the legend sits below the panels, off the bars. Then the decision split."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cells = sorted({(g.perception, g.lighting) for g in groups})
    methods = sorted({g.method for g in groups})
    written = []
    metrics = (("grounding_sr", "grounding_ci", "episodes", "Grounding SR"),
               ("pooled_grasp", "grasping_ci", "grasping_pooled_n", "Grasping SR (pooled)"),
               ("task_sr", "task_ci", "episodes", "Task SR"),
               ("finalize_precision", "finalize_precision_ci", "finalize_claims", "FINALIZE precision"))
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:purple")
    for clutter in ("all", "high", "low"):
        fig, axes = plt.subplots(1, max(1, len(cells)), figsize=(5.0 * max(1, len(cells)), 4.2),
                                 squeeze=False, sharey=True)
        for ax, (p, li) in zip(axes[0], cells, strict=False):
            width = 0.8 / len(metrics)
            ax.bar(0, 0, 0, fill=False, hatch="//", edgecolor="0.7", label="n/a: undefined (N = 0)")
            for k, (attr, ci_attr, n_attr, label) in enumerate(metrics):
                ax.bar(0, 0, 0, color=colours[k], label=label)  # legend entry even if no bar is defined
                for i, m in enumerate(methods):
                    g = next((g for g in groups if (g.method, g.perception, g.lighting, g.clutter)
                              == (m, p, li, clutter)), None)
                    x = i + (k - (len(metrics) - 1) / 2) * width
                    n = int(getattr(g, n_attr)) if g else 0
                    v = (_pooled(g) if attr == "pooled_grasp" else getattr(g, attr)) if g else math.nan
                    if n == 0 or v is None or math.isnan(v):
                        ax.bar(x, 1.0, width, fill=False, hatch="//", edgecolor="0.7", linewidth=0.5)
                        ax.text(x, 0.5, "n/a", ha="center", va="center", rotation=90, fontsize=6, color="0.4")
                        continue
                    lo, hi = getattr(g, ci_attr)
                    ax.bar(x, v, width, color=colours[k])
                    ax.errorbar(x, v, yerr=[[max(0.0, v - lo)], [max(0.0, hi - v)]], fmt="none", ecolor="black",
                                capsize=2, lw=0.8)  # Wilson bounds can miss v by a rounding error
                    ax.text(x, min(hi, 1.0) + 0.02, f"n={n}", ha="center", va="bottom", rotation=90, fontsize=5)
            ax.set_xticks(range(len(methods)), methods, rotation=15)
            ax.set_ylim(0, 1.25)
            ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
            ax.set_title(f"{p} perception, {li} lighting", fontsize=9)
        axes[0][0].set_ylabel(f"rate, 95 % CI ({clutter} clutter)")
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7, frameon=False)
        fig.tight_layout(rect=(0, 0.14, 1, 1))
        path = out / f"success_{clutter}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    alls = [g for g in groups if g.clutter == "all"]
    if alls:
        fig, ax = plt.subplots(figsize=(max(5, 0.9 * len(alls)), 4.0))
        labels = [f"{g.method}\n{g.perception}/{g.lighting}\nn={g.episodes}" for g in alls]
        fin = [g.decisions.get("FINALIZE", 0) / g.episodes if g.episodes else 0 for g in alls]
        ax.bar(labels, fin, label="FINALIZE")
        ax.bar(labels, [1 - f for f in fin], bottom=fin, label="WAIT_CLARIFY")
        ax.set_ylabel("share of episodes")
        ax.tick_params(axis="x", labelsize=6)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
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
    groups = compute(named(records))
    md = out / "report.md"
    md.write_text(markdown(records, groups))
    return md, plots(groups, out)
