"""Evidence leaves: a FINALIZE rests on what the robot itself sees.

`check_held` re-asks the semantic question (is the held object the target?) on a fresh frame,
typically after the lift, when a held target is far above the table. `verify_delivery` confirms a
place by observation, comparing a fresh RGB-D frame with the frame the target was located in:
the target's place has emptied, and inside the receptacle's region (robot knowledge:
`driver.place_region`, a calibrated fixture, never the simulator's ground truth) new matter of
the target's size and colour has appeared. Both answer with three outcomes; "unknown" (no
evidence) never counts as success. Simplified: one fixed camera (both frames from the same
viewpoint); a robot whose camera moves between pick and place would re-register the frames.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.perception import PERCEPTION_SECONDS, observe_and_survey


def in_region(point: Any, region: tuple[np.ndarray, np.ndarray] | None) -> bool:
    """Is a base-frame point inside the (lower, upper) box?"""
    if region is None or point is None:
        return False
    p = np.asarray(point, dtype=float)[:3]
    return bool(np.all(p >= region[0]) and np.all(p <= region[1]))


class CheckHeld(Leaf):
    """ok: the held object is the target (it left its place); mismatch: the target still lies
    where it was located; unknown: no evidence either way."""

    TYPE = "check_held"
    SUCCESS_OUTCOMES = frozenset({"ok"})

    def execute(self) -> LeafResult:
        from bt_grasp.watchdog.semantic import TargetStillThere

        before = self.out_key("before")
        verdict, reason = TargetStillThere(before, f"{before}.query", f"{before}.frame").check(self.ctx)
        return self.result(verdict, {f"{self.node_id}.reason": reason}, PERCEPTION_SECONDS)


class VerifyDelivery(Leaf):
    """delivered: the place where the target was located has emptied and, inside the place
    region, new matter of at least ARRIVED_SHARE of the target's area and of its colour has
    appeared; not_delivered: the target's surface has not moved (it still lies where it was);
    unknown: anything else (no region, no earlier frame, nothing new seen in the receptacle)."""

    TYPE = "verify_delivery"
    SUCCESS_OUTCOMES = frozenset({"delivered"})

    def execute(self) -> LeafResult:
        from bt_grasp.watchdog.semantic import STILL_M, surface_change

        ctx = self.ctx
        place = str(self.port("place"))
        before_key = self.out_key("before")
        before = ctx.blackboard.get(before_key)
        frame = ctx.blackboard.get(f"{before_key}.frame")
        region_of = getattr(ctx.driver, "place_region", None)
        region = region_of(place) if region_of is not None else None
        if region is None:
            return self._answer("unknown", f"the driver knows no region for {place!r}")
        if before is None or frame is None or getattr(before, "mask", None) is None:
            return self._answer("unknown", "no earlier frame of the target to compare with")
        obs, _ = observe_and_survey(self)
        dz = surface_change(frame, obs, before.mask)
        if dz is not None and abs(dz) < STILL_M:
            return self._answer("not_delivered", "the target's surface has not moved: it still lies where it was")
        if dz is None or dz > -STILL_M:
            return self._answer("unknown", "cannot see the target's place empty")
        arrived, matching = arrivals(frame, obs, before.mask,
                                     (np.asarray(region[0], float), np.asarray(region[1], float)))
        need = ARRIVED_SHARE * metric_area(frame, before.mask)
        if arrived < need:
            return self._answer("unknown", f"only {arrived * 1e4:.1f} cm² new in the {place} "
                                           f"(need {need * 1e4:.1f} cm²)")
        if matching < need:
            return self._answer("unknown", f"{arrived * 1e4:.1f} cm² arrived in the {place}, but only "
                                           f"{matching * 1e4:.1f} cm² of it has the target's colour "
                                           f"(need {need * 1e4:.1f} cm²)")
        return self._answer("delivered", f"its place is empty and {matching * 1e4:.1f} cm² of its colour "
                                         f"arrived in the {place}")

    def _answer(self, outcome: str, reason: str) -> LeafResult:
        return self.result(outcome, {f"{self.node_id}.reason": reason}, PERCEPTION_SECONDS)


ARRIVED_SHARE = 0.3  # new area in the receptacle, as a share of the target's area seen at the pick
ARRIVED_RISE_M = 0.008  # a pixel whose surface rose this much holds something new
COLOUR_GAP = 0.15  # L1 chromaticity distance from the target's colour of a pixel that counts as it


def metric_area(obs: Any, mask: np.ndarray) -> float:
    """Area facing the camera covered by the mask's pixels (each (z/f)² m²)."""
    d = np.asarray(obs.depth, float)[np.asarray(mask, bool)]
    d = d[np.isfinite(d) & (d > 0)]
    return float(((d / float(obs.K[0, 0])) ** 2).sum())


def _chroma(rgb: np.ndarray) -> np.ndarray:
    """Per-pixel chromaticity (Nx3): colour with brightness divided out, so shading matters less."""
    x = np.asarray(rgb, float).reshape(-1, 3)
    return x / (x.sum(1, keepdims=True) + 1.0)


def arrivals(before_obs: Any, after_obs: Any, target_mask: np.ndarray,
             region: tuple[np.ndarray, np.ndarray]) -> tuple[float, float]:
    """(area in m² of pixels inside the region whose surface rose ≥ ARRIVED_RISE_M, the part of
    that area whose chromaticity lies within COLOUR_GAP (L1) of the target's at the pick).

    Counted pixel by pixel, not as one mean colour: objects dropped earlier that shift, or a
    shadow, must not hide the target's own pixels among what arrived."""
    from bt_grasp.perception.geometry import pointmap

    P0 = pointmap(before_obs.depth, before_obs.K, before_obs.T_cam_base)
    P1 = pointmap(after_obs.depth, after_obs.K, after_obs.T_cam_base)
    inside = np.all((P1 >= region[0]) & (P1 <= region[1]), axis=-1)
    rose = inside & np.isfinite(P0[..., 2]) & (P1[..., 2] - P0[..., 2] >= ARRIVED_RISE_M)
    if not rose.any():
        return 0.0, 0.0
    target = _chroma(before_obs.rgb[np.asarray(target_mask, bool)]).mean(0)
    close = np.abs(_chroma(after_obs.rgb[rose]) - target).sum(1) <= COLOUR_GAP
    matching = np.zeros_like(rose)
    matching[rose] = close
    return metric_area(after_obs, rose), metric_area(after_obs, matching)
