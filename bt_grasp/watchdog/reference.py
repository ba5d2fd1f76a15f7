"""The one-attempt batch classifier: every rule vectorised over the samples of one attempt.

It is the reference implementation of the rules in classify.py; the matrix path (matrix.py) and
the streaming path (stream.py) are property-tested equal to it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds
from bt_grasp.watchdog.verdict import (
    _CLOSE,
    _HOLD,
    _LIFT,
    _MAX_PHASE,
    _PRIORITY,
    _SETTLE,
    BOOL_COLUMNS,
    FLOAT_COLUMNS,
    REQUIRED_COLUMNS,
    Verdict,
    _bad,
    _build,
    _Ctx,
    _end,
    _lift_load,
    _wmean,
)


def _columns(tel: Any) -> tuple[dict[str, np.ndarray] | None, str]:
    """Column arrays from a Telemetry (or mapping / object with the columns), or (None, reason)."""
    if tel is None:
        return None, "no telemetry"
    if isinstance(tel, Telemetry):  # fast path: the dataclass already holds validated 1-D arrays
        cols = {name: getattr(tel, name) for name in REQUIRED_COLUMNS + BOOL_COLUMNS}
        if all(isinstance(v, np.ndarray) and v.ndim == 1 for v in cols.values()) and \
                len({len(v) for v in cols.values()}) == 1:
            cols["load"] = _load_column(tel.load, len(tel.t))
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
    cols["load"] = _load_column(tel.get("load") if isinstance(tel, Mapping) else getattr(tel, "load", None), n)
    return cols, ""


def _load_column(val: Any, n: int) -> np.ndarray:
    """The optional wrist load as floats; NaN where (or wherever, if malformed) it was not measured."""
    try:
        arr = np.array([np.nan if x is None else x for x in val] if isinstance(val, (list, tuple)) else val,
                       dtype=np.float64)
    except (TypeError, ValueError):
        return np.full(n, np.nan)
    return arr if arr.shape == (n,) else np.full(n, np.nan)


def _load_refs(ctx: _Ctx, load: np.ndarray, p: np.ndarray, i_lift0: int | None) -> None:
    """Wrist-load sums and the steady-lift load into ctx."""
    fin = np.isfinite(load)
    ctx.cum["l"] = np.cumsum(np.where(fin, load, 0.0))
    ctx.cum["lf"] = np.cumsum(fin.astype(np.float64))
    if i_lift0 is None:
        return
    i_hold = _first(p >= _HOLD)
    if i_hold is not None and i_hold > i_lift0:
        ctx.i_hold = i_hold
        ctx.l_lift = _lift_load(ctx.cum, i_lift0, i_hold)


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
    _load_refs(ctx, cols["load"], p, i_lift0)
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

