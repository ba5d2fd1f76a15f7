"""Labelled Watchdog traces on disk: one `.npz` per attempt plus an `index.jsonl` of metadata.

Format (version 1), a directory holding:

- `<id>.npz`: numpy `savez_compressed` archive with one 1-D array per Telemetry column:
  `t` (s, float64), `aperture_m`, `aperture_norm`, `commanded_aperture`, `effort`, `velocity`,
  `ee_height` (float32 on disk, float64 once loaded), `phase` (int8 Phase codes), `stalled`,
  `overload` (bool), and `load` (wrist load in N, float32; NaN where not measured; files without
  it load as unmeasured). This is the
  telemetry *as the classifier would see it* (noise and latency already applied).
- `index.jsonl`: one JSON object per trace, one per line, fields:
  `id` (str, file stem), `file` (str), `label` (ground-truth Label value, decided by the
  simulator -- see record.py), `fault` ({kind, params} of the injected Fault, or null),
  `seed` (int), `robot` (profile name), `noise` ({aperture_noise_m, effort_noise, height_noise_m,
  velocity_noise, latency_s}), `n_samples` (int), `format` (1), and
  `truth` (dict: the simulator facts that decided the label, e.g. held_after_s, contact_on_close).
  Unknown extra fields are preserved on load (`meta`).

Why this shape: numpy-only (no Parquet dependency), one small file per trace so a partial
recording is still usable, and an index that can be filtered without opening the arrays.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp.errors import UserError
from bt_grasp.outcomes import Label
from bt_grasp.watchdog.telemetry import Telemetry

FORMAT_VERSION = 1
INDEX = "index.jsonl"


@dataclass
class Trace:
    """One labelled attempt: telemetry plus its index entry."""

    id: str
    label: Label
    telemetry: Telemetry
    meta: dict[str, Any] = field(default_factory=dict)


def save_trace(out_dir: str | Path, trace: Trace) -> dict[str, Any]:
    """Write `<id>.npz` and append its line to index.jsonl; returns the index entry."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fname = f"{trace.id}.npz"
    cols = trace.telemetry.to_dict()
    # sensor columns as float32 (sensor precision is far coarser; halves the files), time as float64
    cols = {k: (v.astype(np.float32) if v.dtype == np.float64 and k != "t" else v) for k, v in cols.items()}
    # numpy's stub lets **kwds reach allow_pickle (a bool); these are all column arrays
    np.savez_compressed(out / fname, **cols)  # type: ignore[arg-type]
    entry = {**trace.meta, "id": trace.id, "file": fname, "label": Label(trace.label).value,
             "n_samples": len(trace.telemetry), "format": FORMAT_VERSION}
    with open(out / INDEX, "a") as fh:
        fh.write(json.dumps(entry, sort_keys=True, default=_jsonable) + "\n")
    return entry


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def read_index(trace_dir: str | Path) -> list[dict[str, Any]]:
    """Index entries; a malformed line is a UserError naming file:line."""
    path = Path(trace_dir) / INDEX
    if not path.exists():
        raise UserError(f"not a trace directory (no {INDEX})", file=str(trace_dir))
    entries = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte at offset {exc.start})", file=str(path), line=1) from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            Label(entry["label"])
            entry["file"]  # noqa: B018 - presence check
        except (json.JSONDecodeError, KeyError, ValueError, TypeError) as exc:
            raise UserError(f"bad index entry: {exc}", file=str(path), line=lineno) from None
        entries.append(entry)
    return entries


def load_trace(trace_dir: str | Path, entry: dict[str, Any]) -> Trace:
    path = Path(trace_dir) / str(entry["file"])
    if Path(trace_dir).resolve() not in path.resolve().parents:
        raise UserError(f"index entry {entry.get('id')!r}: file must be inside the trace directory",
                        file=str(Path(trace_dir) / INDEX))
    try:
        with np.load(path) as z:
            tel = Telemetry(**{k: z[k] for k in z.files})
    except (OSError, ValueError, TypeError, KeyError, zipfile.BadZipFile) as exc:
        raise UserError(f"unreadable trace: {exc}", file=str(path)) from None
    meta = {k: v for k, v in entry.items() if k not in ("label",)}
    return Trace(id=str(entry["id"]), label=Label(entry["label"]), telemetry=tel, meta=meta)


def iter_traces(trace_dir: str | Path) -> Iterator[Trace]:
    for entry in read_index(trace_dir):
        yield load_trace(trace_dir, entry)


def load_dataset(trace_dir: str | Path) -> list[Trace]:
    """All traces of a directory (small enough to hold in memory: ~10-50 kB per trace)."""
    return list(iter_traces(trace_dir))


def split(traces: list[Trace], test_frac: float = 0.3, seed: int = 0) -> tuple[list[Trace], list[Trace]]:
    """Stratified train / held-out split (per label), deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    train: list[Trace] = []
    test: list[Trace] = []
    by: dict[Label, list[Trace]] = {}
    for tr in traces:
        by.setdefault(tr.label, []).append(tr)
    for label in sorted(by, key=lambda x: x.value):
        group = by[label]
        order = rng.permutation(len(group))
        k = int(round(len(group) * test_frac))
        test += [group[i] for i in order[:k]]
        train += [group[i] for i in order[k:]]
    return train, test
