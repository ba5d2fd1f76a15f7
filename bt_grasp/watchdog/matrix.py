"""Many attempts at once: one (attempts x samples) matrix per group of similar length, every rule
row-wise. Why: evaluating and calibrating on hundreds of traces calls the classifier thousands of
times; result i equals the reference classifier on attempt i (property-tested).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bt_grasp.watchdog.reference import _columns, _first, _load_refs
from bt_grasp.watchdog.thresholds import WatchdogThresholds
from bt_grasp.watchdog.verdict import (
    _CLOSE,
    _HOLD,
    _LIFT,
    _MAX_PHASE,
    _PRIORITY,
    _SETTLE,
    FLOAT_COLUMNS,
    Verdict,
    _bad,
    _build,
    _Ctx,
    _end,
)


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
    for r in np.flatnonzero(has_lift).tolist():
        n = int(m[r])
        tr = t[r, :n]
        j = np.searchsorted(tr, tr - Ws, side="right") - 1
        jc = np.maximum(j, 0)
        dh = h[r, :n] - h[r, jc]
        ir = np.arange(n)
        ls = ((ir >= il[r]) & (p[r, :n] >= _LIFT) & (j >= il[r]) & (dh < th.lift_progress_min_m)
              & (rise[r, :n] < th.micro_lift_min_m))
        k_stall = _first(ls)
        if k_stall is not None:
            first["lift_stall"][r] = k_stall
            ls_extra[int(r)] = {"dh": float(dh[k_stall]), "rise": float(rise[r, k_stall])}

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
        if i < BIG and order[int(win[r])] == "held":  # only a held verdict reads the wrist load
            mr = int(m[r])
            _load_refs(ctx, cols_list[r]["load"][:mr], p[r, :mr], int(il[r]) if has_lift[r] else None)
        if has_acq[r] and (i >= BIG or i_acq[r] <= i):
            ctx.i_acq, ctx.acq_window = int(i_acq[r]), (int(acq_rs[r]), int(i_acq[r]))
            ctx.a_ref, ctx.e_ref = float(a_ref[r]), float(e_ref[r])
        if i < BIG:
            kind = order[int(win[r])]
            rs = None if kind in ("budget", "lift_stall") else int(start[kind][r])
            verdicts.append(_build(kind, i, rs, ctx, th, ls_extra.get(r) if kind == "lift_stall" else None))
        elif kbad[r] >= 0:
            k_bad = int(kbad[r])
            verdicts.append(_bad(_bad_reason(cols_list[r], k_bad), k_bad,
                                 _finite_or_none(cols_list[r]["t"][k_bad])))
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

