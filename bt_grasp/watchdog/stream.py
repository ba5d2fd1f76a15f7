"""The streaming classifier: one sample at a time, the label the moment it is stable.

Why a separate path: on the robot the Watchdog must stop a failing grasp early, without waiting
for the whole attempt; `finish()` still equals the batch classifier on the same samples.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from bt_grasp.watchdog.telemetry import Sample
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
    _lift_load,
    _wmean,
)

_SAMPLE_FIELDS = tuple(f.name for f in fields(Sample))


def _load_value(s: Any) -> float:
    """A sample's optional wrist load; NaN when absent, not numeric or not finite (not measured)."""
    val = s.get("load") if isinstance(s, Mapping) else getattr(s, "load", None)
    try:
        x = float(val)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan


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
        self._cum: dict[str, list[float]] = {k: [] for k in ("a", "e", "absv", "track", "h", "drift",
                                                                         "l", "lf")}
        self._sums = dict.fromkeys(self._cum, 0.0)
        self._runs: dict[str, int | None] = dict.fromkeys(
            ("contact", "empty", "finger_stall", "stall_flag", "loss", "held"))
        self._ctx = _Ctx(t=self._t, cum=self._cum)
        self._i_lift0: int | None = None
        self._pre_sum = 0.0
        self._pre_n = 0
        self._hold_seen = False
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

    def _read(self, s: Any) -> tuple[tuple[float, ...], int, bool, float] | str:
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
        return tuple(vals), int(phf), bool(st), _load_value(s)

    def feed(self, sample: Sample | Mapping[str, Any]) -> Verdict | None:
        if self.verdict is not None:
            return self.verdict
        th = self.th
        i = self.n
        r = self._read(sample)
        if isinstance(r, str):
            return self._decide_bad(r, i, sample)
        (t, _am, a, cmd, e, v, h), p, stalled, load = r
        if i > 0 and t < self._t[-1]:
            return self._decide_bad("time goes backwards", i, sample)
        self.n += 1
        self._t.append(t)
        absv, track = abs(v), abs(a - cmd)
        for k, x in (("a", a), ("e", e), ("absv", absv), ("track", track), ("h", h)):
            self._sums[k] += x
            self._cum[k].append(self._sums[k])
        measured = math.isfinite(load)
        for k, x in (("l", load if measured else 0.0), ("lf", 1.0 if measured else 0.0)):
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
        if p >= _HOLD and not self._hold_seen:  # the steady-lift load is known from the first HOLD sample
            self._hold_seen = True
            if self._i_lift0 is not None and i > self._i_lift0:
                ctx.i_hold = i
                ctx.l_lift = _lift_load(self._cum, self._i_lift0, i)
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
            value = float(tv)  # type: ignore[arg-type]  # None or text: TypeError/ValueError below
            tf: float | None = value if math.isfinite(value) else None
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
