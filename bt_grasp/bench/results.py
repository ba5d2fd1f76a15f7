"""The results file (JSONL, one record per episode): read back, and which keys are finished."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load_records(path: str | Path) -> list[dict[str, Any]]:
    """Records of a results file; a torn last line (killed run) is ignored."""
    p = Path(path)
    if not p.exists():
        return []
    out = []
    for line in p.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def finished_keys(path: str | Path) -> set[str]:
    """Keys already done; errored episodes are not 'finished' so a rerun retries them."""
    return {r["key"] for r in load_records(path) if "key" in r and "error" not in r}
