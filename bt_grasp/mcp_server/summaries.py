"""What a tool result says about scenes, located objects and events: JSON-safe, short, rounded.

A planner reads these; names are the ones it can pass back verbatim, arrays are left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.json_encoding import jsonable


def scene_summary(scene: Any) -> dict[str, Any] | None:
    """A scene graph as names the planner can reuse verbatim in locate_object/grasp."""
    if scene is None:
        return None
    names = {o.id: o.name for o in scene.objects}
    objects = []
    for o in scene.objects:
        item: dict[str, Any] = {"id": o.id, "name": o.name, "description": o.description,
                                "point2d": [round(float(x), 3) for x in o.point2d]}
        attrs = {k: v for k, v in (o.attributes or {}).items() if not isinstance(v, np.ndarray)}
        if attrs:
            item["attributes"] = _rounded(jsonable(attrs))
        objects.append(item)
    relations = [[names.get(s, str(s)), rel, names.get(t, str(t))] for s, rel, t in scene.relations]
    return {"n_objects": len(objects), "objects": objects, "relations": relations}


def _rounded(value: Any, digits: int = 3) -> Any:
    """Floats to `digits` places: millimetres are plenty for a planner, and tokens cost."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, digits) for v in value]
    return value


def mask_summary(located: Any, scene: Any = None) -> dict[str, Any] | None:
    """A located object without the arrays: bbox, pixel and point counts, where it is."""
    if located is None:
        return None
    pts = np.asarray(located.points_base, dtype=float).reshape(-1, 3)
    out: dict[str, Any] = {"name": located.name, "object_id": int(located.object_id),
                           "bbox": [int(v) for v in located.bbox],
                           "mask_pixels": int(np.count_nonzero(located.mask)) if located.mask is not None else 0,
                           "n_points": int(len(pts)), "score": round(float(located.score), 4)}
    if len(pts):
        out["centroid_base"] = [round(float(v), 4) for v in np.median(pts, axis=0)]
        out["extent_m"] = [round(float(v), 4) for v in (pts.max(axis=0) - pts.min(axis=0))]
    names = {o.id: o.name for o in scene.objects} if scene is not None else {}
    out["occluded_by"] = [names.get(i, str(i)) for i in located.occluded_by]
    return out


def event_summary(event: Any) -> dict[str, Any]:
    meta = dict(event.metadata or {})
    watchdog = meta.pop("watchdog", None)
    out = {"trial_id": event.trial_id, "primitive": event.primitive,
           "exec_status": getattr(event.exec_status, "value", event.exec_status),
           "label": event.watchdog_label, "confidence": event.confidence,
           "clock": event.clock, "metadata": jsonable(meta)}
    if isinstance(watchdog, dict):
        out["watchdog"] = jsonable({k: v for k, v in watchdog.items() if k in ("rule", "semantic_reason")}
                                   or watchdog)
    return out
