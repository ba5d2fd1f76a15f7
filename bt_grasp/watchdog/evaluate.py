"""Scores of the Watchdog against labelled traces: confusion matrix, precision/recall, macro-F1.

The two numbers the recovery policy lives on are reported separately: EMPTY recall (an empty
grasp not caught is a wrong FINALIZE) and the share of true successes called EMPTY (a needless
retry, or worse a WAIT_CLARIFY with the object in hand). SLIP recall and the share of successes
called SLIP are reported beside them. Rates carry 95 % Wilson intervals (bt_grasp.stats, at the
exact 95 % quantile Z95), because a few hundred traces leave a recall uncertain by several points;
a rate without support has the whole interval (0, 1).

`split_by_seed` separates traces recorded from the calibration seeds from the held-out ones, so
a score is only called held-out when no threshold was fitted on its seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp import stats
from bt_grasp.outcomes import LABELS, Label
from bt_grasp.watchdog.classify import Verdict, classify_many
from bt_grasp.watchdog.dataset import Trace
from bt_grasp.watchdog.thresholds import WatchdogThresholds


@dataclass
class Scores:
    """confusion[i][j] = number of traces with true label LABELS[i] classified as LABELS[j]."""

    confusion: np.ndarray
    labels: tuple[str, ...] = LABELS
    verdicts: list[Verdict] = field(default_factory=list, repr=False)

    @property
    def n(self) -> int:
        return int(self.confusion.sum())

    def precision(self) -> dict[str, float]:
        col = self.confusion.sum(axis=0)
        return {lab: (float(self.confusion[i, i] / col[i]) if col[i] else float("nan"))
                for i, lab in enumerate(self.labels)}

    def recall(self) -> dict[str, float]:
        row = self.confusion.sum(axis=1)
        return {lab: (float(self.confusion[i, i] / row[i]) if row[i] else float("nan"))
                for i, lab in enumerate(self.labels)}

    def f1(self) -> dict[str, float]:
        p, r = self.precision(), self.recall()
        out = {}
        for lab in self.labels:
            pp, rr = p[lab], r[lab]
            if np.isnan(rr):
                out[lab] = float("nan")  # label absent from the ground truth: not scored
            elif np.isnan(pp) or pp + rr == 0:
                out[lab] = 0.0
            else:
                out[lab] = 2 * pp * rr / (pp + rr)
        return out

    def macro_f1(self) -> float:
        """Mean F1 over the labels present in the ground truth."""
        vals = [v for v in self.f1().values() if not np.isnan(v)]
        return float(np.mean(vals)) if vals else float("nan")

    def accuracy(self) -> float:
        return float(np.trace(self.confusion) / self.n) if self.n else float("nan")

    def empty_recall(self) -> float:
        return self.recall()[Label.EMPTY.value]

    def success_called_empty(self) -> float:
        """Share of true SUCCESS traces labelled EMPTY."""
        return self.called("SUCCESS", "EMPTY")

    def called(self, true: str, predicted: str) -> float:
        """Share of traces of true label `true` labelled `predicted`."""
        i, j = self.labels.index(true), self.labels.index(predicted)
        row = self.confusion[i].sum()
        return float(self.confusion[i, j] / row) if row else float("nan")

    def called_ci(self, true: str, predicted: str) -> tuple[float, float]:
        """95 % Wilson interval of `called(true, predicted)` ((0, 1) without support)."""
        i, j = self.labels.index(true), self.labels.index(predicted)
        return stats.wilson(int(self.confusion[i, j]), int(self.confusion[i].sum()), z=stats.Z95)

    def recall_ci(self) -> dict[str, tuple[float, float]]:
        return {lab: stats.wilson(int(self.confusion[i, i]), int(self.confusion[i].sum()), z=stats.Z95)
                for i, lab in enumerate(self.labels)}

    def precision_ci(self) -> dict[str, tuple[float, float]]:
        return {lab: stats.wilson(int(self.confusion[i, i]), int(self.confusion[:, i].sum()), z=stats.Z95)
                for i, lab in enumerate(self.labels)}

    def summary(self) -> dict[str, Any]:
        return {"n": self.n, "accuracy": self.accuracy(), "macro_f1": self.macro_f1(),
                "empty_recall": self.empty_recall(), "success_called_empty": self.success_called_empty(),
                "precision": self.precision(), "recall": self.recall(), "f1": self.f1(),
                "confusion": self.confusion.tolist(), "labels": list(self.labels),
                "recall_ci95": self.recall_ci(), "precision_ci95": self.precision_ci(),
                "success_called_slip": self.called("SUCCESS", "SLIP")}

    def table(self) -> str:
        """The confusion matrix and per-label scores as plain text (what `watchdog eval` prints)."""
        w = max(len(x) for x in self.labels) + 1
        lines = ["true \\ predicted".ljust(w + 9) + "".join(lab[:7].rjust(8) for lab in self.labels)]
        for i, lab in enumerate(self.labels):
            lines.append(lab.ljust(w + 9) + "".join(f"{int(x):8d}" for x in self.confusion[i]))
        p, r, f = self.precision(), self.recall(), self.f1()
        pci, rci = self.precision_ci(), self.recall_ci()
        lines.append("")
        lines.append("label".ljust(w) + "precision [95% CI]     recall [95% CI]         f1   support")
        for i, lab in enumerate(self.labels):
            lines.append(lab.ljust(w) + f"{_f(p[lab]):>9} {_ci(pci[lab])}  {_f(r[lab]):>6} {_ci(rci[lab])} "
                         f"{_f(f[lab]):>7} {int(self.confusion[i].sum()):9d}")
        lines.append("")
        lines.append(f"n={self.n}  accuracy={_f(self.accuracy())}  macro-F1={_f(self.macro_f1())}")
        for true, pred in (("EMPTY", "EMPTY"), ("SLIP", "SLIP"), ("SUCCESS", "EMPTY"), ("SUCCESS", "SLIP")):
            name = f"{true} recall" if true == pred else f"{true} called {pred}"
            k = int(self.confusion[self.labels.index(true), self.labels.index(pred)])
            m = int(self.confusion[self.labels.index(true)].sum())
            lines.append(f"{name:<22} {k:>4}/{m:<4} = {_f(self.called(true, pred))} {_ci(self.called_ci(true, pred))}")
        return "\n".join(lines)


def _f(x: float) -> str:
    return "n/a" if x is None or np.isnan(x) else f"{x:.3f}"


def _ci(ci: tuple[float, float]) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def split_by_seed(traces: Sequence[Trace], calibration_seeds: Sequence[int]) -> tuple[list[Trace], list[Trace]]:
    """(traces recorded from a calibration seed, the others: held out)."""
    cal = {int(s) for s in calibration_seeds}
    inside = [tr for tr in traces if tr.meta.get("seed") in cal]
    return inside, [tr for tr in traces if tr.meta.get("seed") not in cal]


def confusion(truth: Sequence[str | Label], predicted: Sequence[str | Label]) -> np.ndarray:
    m = np.zeros((len(LABELS), len(LABELS)), dtype=np.int64)
    for t, p in zip(truth, predicted, strict=True):
        m[LABELS.index(Label(t).value), LABELS.index(Label(p).value)] += 1
    return m


def evaluate(traces: Sequence[Trace], th: WatchdogThresholds) -> Scores:
    verdicts = classify_many([tr.telemetry for tr in traces], th)
    return Scores(confusion([tr.label for tr in traces], [v.label for v in verdicts]), verdicts=verdicts)


def plot_confusion(scores: Scores, path: str | Path, title: str = "Watchdog confusion matrix") -> Path:
    """PNG of the confusion matrix, rows normalised for colour, counts printed in the cells."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = scores.confusion
    rows = m.sum(axis=1, keepdims=True)
    norm = np.divide(m, rows, out=np.zeros_like(m, dtype=float), where=rows > 0)
    fig, ax = plt.subplots(figsize=(6.4, 5.4), dpi=110)
    im = ax.imshow(norm, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(scores.labels)), scores.labels, rotation=35, ha="right")
    ax.set_yticks(range(len(scores.labels)), scores.labels)
    ax.set_xlabel("predicted")
    ax.set_ylabel("ground truth (simulator)")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j]:
                ax.text(j, i, str(int(m[i, j])), ha="center", va="center",
                        color="white" if norm[i, j] > 0.5 else "black", fontsize=9)
    ax.set_title(f"{title}\nmacro-F1 {_f(scores.macro_f1())}, EMPTY recall {_f(scores.empty_recall())}, "
                 f"n={scores.n}", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="share of true label")
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out
