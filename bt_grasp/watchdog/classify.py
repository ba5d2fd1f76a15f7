"""Gripper telemetry -> Watchdog label, confidence and evidence. Pure: no driver, no I/O, no clock.

Why causal: the label of an attempt is the *first* stable terminal signature in time order. A
signature is stable when its per-sample condition has held continuously for a window (hysteresis:
`settle_window_s` for acquisition, release and hold, `stall_window_s` for stalls) and the window
contains at least `min_window_samples` readings. Because the decision depends only on the samples
up to the deciding one, the streaming classifier can emit the label the moment it is stable and
still agree exactly with the batch classifier on the whole stream (property-tested). Later
samples never revise an emitted label.

Per-sample conditions (a = aperture_norm, e = effort, v = velocity, h = ee_height, p = phase;
"active" = p >= CLOSE):

- closed      a <= closed_eps
- empty       active & closed & e <= empty_effort_max
- contact     active & ~closed & e >= contact_effort_min & |v| <= stall_velocity_eps
  The first stable contact is the *acquisition*; a_ref / e_ref are the window means of aperture
  and effort over it (the gap the object holds the fingers at, and the grip effort).
- loss        after acquisition: a < a_ref (1 - slip_collapse_frac), or
              e < e_ref (1 - effort_drop_frac) and e < hold_effort_min
- lifted      rise = h - h_ref >= micro_lift_min_m, with h_ref the mean height over the CLOSE /
              SETTLE samples before the first MICRO_LIFT sample (the arm is still then)
- held        after acquisition: lifted & ~closed & e >= contact_effort_min & ~loss, and (when
              hold_phase_required) p == HOLD, i.e. the micro-lift motion has finished
- finger stall  p in {CLOSE, SETTLE} & ~closed & |v| <= stall_velocity_eps & e < contact_effort_min
              & |a - commanded| > command_tracking_eps (commanded to move, not moving, not touching)
- stall flag  active & stalled (the motor controller says so; only if trust_stall_flag)
- lift stall  p >= MICRO_LIFT, rise < micro_lift_min_m, and h rose less than lift_progress_min_m
              over the last stall_window_s (all inside the lift)

Events (first index wins; ties resolved in this order, most cautious first):
  bad telemetry -> TIMEOUT ("bad telemetry"); stable empty -> EMPTY, or SLIP if acquired before;
  stable loss -> SLIP; stable finger stall / stall flag / lift stall -> STALL; stable held ->
  SUCCESS if the window's mean effort >= hold_effort_min and mean |a - a_ref| <= aperture_drift_max,
  else WEAK; t - t0 > attempt_time_budget_s -> TIMEOUT. No event before the stream ends ->
  TIMEOUT ("no stable terminal signature"). Contact without lift evidence therefore never becomes
  SUCCESS: `held` requires `lifted`.

Confidence is confidence_floor + (1 - floor) * m, where m in [0, 1] is the deciding rule's
smallest relative margin over its window (how far the window means sit inside the thresholds).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, runtime_checkable

import numpy as np

from bt_grasp.outcomes import Label
from bt_grasp.watchdog.telemetry import Phase, Sample, Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds

FLOAT_COLUMNS: tuple[str, ...] = ("t", "aperture_m", "aperture_norm", "commanded_aperture", "effort",
                                  "velocity", "ee_height")
BOOL_COLUMNS: tuple[str, ...] = ("stalled", "overload")
REQUIRED_COLUMNS: tuple[str, ...] = FLOAT_COLUMNS + ("phase",)

_CLOSE, _SETTLE, _LIFT, _HOLD = int(Phase.CLOSE), int(Phase.SETTLE), int(Phase.MICRO_LIFT), int(Phase.HOLD)
_MAX_PHASE = max(int(p) for p in Phase)

# event kinds in tie-break priority order (lower = wins on the same sample)
_PRIORITY = {"bad": 0, "empty": 1, "loss": 2, "finger_stall": 3, "stall_flag": 4, "lift_stall": 5,
             "held": 6, "budget": 7}


@dataclass(frozen=True)
class Verdict:
    """The Watchdog's conclusion about one attempt.

    index / t: the sample at which the label became stable (None when decided at end of stream
    or on empty input). evidence: JSON-able dict with at least `rule`, `reason`, `margins`,
    `window` ({i0, i1, t0, t1, duration_s} of the deciding window, or None).
    """

    label: Label
    confidence: float
    evidence: dict[str, Any] = field(default_factory=dict)
    index: int | None = None
    t: float | None = None

    @property
    def bad_telemetry(self) -> bool:
        return self.evidence.get("rule") == "bad_telemetry"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label.value, "confidence": self.confidence, "index": self.index,
                "t": self.t, "evidence": self.evidence}


@runtime_checkable
class SemanticVerifier(Protocol):
    """Checks a physical SUCCESS against the task (e.g. re-perceive: is the target gone from its
    place, is the held object the target?). The evaluate_grasp leaf calls it only after SUCCESS;
    ok=False makes the tree see semantic_ok=false and route to WAIT_CLARIFY."""

    def verify(self, context: Any) -> tuple[bool, str]: ...


class AcceptAll:
    """A SemanticVerifier that never vetoes (the default when no semantic check is configured)."""

    def verify(self, context: Any) -> tuple[bool, str]:
        return True, "no semantic verifier configured"


def semantic_check(verdict: Verdict, verifier: SemanticVerifier | None, context: Any) -> tuple[bool, str]:
    """(semantic_ok, reason): runs the verifier only after SUCCESS; a verifier that raises vetoes
    (a crash in the checker must not turn into a confident success)."""
    if verdict.label is not Label.SUCCESS:
        return True, f"not checked: label {verdict.label.value}"
    if verifier is None:
        return True, "no semantic verifier configured"
    try:
        ok, reason = verifier.verify(context)
        return bool(ok), str(reason)
    except Exception as exc:  # noqa: BLE001 - the leaf must never raise
        return False, f"semantic verifier failed: {type(exc).__name__}: {exc}"


# ----------------------------------------------------------------------------------------------
# shared arithmetic (the batch and streaming paths call these so they compute identical floats)


def _rel(x: float, scale: float) -> float:
    """Relative margin x / scale clipped to [0, 1]; a zero scale counts as a full margin if x >= 0."""
    if not math.isfinite(x):
        return 0.0
    if scale <= 0:
        return 1.0 if x >= 0 else 0.0
    return min(1.0, max(0.0, x / scale))


def _conf(th: WatchdogThresholds, margin: float) -> float:
    return float(th.confidence_floor + (1.0 - th.confidence_floor) * min(1.0, max(0.0, margin)))


def _wmean(cum: Any, i0: int, i1: int) -> float:
    """Mean over samples i0..i1 from sequential cumulative sums (cum[-1] taken as 0)."""
    before = float(cum[i0 - 1]) if i0 > 0 else 0.0
    return (float(cum[i1]) - before) / (i1 - i0 + 1)


def _window(t: Any, i0: int, i1: int) -> dict[str, Any]:
    return {"i0": int(i0), "i1": int(i1), "t0": float(t[i0]), "t1": float(t[i1]),
            "duration_s": float(t[i1]) - float(t[i0])}


@dataclass
class _Ctx:
    """What the verdict builders need, filled identically by the batch and streaming paths."""

    t: Any
    cum: dict[str, Any]
    i_acq: int | None = None
    acq_window: tuple[int, int] | None = None
    a_ref: float = float("nan")
    e_ref: float = float("nan")
    h_ref: float | None = None
    h_last: float = float("nan")
    phase_last: int = 0


def _acq_evidence(ctx: _Ctx) -> dict[str, Any]:
    if ctx.i_acq is None:
        return {"acquired_at": None}
    return {"acquired_at": int(ctx.i_acq), "acquired_gap_norm": ctx.a_ref, "grip_effort": ctx.e_ref}


def _build(kind: str, i: int, rs: int | None, ctx: _Ctx, th: WatchdogThresholds,
           extra: dict[str, Any] | None = None) -> Verdict:
    """Label, confidence and evidence for event `kind` decided at sample i over window rs..i."""
    extra = extra or {}
    t, c = ctx.t, ctx.cum
    ev: dict[str, Any] = {"window": _window(t, rs, i) if rs is not None else None}
    if kind == "empty":
        ma, me = _wmean(c["a"], rs, i), _wmean(c["e"], rs, i)
        margins = {"closed": _rel(th.closed_eps - ma, th.closed_eps),
                   "low_effort": _rel(th.empty_effort_max - me, th.empty_effort_max)}
        slip = ctx.i_acq is not None and ctx.i_acq < i
        label = Label.SLIP if slip else Label.EMPTY
        rule = "closed_after_acquisition" if slip else "closed_low_effort"
        reason = (f"fingers collapsed to the closed stop (aperture {ma:.3f} <= {th.closed_eps}) with effort "
                  f"{me:.3f} after holding a gap of {ctx.a_ref:.3f}" if slip else
                  f"fingers at the closed stop (aperture {ma:.3f} <= {th.closed_eps}) with effort {me:.3f} "
                  f"<= {th.empty_effort_max} for {t[i] - t[rs]:.3f} s")
        ev.update(rule=rule, reason=reason, margins=margins, mean_aperture=ma, mean_effort=me)
        m = min(margins.values())
    elif kind == "loss":
        ma, me = _wmean(c["a"], rs, i), _wmean(c["e"], rs, i)
        collapse_at = ctx.a_ref * (1.0 - th.slip_collapse_frac)
        drop_at = min(ctx.e_ref * (1.0 - th.effort_drop_frac), th.hold_effort_min)
        margins = {"collapse": _rel(collapse_at - ma, collapse_at),
                   "effort_drop": _rel(drop_at - me, drop_at)}
        label, rule = Label.SLIP, "loss_after_acquisition"
        reason = (f"after acquiring a gap of {ctx.a_ref:.3f} at effort {ctx.e_ref:.3f}, aperture fell to "
                  f"{ma:.3f} / effort to {me:.3f}")
        ev.update(rule=rule, reason=reason, margins=margins, mean_aperture=ma, mean_effort=me)
        m = max(margins.values())
    elif kind == "finger_stall":
        me, mv, md = _wmean(c["e"], rs, i), _wmean(c["absv"], rs, i), _wmean(c["track"], rs, i)
        margins = {"not_moving": _rel(th.stall_velocity_eps - mv, th.stall_velocity_eps),
                   "off_command": _rel(md - th.command_tracking_eps, th.command_tracking_eps),
                   "no_contact": _rel(th.contact_effort_min - me, th.contact_effort_min)}
        label, rule = Label.STALL, "finger_stall"
        reason = (f"fingers commanded to move but still for {t[i] - t[rs]:.3f} s "
                  f"(|v| {mv:.4f} m/s, {md:.3f} from command) without contact effort ({me:.3f})")
        ev.update(rule=rule, reason=reason, margins=margins)
        m = min(margins.values())
    elif kind == "stall_flag":
        label, rule = Label.STALL, "motor_stall_flag"
        ev.update(rule=rule, reason=f"motor reported stalled for {t[i] - t[rs]:.3f} s", margins={"flag": 1.0})
        m = 1.0
    elif kind == "lift_stall":
        dh, rise = extra["dh"], extra["rise"]
        margins = {"no_progress": _rel(th.lift_progress_min_m - dh, th.lift_progress_min_m),
                   "below_lift": _rel(th.micro_lift_min_m - rise, th.micro_lift_min_m)}
        label, rule = Label.STALL, "lift_stall"
        reason = (f"lift rose {rise * 1000:.1f} mm (< {th.micro_lift_min_m * 1000:.1f}) and "
                  f"{dh * 1000:.1f} mm in the last {th.stall_window_s} s")
        ev.update(rule=rule, reason=reason, margins=margins, lift_rise_m=rise)
        m = min(margins.values())
    elif kind == "held":
        me, mdrift, mh = _wmean(c["e"], rs, i), _wmean(c["drift"], rs, i), _wmean(c["h"], rs, i)
        rise = min(mh - (ctx.h_ref if ctx.h_ref is not None else mh), th.micro_lift_max_m)
        firm = me >= th.hold_effort_min and mdrift <= th.aperture_drift_max
        lift_m = _rel(rise - th.micro_lift_min_m, th.micro_lift_min_m)
        if firm:
            margins = {"effort": _rel(me - th.hold_effort_min, max(1.0 - th.hold_effort_min, 1e-9)),
                       "drift": _rel(th.aperture_drift_max - mdrift, th.aperture_drift_max),
                       "lift": lift_m}
            label, rule = Label.SUCCESS, "held_through_lift"
            reason = (f"held through the micro-lift: rise {rise * 1000:.1f} mm, effort {me:.3f} >= "
                      f"{th.hold_effort_min}, aperture drift {mdrift:.3f} <= {th.aperture_drift_max}")
            m = min(margins.values())
        else:
            margins = {"low_effort": _rel(th.hold_effort_min - me, th.hold_effort_min - th.contact_effort_min),
                       "drift": _rel(mdrift - th.aperture_drift_max, th.aperture_drift_max),
                       "lift": lift_m}
            label, rule = Label.WEAK, "weak_hold"
            reason = (f"held through the micro-lift but weakly: effort {me:.3f} (hold >= {th.hold_effort_min}),"
                      f" aperture drift {mdrift:.3f} (max {th.aperture_drift_max})")
            m = min(max(margins["low_effort"], margins["drift"]), lift_m)
        ev.update(rule=rule, reason=reason, margins=margins, mean_effort=me, aperture_drift=mdrift,
                  lift_rise_m=rise)
    elif kind == "budget":
        label, rule = Label.TIMEOUT, "time_budget"
        elapsed = float(t[i]) - float(t[0])
        ev.update(rule=rule, reason=f"{elapsed:.3f} s elapsed > budget {th.attempt_time_budget_s} s without "
                                    "a stable terminal signature", margins={"over_budget": 1.0},
                  window=_window(t, 0, i))
        m = 1.0
    else:  # pragma: no cover - programming error
        raise AssertionError(kind)
    ev.update(_acq_evidence(ctx))
    return Verdict(label=label, confidence=_conf(th, m), evidence=ev, index=int(i), t=float(t[i]))


def _bad(reason: str, index: int | None, t: float | None) -> Verdict:
    return Verdict(label=Label.TIMEOUT, confidence=1.0,
                   evidence={"rule": "bad_telemetry", "reason": f"bad telemetry: {reason}", "margins": {},
                             "window": None},
                   index=index, t=t)


def _end(ctx: _Ctx, n: int, th: WatchdogThresholds) -> Verdict:
    """No terminal signature before the stream ended: the motion was cut short or never settled."""
    if ctx.i_acq is None:
        why = "no acquisition and no closed stop"
    elif ctx.h_ref is None:
        why = "contact without lift evidence (no micro-lift phase)"
    else:
        why = "acquired but no stable hold through the micro-lift"
    ev = {"rule": "no_terminal_signature", "reason": f"telemetry ended without a stable terminal signature: "
                                                     f"{why}", "margins": {},
          "window": _window(ctx.t, 0, n - 1), **_acq_evidence(ctx)}
    return Verdict(label=Label.TIMEOUT, confidence=_conf(th, 0.0), evidence=ev, index=None,
                   t=float(ctx.t[n - 1]))


# ----------------------------------------------------------------------------------------------
# batch


def _columns(tel: Any) -> tuple[dict[str, np.ndarray] | None, str]:
    """Column arrays from a Telemetry (or mapping / object with the columns), or (None, reason)."""
    if tel is None:
        return None, "no telemetry"
    if isinstance(tel, Telemetry):  # fast path: the dataclass already holds validated 1-D arrays
        cols = {name: getattr(tel, name) for name in REQUIRED_COLUMNS + BOOL_COLUMNS}
        if all(isinstance(v, np.ndarray) and v.ndim == 1 for v in cols.values()) and \
                len({len(v) for v in cols.values()}) == 1:
            return cols, ""
    cols = {}
    for name in REQUIRED_COLUMNS + BOOL_COLUMNS:
        val = tel.get(name) if isinstance(tel, Mapping) else getattr(tel, name, None)
        if val is None:
            if name in BOOL_COLUMNS:
                continue
            return None, f"missing column {name}"
        try:
            arr = np.asarray(val, dtype=bool if name in BOOL_COLUMNS else np.float64)
        except (TypeError, ValueError):
            return None, f"column {name} is not numeric"
        if arr.ndim != 1:
            return None, f"column {name} is not one-dimensional"
        cols[name] = arr
    lengths = {len(v) for v in cols.values()}
    if len(lengths) != 1:
        return None, "columns differ in length"
    n = lengths.pop()
    for name in BOOL_COLUMNS:
        cols.setdefault(name, np.zeros(n, bool))
    return cols, ""


def _first(mask: np.ndarray) -> int | None:
    k = int(np.argmax(mask)) if len(mask) else 0
    return k if len(mask) and mask[k] else None


def _first_stable(c: np.ndarray, t: np.ndarray, window: float, min_n: int,
                  idx: np.ndarray | None = None) -> tuple[int, int] | None:
    """(first index where `c` has held for >= window seconds and >= min_n samples, its run start)."""
    if not c.any():
        return None
    n = len(c)
    idx = np.arange(n) if idx is None else idx
    rs = np.maximum.accumulate(np.where(c, -1, idx)) + 1
    rsc = np.minimum(rs, n - 1)
    ok = c & (t - t[rsc] >= window) & (idx - rs + 1 >= min_n)
    k = _first(ok)
    return None if k is None else (k, int(rs[k]))


def _first_bad(cols: dict[str, np.ndarray]) -> tuple[int | None, str]:
    """First sample that is not finite, has an unknown phase, or goes back in time; and why."""
    t = cols["t"]
    names = FLOAT_COLUMNS + ("phase",)
    stack = np.stack([cols[k] for k in names])
    finite = np.isfinite(stack)
    ph = cols["phase"]
    bad = ~finite.all(axis=0)
    with np.errstate(invalid="ignore"):
        bad |= (ph != np.round(ph)) | (ph < 0) | (ph > _MAX_PHASE)
        if len(t) > 1:
            bad[1:] |= t[1:] < t[:-1]
    k = _first(bad)
    if k is None:
        return None, ""
    for j, name in enumerate(names):
        if not finite[j, k]:
            return k, f"non-finite {name} at sample {k}"
    if ph[k] != round(float(ph[k])) or ph[k] < 0 or ph[k] > _MAX_PHASE:
        return k, f"unknown phase code at sample {k}"
    return k, f"time goes backwards at sample {k}"


def classify_reference(tel: Telemetry | Mapping[str, Any] | None, th: WatchdogThresholds | None = None) -> Verdict:
    """One attempt, vectorised over its samples: the straightforward reference implementation of
    the rules (classify / classify_many vectorise over attempts too and must agree with it)."""
    th = th or WatchdogThresholds()
    cols, why = _columns(tel)
    if cols is None:
        return _bad(why, None, None)
    n = len(cols["t"])
    if n == 0:
        return _bad("empty telemetry", None, None)
    kbad, badwhy = _first_bad(cols)
    m = n if kbad is None else kbad
    if m == 0:
        return _bad(badwhy, 0, float(cols["t"][0]) if math.isfinite(cols["t"][0]) else None)
    cut = {k: v[:m] for k, v in cols.items()}
    with np.errstate(all="ignore"):  # absurd-but-finite values may overflow sums: labels stay defined
        verdict = _events(cut, th)
    if verdict is not None:
        return verdict
    if kbad is not None:
        tk = float(cols["t"][kbad])
        return _bad(badwhy, kbad, tk if math.isfinite(tk) else None)
    with np.errstate(all="ignore"):
        return _end_from_cols(cut, th)


def _prepare(cols: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    t, a, e = cols["t"], cols["aperture_norm"], cols["effort"]
    v, h, p = cols["velocity"], cols["ee_height"], cols["phase"].astype(np.int64)
    return t, a, e, v, h, p


def _acquisition(cols: dict[str, np.ndarray], th: WatchdogThresholds) -> tuple[_Ctx, dict[str, Any]]:
    """Everything that does not depend on which event wins: masks, acquisition, lift reference."""
    t, a, e, v, h, p = _prepare(cols)
    n = len(t)
    absv = np.abs(v)
    track = np.abs(a - cols["commanded_aperture"])
    active = p >= _CLOSE
    closed = a <= th.closed_eps
    still = absv <= th.stall_velocity_eps
    contact = active & ~closed & (e >= th.contact_effort_min) & still
    cum = {"a": np.cumsum(a), "e": np.cumsum(e), "absv": np.cumsum(absv), "track": np.cumsum(track),
           "h": np.cumsum(h)}
    ctx = _Ctx(t=t, cum=cum)
    acq = _first_stable(contact, t, th.settle_window_s, th.min_window_samples)
    if acq is not None:
        ctx.i_acq, rs = acq[0], acq[1]
        ctx.acq_window = (rs, acq[0])
        ctx.a_ref = _wmean(cum["a"], rs, acq[0])
        ctx.e_ref = _wmean(cum["e"], rs, acq[0])
    i_lift0 = _first(p >= _LIFT)
    if i_lift0 is not None:
        pre = ((p == _CLOSE) | (p == _SETTLE)) & (np.arange(n) < i_lift0)
        cnt = int(pre.sum())
        ctx.h_ref = float(np.cumsum(np.where(pre, h, 0.0))[i_lift0 - 1]) / cnt if cnt else float(h[i_lift0])
    masks = {"closed": closed, "still": still, "active": active, "track": track, "i_lift0": i_lift0,
             "t": t, "a": a, "e": e, "h": h, "p": p}
    return ctx, masks


def _events(cols: dict[str, np.ndarray], th: WatchdogThresholds) -> Verdict | None:
    ctx, mk = _acquisition(cols, th)
    t, a, e, h, p = mk["t"], mk["a"], mk["e"], mk["h"], mk["p"]
    n = len(t)
    idx = np.arange(n)
    closed, still, active, track = mk["closed"], mk["still"], mk["active"], mk["track"]
    W, Ws, mn = th.settle_window_s, th.stall_window_s, th.min_window_samples
    cands: list[tuple[int, int, str, int | None, dict[str, Any]]] = []

    def add(kind: str, hit: tuple[int, int] | None) -> None:
        if hit is not None:
            cands.append((hit[0], _PRIORITY[kind], kind, hit[1], {}))

    add("empty", _first_stable(active & closed & (e <= th.empty_effort_max), t, W, mn, idx))
    finger = (((p == _CLOSE) | (p == _SETTLE)) & ~closed & still & (e < th.contact_effort_min)
              & (track > th.command_tracking_eps))
    add("finger_stall", _first_stable(finger, t, Ws, mn, idx))
    if th.trust_stall_flag:
        add("stall_flag", _first_stable(active & cols["stalled"], t, Ws, mn, idx))
    over = (t - t[0]) > th.attempt_time_budget_s
    kb = _first(over)
    if kb is not None:
        cands.append((kb, _PRIORITY["budget"], "budget", None, {}))

    lifted = np.zeros(n, bool)
    i_lift0 = mk["i_lift0"]
    if i_lift0 is not None:
        rise = h - ctx.h_ref
        lifted = (idx >= i_lift0) & (rise >= th.micro_lift_min_m)
        j = np.searchsorted(t, t - Ws, side="right") - 1
        jc = np.maximum(j, 0)
        dh = h - h[jc]
        ls = (idx >= i_lift0) & (p >= _LIFT) & (j >= i_lift0) & (dh < th.lift_progress_min_m) & \
            (rise < th.micro_lift_min_m)
        k = _first(ls)
        if k is not None:
            cands.append((k, _PRIORITY["lift_stall"], "lift_stall", None,
                          {"dh": float(dh[k]), "rise": float(rise[k])}))

    if ctx.i_acq is not None:
        after = idx > ctx.i_acq
        drift = np.where(after, np.abs(a - ctx.a_ref), 0.0)
        ctx.cum["drift"] = np.cumsum(drift)
        loss = after & ((a < ctx.a_ref * (1.0 - th.slip_collapse_frac))
                        | ((e < ctx.e_ref * (1.0 - th.effort_drop_frac)) & (e < th.hold_effort_min)))
        add("loss", _first_stable(loss, t, W, mn, idx))
        held = after & lifted & ~closed & (e >= th.contact_effort_min) & ~loss
        if th.hold_phase_required:
            held &= p >= _HOLD
        add("held", _first_stable(held, t, W, mn, idx))

    if not cands:
        return None
    i, _, kind, rs, extra = min(cands, key=lambda c: (c[0], c[1]))
    if ctx.i_acq is not None and ctx.i_acq > i:  # evidence may only cite what was known at i
        ctx.i_acq, ctx.acq_window, ctx.a_ref, ctx.e_ref = None, None, float("nan"), float("nan")
    return _build(kind, i, rs, ctx, th, extra)


def _end_from_cols(cols: dict[str, np.ndarray], th: WatchdogThresholds) -> Verdict:
    ctx, _ = _acquisition(cols, th)
    return _end(ctx, len(cols["t"]), th)


# ----------------------------------------------------------------------------------------------
# batch over many attempts: one (attempts x samples) matrix, every rule row-wise


def classify(tel: Telemetry | Mapping[str, Any] | None, th: WatchdogThresholds | None = None) -> Verdict:
    """Label one attempt's telemetry. Never raises on bad telemetry: see the module doc.

    (One attempt takes the 1-D path, which has less fixed cost than the matrix path of
    classify_many; the two are property-tested equal, and both equal the streaming classifier.)
    """
    return classify_reference(tel, th)


def _rows_first(mask: np.ndarray) -> np.ndarray:
    """Per row, the first True column, or -1."""
    k = np.argmax(mask, axis=1)
    return np.where(mask[np.arange(mask.shape[0]), k], k, -1)


def _rows_first_stable(c: np.ndarray, t: np.ndarray, idx: np.ndarray, window: float,
                       min_n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row: first column where `c` has held >= window s and >= min_n samples (-1), its run start."""
    L = c.shape[1]
    rs = np.maximum.accumulate(np.where(c, -1, idx), axis=1) + 1
    rsc = np.minimum(rs, L - 1)
    ok = c & (t - np.take_along_axis(t, rsc, axis=1) >= window) & (idx - rs + 1 >= min_n)
    k = _rows_first(ok)
    return k, np.where(k >= 0, rs[np.arange(c.shape[0]), np.maximum(k, 0)], -1)


