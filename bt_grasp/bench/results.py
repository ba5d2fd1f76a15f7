"""The results file (JSONL, one record per episode): read back, and which keys are finished."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from bt_grasp.outputs import warn


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


def drop_torn_line(path: str | Path) -> int:
    """Cut a last line that is not whole JSON (a run killed while writing it) off the file, with
    one warning line; the bytes dropped (0: nothing was torn). Its episode is not finished, so
    the run that follows does it again."""
    p = Path(path)
    if not p.is_file():
        return 0
    data = p.read_bytes()
    body = data.rstrip(b"\n")
    start = body.rfind(b"\n") + 1
    last = body[start:]
    if not last.strip():
        return 0
    try:
        json.loads(last)
    except ValueError:
        pass
    else:
        if not data.endswith(b"\n"):  # whole but unended: end it so the next record starts clean
            with p.open("ab") as fh:
                fh.write(b"\n")
        return 0
    with p.open("r+b") as fh:
        fh.truncate(start)
        os.fsync(fh.fileno())
    warn(f"{p}: dropped a torn last line ({len(data) - start} bytes, a run killed while writing "
         "it); its episode runs again")
    return len(data) - start


def finished_keys(path: str | Path) -> set[str]:
    """Keys already done; errored episodes are not 'finished' so a rerun retries them."""
    return {r["key"] for r in load_records(path) if "key" in r and "error" not in r}
