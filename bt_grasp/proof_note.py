"""`bt-grasp run`'s note when the tree it runs is not PROVEN: one stderr line, once per run.

A tree the verifier cannot prove may end on the tick cap or with "no decision"; saying so before
the run lets the user tell a tree problem from a robot problem. The verifier's answer depends only
on the tree's files, its node classes and bt_grasp's code, so it is kept in a
small cache ($XDG_CACHE_HOME/bt_grasp/verified, one empty file per proven tree): the clutter
tree's proof takes seconds, the check of a cached one milliseconds.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

from bt_grasp.errors import UserError

# Partial runs the check may explore: a count, so the answer is the same on every machine. The
# shipped trees need at most about 18,500 (clutter); `bt-grasp verify` itself allows 200,000.
MAX_RUNS = 50_000


def cache_dir() -> Path:
    """Where proven trees are remembered ($XDG_CACHE_HOME or ~/.cache, then bt_grasp/verified)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bt_grasp" / "verified"


def _code_stamp() -> str:
    """bt_grasp's code as installed (every module's size and time) and its version: a change to
    a node type's outcomes or to the verifier changes the answer, so it changes the key."""
    import bt_grasp

    package = Path(bt_grasp.__file__).parent
    files = sorted(package.rglob("*.py"))
    return bt_grasp.__version__ + "".join(f"{f}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files)


def tree_key(spec: Any) -> str:
    """A digest of what the verifier's answer depends on: the tree's files (includes too), the
    modules of its own node classes, and bt_grasp's code."""
    parts = [spec.source or "", *(Path(p).read_text(encoding="utf-8") for p in spec.includes)]
    for ref in spec.user_nodes:
        module = sys.modules.get(ref.partition(":")[0])
        source = getattr(module, "__file__", None)
        parts.append(ref + (Path(source).read_text(encoding="utf-8") if source else ""))
    parts.append(_code_stamp())
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def unproven_note(tree: str) -> str | None:
    """One line when the tree at `tree` is not PROVEN, else None (a tree that does not load is
    left to the run itself to report)."""
    from bt_grasp.spec.loader import load_tree

    try:
        spec = load_tree(tree)
    except UserError:
        return None
    marker = cache_dir() / tree_key(spec)
    if marker.exists():
        return None
    from bt_grasp.verifier.core import verify_tree

    result = verify_tree(spec, max_runs=MAX_RUNS)
    if result.proven:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass  # a read-only home: verified again next time, nothing else lost
        return None
    why = ("a run can end without a decision" if result.counterexample is not None
           else f"the check stopped after {MAX_RUNS} partial runs before proving it")
    return (f"{tree}: warning: not PROVEN ({why}); the run may end on the tick cap or with no decision "
            f"(bt-grasp verify {tree} shows why)")