def classify_many(tels: Any, th: WatchdogThresholds | None = None, chunk: int = 256) -> list[Verdict]:
    """Label many attempts at once (vectorised over attempts and samples); result i == classify(tels[i]).

    Attempts are sorted by length and grouped (<= chunk rows, lengths within 25 %) into matrices.
    """
    th = th or WatchdogThresholds()
    tels = list(tels)
    out: list[Verdict | None] = [None] * len(tels)
    rows: list[tuple[int, dict[str, np.ndarray]]] = []
    for i, tel in enumerate(tels):
        cols, why = _columns(tel)
        if cols is None:
            out[i] = _bad(why, None, None)
        elif len(cols["t"]) == 0:
            out[i] = _bad("empty telemetry", None, None)
        else:
            rows.append((i, cols))
    # chunks of similar length (sorted), so padding to one matrix wastes little
    rows.sort(key=lambda x: len(x[1]["t"]))
    k = 0
    while k < len(rows):
        n0 = len(rows[k][1]["t"])
        j = k + 1
        while j < len(rows) and j - k < chunk and len(rows[j][1]["t"]) <= 1.25 * n0 + 8:
            j += 1
        part = rows[k:j]
        with np.errstate(all="ignore"):
            verdicts = _classify_rows([c for _, c in part], th)
        for (i, _), v in zip(part, verdicts, strict=True):
            out[i] = v
        k = j
    return out  # type: ignore[return-value]


