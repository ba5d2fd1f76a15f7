"""Verdicts, and the rule arithmetic the batch and streaming classifiers share.

Why one module: both classifiers build their Verdict through `_build` from the same window sums,
so they compute identical floats and labels (the rules themselves are documented in classify.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from bt_grasp.outcomes import Label
from bt_grasp.watchdog.telemetry import Phase
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
    l_lift: float | None = None  # mean wrist load over the second half of the micro-lift
    i_hold: int | None = None  # first HOLD sample (l_lift is known from there on)


def _mean_if_measured(cum: dict[str, Any], i0: int, i1: int) -> float | None:
    """Mean load over samples i0..i1, or None unless every one of them was measured."""
    if i1 < i0 or _wmean(cum["lf"], i0, i1) < 1.0:
        return None
    return _wmean(cum["l"], i0, i1)


def _lift_load(cum: dict[str, Any], i_lift0: int, i_hold: int) -> float | None:
    """Load over the second half of the lift samples i_lift0..i_hold-1 (past the start transient)."""
    if i_hold - i_lift0 < 2:
        return None
    return _mean_if_measured(cum, i_lift0 + (i_hold - i_lift0) // 2, i_hold - 1)


def _load_check(ctx: _Ctx, rs: int, i: int, th: WatchdogThresholds) -> dict[str, float] | None:
    """Wrist-load evidence of a held window rs..i: the load at rest and its drop (N) from the
    steady lift, when known.

    The second half of the window is used, past the deceleration dip at the end of the lift. Why
    a drop and not the load over the free gripper's: with the fingers squeezing, the simulated
    wrist reading sits a few tenths of a newton off the free gripper's, as much as a light
    object weighs, while lift and rest share the same squeeze."""
    if not th.use_load or "l" not in ctx.cum:
        return None
    hold = _mean_if_measured(ctx.cum, rs + (i - rs + 1) // 2, i)
    if hold is None:
        return None
    out = {"hold_load_n": hold}
    if ctx.l_lift is not None and ctx.i_hold is not None and ctx.i_hold <= i:
        out.update(lift_load_n=ctx.l_lift, lift_load_drop_n=ctx.l_lift - hold)
    return out


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
        assert rs is not None  # a windowed kind (only budget and lift_stall have none)
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
        assert rs is not None  # a windowed kind (only budget and lift_stall have none)
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
        assert rs is not None  # a windowed kind (only budget and lift_stall have none)
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
        assert rs is not None  # a windowed kind (only budget and lift_stall have none)
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
        load = _load_check(ctx, rs, i, th)
        if load is not None:
            ev.update(load)
            drop, hold = load.get("lift_load_drop_n", -math.inf), load["hold_load_n"]
            if hold < th.pushed_up_load_n:
                margins = {"pushed_up": _rel(th.pushed_up_load_n - hold, max(abs(th.pushed_up_load_n), 1.0))}
                label, rule = Label.SLIP, "wrist_pushed_up"
                reason = (f"the fingers look held, but the wrist is pushed up (load {hold:.2f} N < "
                          f"{th.pushed_up_load_n}): the gripper presses on something that rests on the "
                          "table instead of carrying it")
                m = margins["pushed_up"]
            elif drop > th.load_drop_max_n:
                margins = {"load_drop": _rel(drop - th.load_drop_max_n, th.load_drop_max_n)}
                label, rule = Label.SLIP, "load_drop_at_rest"
                reason = (f"the fingers look held, but the wrist load fell {drop:.2f} N (> {th.load_drop_max_n})"
                          " when the lift stopped: the lift dragged the object by friction, the pads "
                          "sliding along it, instead of carrying it")
                m = margins["load_drop"]
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


