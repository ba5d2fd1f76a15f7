"""The tree a Foxglove recording shows on /behavior_tree/xml: BehaviorTree.CPP v4 XML rebuilt
from the trace header.

Why from the header: a recorder is a RunObserver and a converter reads only the trace; both have
the header, which holds the tree's source text and file, so neither needs the TreeSpec. The
node names in the XML are the node ids, the names /behavior_tree_log reports."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from bt_grasp.errors import BackendUnavailable, UserError


def tree_xml(header: dict[str, Any]) -> str | None:
    """The XML of the tree the header describes, or None (with one line on stderr) when its
    source is missing or no longer loads (an include moved, a user node not importable)."""
    source, file = header.get("source"), header.get("file")
    if not isinstance(source, str):
        return None
    from bt_grasp.interop.btcpp_export import export_spec
    from bt_grasp.interop.common import interop_registry
    from bt_grasp.spec.loader import load_tree_text

    try:
        name = str(file) if isinstance(file, str) and file else "<trace header>"
        base = Path(name).parent if isinstance(file, str) and file else None
        spec = load_tree_text(source, file=name, registry=interop_registry(), base_dir=base)
        return export_spec(spec)
    except (UserError, BackendUnavailable, OSError) as exc:
        print(f"note: no /behavior_tree/xml in the recording: {exc}", file=sys.stderr)
        return None