def _classify_rows(cols_list: list[dict[str, np.ndarray]], th: WatchdogThresholds) -> list[Verdict]:
    R = len(cols_list)
    lens = np.array([len(c["t"]) for c in cols_list])
    L = int(lens.max())
    names = FLOAT_COLUMNS + ("phase",)
    M = {k: np.zeros((R, L)) for k in names}
    stalled = np.zeros((R, L), bool)
    for r, c in enumerate(cols_list):
        n = lens[r]
        for k in names:
            M[k][r, :n] = c[k]
        stalled[r, :n] = c["stalled"]
    idx = np.arange(L)[None, :]
    ar = np.arange(R)
    inside = idx < lens[:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        # bad telemetry: first non-finite value, unknown phase, or backwards time, per row
        fin = np.ones((R, L), bool)
        for k in names:
            fin &= np.isfinite(M[k])
        ph_raw = M["phase"]
        badph = fin & ((ph_raw != np.round(ph_raw)) | (ph_raw < 0) | (ph_raw > _MAX_PHASE))
        back = np.zeros((R, L), bool)
        back[:, 1:] = M["t"][:, 1:] < M["t"][:, :-1]
        bad = inside & (~fin | badph | back)
        kbad = _rows_first(bad)
        m = np.where(kbad >= 0, kbad, lens)
        valid = idx < m[:, None]
        t, a, e, v, h = (np.where(valid, M[k], 0.0) for k in
                         ("t", "aperture_norm", "effort", "velocity", "ee_height"))
        cmd = np.where(valid, M["commanded_aperture"], 0.0)
        p = np.where(valid, ph_raw, -1).astype(np.int64)
        # padding / invalid tail: repeat the last valid time so windows never reach into it
        last_t = t[ar, np.maximum(m - 1, 0)]
        t = np.where(valid, t, last_t[:, None])
    absv = np.abs(v)
    track = np.abs(a - cmd)
    active = valid & (p >= _CLOSE)
    closed = a <= th.closed_eps
    still = absv <= th.stall_velocity_eps
    W, Ws, mn = th.settle_window_s, th.stall_window_s, th.min_window_samples
    cum = {"a": np.cumsum(a, axis=1), "e": np.cumsum(e, axis=1), "absv": np.cumsum(absv, axis=1),
           "track": np.cumsum(track, axis=1), "h": np.cumsum(h, axis=1)}
    BIG = L + 1
    kinds = ["empty", "finger_stall", "stall_flag", "budget", "lift_stall", "loss", "held"]
    first = {k: np.full(R, BIG) for k in kinds}
    start = {k: np.full(R, -1) for k in kinds}

    def put(kind: str, hit: tuple[np.ndarray, np.ndarray]) -> None:
        k, rs = hit
        first[kind] = np.where(k >= 0, k, BIG)
        start[kind] = rs

    # acquisition
    contact = active & ~closed & (e >= th.contact_effort_min) & still
    i_acq, acq_rs = _rows_first_stable(contact, t, idx, W, mn)
    has_acq = i_acq >= 0
    ia, ra = np.maximum(i_acq, 0), np.maximum(acq_rs, 0)
    cnt = (ia - ra + 1).astype(np.float64)

    def wmean(c2: np.ndarray) -> np.ndarray:
        before = np.where(ra > 0, c2[ar, np.maximum(ra - 1, 0)], 0.0)
        return (c2[ar, ia] - before) / cnt

    a_ref = np.where(has_acq, wmean(cum["a"]), np.nan)
    e_ref = np.where(has_acq, wmean(cum["e"]), np.nan)
    # lift reference
    i_lift0 = _rows_first(valid & (p >= _LIFT))
    has_lift = i_lift0 >= 0
    il = np.maximum(i_lift0, 0)
    pre = ((p == _CLOSE) | (p == _SETTLE)) & (idx < il[:, None]) & has_lift[:, None]
    n_pre = pre.sum(axis=1)
    pre_sum = np.cumsum(np.where(pre, h, 0.0), axis=1)[ar, np.maximum(il - 1, 0)]
    with np.errstate(invalid="ignore", divide="ignore"):
        h_ref = np.where(n_pre > 0, pre_sum / np.maximum(n_pre, 1), h[ar, il])
    h_ref = np.where(has_lift, h_ref, np.nan)

    put("empty", _rows_first_stable(active & closed & (e <= th.empty_effort_max), t, idx, W, mn))
    finger = (valid & ((p == _CLOSE) | (p == _SETTLE)) & ~closed & still & (e < th.contact_effort_min)
              & (track > th.command_tracking_eps))
    put("finger_stall", _rows_first_stable(finger, t, idx, Ws, mn))
    if th.trust_stall_flag:
        put("stall_flag", _rows_first_stable(active & stalled, t, idx, Ws, mn))
    kb = _rows_first(valid & ((t - t[:, :1]) > th.attempt_time_budget_s))
    first["budget"] = np.where(kb >= 0, kb, BIG)

    rise = h - h_ref[:, None]
    lifted = has_lift[:, None] & (idx >= il[:, None]) & (rise >= th.micro_lift_min_m)
    ls_extra: dict[int, dict[str, float]] = {}
    for r in np.flatnonzero(has_lift):
        n = int(m[r])
        tr = t[r, :n]
        j = np.searchsorted(tr, tr - Ws, side="right") - 1
        jc = np.maximum(j, 0)
        dh = h[r, :n] - h[r, jc]
        ir = np.arange(n)
        ls = ((ir >= il[r]) & (p[r, :n] >= _LIFT) & (j >= il[r]) & (dh < th.lift_progress_min_m)
              & (rise[r, :n] < th.micro_lift_min_m))
        k = _first(ls)
        if k is not None:
            first["lift_stall"][r] = k
            ls_extra[int(r)] = {"dh": float(dh[k]), "rise": float(rise[r, k])}

    after = idx > np.where(has_acq, i_acq, BIG)[:, None]
    drift = np.where(after, np.abs(a - a_ref[:, None]), 0.0)
    cum["drift"] = np.cumsum(drift, axis=1)
    with np.errstate(invalid="ignore"):
        loss = valid & after & ((a < (a_ref * (1.0 - th.slip_collapse_frac))[:, None])
                                | ((e < (e_ref * (1.0 - th.effort_drop_frac))[:, None])
                                   & (e < th.hold_effort_min)))
    put("loss", _rows_first_stable(loss, t, idx, W, mn))
    held = valid & after & lifted & ~closed & (e >= th.contact_effort_min) & ~loss
    if th.hold_phase_required:
        held &= p >= _HOLD
    put("held", _rows_first_stable(held, t, idx, W, mn))

    # winner per row: earliest index, ties by priority
    order = sorted(kinds, key=lambda k: _PRIORITY[k])
    keys = np.stack([first[k] * 16 + _PRIORITY[k] for k in order])
    win = np.argmin(keys, axis=0)
    win_i = keys[win, ar] // 16
    verdicts: list[Verdict] = []
    for r in range(R):
        cum_r = {k: c2[r] for k, c2 in cum.items()}
        ctx = _Ctx(t=t[r], cum=cum_r, h_ref=float(h_ref[r]) if has_lift[r] else None)
        i = int(win_i[r])
        if has_acq[r] and (i >= BIG or i_acq[r] <= i):
            ctx.i_acq, ctx.acq_window = int(i_acq[r]), (int(acq_rs[r]), int(i_acq[r]))
            ctx.a_ref, ctx.e_ref = float(a_ref[r]), float(e_ref[r])
        if i < BIG:
            kind = order[int(win[r])]
            rs = None if kind in ("budget", "lift_stall") else int(start[kind][r])
            verdicts.append(_build(kind, i, rs, ctx, th, ls_extra.get(r) if kind == "lift_stall" else None))
        elif kbad[r] >= 0:
            k = int(kbad[r])
            verdicts.append(_bad(_bad_reason(cols_list[r], k), k, _finite_or_none(cols_list[r]["t"][k])))
        else:
            verdicts.append(_end(ctx, int(m[r]), th))
    return verdicts


def _finite_or_none(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _bad_reason(cols: dict[str, np.ndarray], k: int) -> str:
    for name in FLOAT_COLUMNS + ("phase",):
        if not math.isfinite(float(cols[name][k])):
            return f"non-finite {name} at sample {k}"
    ph = float(cols["phase"][k])
    if ph != round(ph) or ph < 0 or ph > _MAX_PHASE:
        return f"unknown phase code at sample {k}"
    return f"time goes backwards at sample {k}"


# ----------------------------------------------------------------------------------------------
# streaming


_SAMPLE_FIELDS = tuple(f.name for f in fields(Sample))


class StreamingClassifier:
    """Feed samples one at a time; the label is returned as soon as it is stable.

    `feed` returns None until the label is decided, then the (same) Verdict on that and every later
    call; later samples are ignored. `finish` returns the final Verdict (deciding "no stable
    terminal signature" / "empty telemetry" if nothing was decided). For any sample sequence,
    `finish()` equals `classify()` on the same samples (property-tested), because both evaluate
    the same causal rules with the same floating-point operations. Per-sample cost is O(1).
    """

    def __init__(self, th: WatchdogThresholds | None = None) -> None:
        self.th = th or WatchdogThresholds()
        self.n = 0
        self.verdict: Verdict | None = None
        self._t: list[float] = []
        self._cum: dict[str, list[float]] = {k: [] for k in ("a", "e", "absv", "track", "h", "drift")}
        self._sums = dict.fromkeys(self._cum, 0.0)
        self._runs: dict[str, int | None] = dict.fromkeys(
            ("contact", "empty", "finger_stall", "stall_flag", "loss", "held"))
        self._ctx = _Ctx(t=self._t, cum=self._cum)
        self._i_lift0: int | None = None
        self._pre_sum = 0.0
        self._pre_n = 0
        self._lift_win: deque[tuple[float, float]] = deque()

    def _stable(self, name: str, cond: bool, i: int, t: float, window: float) -> int | None:
        """Update run `name` with this sample; return its start if it is now stable."""
        if not cond:
            self._runs[name] = None
            return None
        rs = self._runs[name]
        if rs is None:
            rs = self._runs[name] = i
        if t - self._t[rs] >= window and i - rs + 1 >= self.th.min_window_samples:
            return rs
        return None

    def _read(self, s: Any) -> tuple[tuple[float, ...], int, bool] | str:
        vals = []
        for name in FLOAT_COLUMNS:
            val = s.get(name) if isinstance(s, Mapping) else getattr(s, name, None)
            if val is None:
                return f"missing column {name}"
            try:
                x = float(val)
            except (TypeError, ValueError):
                return f"column {name} is not numeric"
            if not math.isfinite(x):
                return f"non-finite {name}"
            vals.append(x)
        ph = s.get("phase") if isinstance(s, Mapping) else getattr(s, "phase", None)
        if ph is None:
            return "missing column phase"
        try:
            phf = float(ph)
        except (TypeError, ValueError):
            return "column phase is not numeric"
        if not math.isfinite(phf):
            return "non-finite phase"
        if phf != round(phf) or phf < 0 or phf > _MAX_PHASE:
            return "unknown phase code"
        st = s.get("stalled", False) if isinstance(s, Mapping) else getattr(s, "stalled", False)
        return tuple(vals), int(phf), bool(st)

    def feed(self, sample: Sample | Mapping[str, Any]) -> Verdict | None:
        if self.verdict is not None:
            return self.verdict
        th = self.th
        i = self.n
        r = self._read(sample)
        if isinstance(r, str):
            return self._decide_bad(r, i, sample)
        (t, _am, a, cmd, e, v, h), p, stalled = r
        if i > 0 and t < self._t[-1]:
            return self._decide_bad("time goes backwards", i, sample)
        self.n += 1
        self._t.append(t)
        absv, track = abs(v), abs(a - cmd)
        for k, x in (("a", a), ("e", e), ("absv", absv), ("track", track), ("h", h)):
            self._sums[k] += x
            self._cum[k].append(self._sums[k])
        ctx = self._ctx
        ctx.h_last, ctx.phase_last = h, p
        active = p >= _CLOSE
        closed = a <= th.closed_eps
        still = absv <= th.stall_velocity_eps
        W, Ws = th.settle_window_s, th.stall_window_s
        cands: list[tuple[int, str, int | None, dict[str, Any]]] = []

        # acquisition reference (uses values up to and including this sample)
        acq_before = ctx.i_acq
        rs = self._stable("contact", active and not closed and e >= th.contact_effort_min and still, i, t, W)
        if rs is not None and ctx.i_acq is None:
            ctx.i_acq, ctx.acq_window = i, (rs, i)
            ctx.a_ref = _wmean(self._cum["a"], rs, i)
            ctx.e_ref = _wmean(self._cum["e"], rs, i)
        # lift reference
        if self._i_lift0 is None:
            if p >= _LIFT:
                self._i_lift0 = i
                ctx.h_ref = self._pre_sum / self._pre_n if self._pre_n else h
            elif p in (_CLOSE, _SETTLE):
                self._pre_sum += h
                self._pre_n += 1
        # after acquisition: drift column (zeros before, as in batch)
        after = acq_before is not None  # i > i_acq
        drift = abs(a - ctx.a_ref) if after else 0.0
        self._sums["drift"] += drift
        self._cum["drift"].append(self._sums["drift"])

        rs = self._stable("empty", active and closed and e <= th.empty_effort_max, i, t, W)
        if rs is not None:
            cands.append((_PRIORITY["empty"], "empty", rs, {}))
        finger = (p in (_CLOSE, _SETTLE) and not closed and still and e < th.contact_effort_min
                  and track > th.command_tracking_eps)
        rs = self._stable("finger_stall", finger, i, t, Ws)
        if rs is not None:
            cands.append((_PRIORITY["finger_stall"], "finger_stall", rs, {}))
        rs = self._stable("stall_flag", active and stalled and th.trust_stall_flag, i, t, Ws)
        if rs is not None:
            cands.append((_PRIORITY["stall_flag"], "stall_flag", rs, {}))
        if t - self._t[0] > th.attempt_time_budget_s:
            cands.append((_PRIORITY["budget"], "budget", None, {}))
        lifted = False
        if self._i_lift0 is not None:
            assert ctx.h_ref is not None
            rise = h - ctx.h_ref
            lifted = rise >= th.micro_lift_min_m
            win = self._lift_win
            win.append((t, h))
            target = t - Ws
            while len(win) >= 2 and win[1][0] <= target:
                win.popleft()
            if p >= _LIFT and win[0][0] <= target:
                dh = h - win[0][1]
                if dh < th.lift_progress_min_m and rise < th.micro_lift_min_m:
                    cands.append((_PRIORITY["lift_stall"], "lift_stall", None, {"dh": dh, "rise": rise}))
        if after:
            loss = (a < ctx.a_ref * (1.0 - th.slip_collapse_frac)
                    or (e < ctx.e_ref * (1.0 - th.effort_drop_frac) and e < th.hold_effort_min))
            rs = self._stable("loss", loss, i, t, W)
            if rs is not None:
                cands.append((_PRIORITY["loss"], "loss", rs, {}))
            held = (lifted and not closed and e >= th.contact_effort_min and not loss
                    and (p >= _HOLD or not th.hold_phase_required))
            rs = self._stable("held", held, i, t, W)
            if rs is not None:
                cands.append((_PRIORITY["held"], "held", rs, {}))
        if not cands:
            return None
        _, kind, rs, extra = min(cands, key=lambda c: c[0])
        self.verdict = _build(kind, i, rs, ctx, th, extra)
        return self.verdict

    def _decide_bad(self, reason: str, i: int, sample: Any) -> Verdict:
        tv = sample.get("t") if isinstance(sample, Mapping) else getattr(sample, "t", None)
        try:
            tf: float | None = float(tv)  # type: ignore[arg-type]
            if not math.isfinite(tf):
                tf = None
        except (TypeError, ValueError):
            tf = None
        self.verdict = _bad(f"{reason} at sample {i}", i, tf)
        return self.verdict

    def finish(self) -> Verdict:
        if self.verdict is not None:
            return self.verdict
        if self.n == 0:
            self.verdict = _bad("empty telemetry", None, None)
        else:
            self.verdict = _end(self._ctx, self.n, self.th)
        return self.verdict


def classify_stream(samples: Any, th: WatchdogThresholds | None = None) -> Verdict:
    """Convenience: run the streaming classifier over an iterable of samples."""
    sc = StreamingClassifier(th)
    for s in samples:
        if sc.feed(s) is not None:
            break
    return sc.finish()
