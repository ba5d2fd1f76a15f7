"""Watchdog classifier: label semantics, bad telemetry, and property tests (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_grasp.outcomes import Label
from bt_grasp.watchdog.classify import (
    AcceptAll,
    SemanticVerifier,
    StreamingClassifier,
    Verdict,
    classify,
    classify_many,
    classify_reference,
    classify_stream,
    semantic_check,
)
from bt_grasp.watchdog.synthetic import synth_attempt, synth_dataset
from bt_grasp.watchdog.telemetry import Phase, Sample, Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds, thresholds_from_profile

TH = WatchdogThresholds()


def _stream(samples: list[Sample], th: WatchdogThresholds = TH) -> Verdict:
    sc = StreamingClassifier(th)
    for s in samples:
        sc.feed(s)
    return sc.finish()


# --- semantics on synthetic attempts (synthetic: kinematic sketches, see synthetic.py) ----------

@pytest.mark.parametrize("label", [Label.EMPTY, Label.SUCCESS, Label.SLIP, Label.STALL, Label.TIMEOUT])
def test_clear_synthetic_cases(label: Label) -> None:
    rng = np.random.default_rng(3)
    for _ in range(10):
        tel = synth_attempt(label, rng)
        v = classify(tel, TH)
        assert v.label is label, v.evidence
        assert 0.0 <= v.confidence <= 1.0
        assert {"rule", "reason", "margins", "window"} <= set(v.evidence)


def test_weak_low_effort_is_weak() -> None:
    rng = np.random.default_rng(0)
    tel = synth_attempt(Label.SUCCESS, rng, noise=False)
    d = tel.to_dict()
    d["effort"] = np.minimum(d["effort"], 0.2)
    v = classify(Telemetry(**d), TH)
    assert v.label is Label.WEAK, v.evidence


def test_streaming_equals_batch_on_synthetic() -> None:
    tels = [tel for _, tel in synth_dataset(120, seed=5)]
    many = classify_many(tels + [Telemetry.empty(), None], TH)
    for tel, v in zip(tels, many, strict=False):
        assert classify(tel, TH) == _stream(tel.samples()) == classify_reference(tel, TH) == v
    assert many[-1].bad_telemetry and many[-2].bad_telemetry




def test_streaming_emits_once_stable_and_then_sticks() -> None:
    tel = synth_attempt(Label.EMPTY, np.random.default_rng(1))
    sc = StreamingClassifier(TH)
    first = None
    for i, s in enumerate(tel.samples()):
        out = sc.feed(s)
        if out is not None and first is None:
            first = i
            assert out.index == i
    assert first is not None and first < len(tel) - 1
    assert sc.finish().index == first


# --- bad telemetry: defined label, never an exception ------------------------------------------

def _good() -> Telemetry:
    return synth_attempt(Label.SUCCESS, np.random.default_rng(2))


def test_empty_stream() -> None:
    for v in (classify(Telemetry.empty(), TH), _stream([]), classify(None, TH)):
        assert v.label is Label.TIMEOUT and v.bad_telemetry
        assert v.evidence["reason"].startswith("bad telemetry")


def test_missing_column_and_ragged() -> None:
    d = _good().to_dict()
    del d["effort"]
    v = classify(d, TH)
    assert v.bad_telemetry and "effort" in v.evidence["reason"]
    d = _good().to_dict()
    d["t"] = d["t"][:-3]
    assert classify(d, TH).bad_telemetry


def test_nan_from_start_and_backwards_time() -> None:
    d = _good().to_dict()
    d["effort"] = d["effort"].copy()
    d["effort"][:] = np.nan
    assert classify(Telemetry(**d), TH).bad_telemetry
    d = _good().to_dict()
    d["t"] = d["t"].copy()
    d["t"][5] = -1.0
    v = classify(Telemetry(**d), TH)
    assert v.bad_telemetry and "backwards" in v.evidence["reason"] and v.index == 5


def test_garbage_sample_in_stream() -> None:
    sc = StreamingClassifier(TH)
    assert sc.feed({"t": 0.0}) is not None
    assert sc.finish().bad_telemetry


# --- semantic hook -------------------------------------------------------------------------------

# --- wrist load ---------------------------------------------------------------------------------

def test_deep_slip_is_slip_only_with_the_load_channel() -> None:
    """Fingers clamped on an object that stayed on the table look held; the wrist load tells."""
    for k in range(10):
        tel = synth_attempt(Label.SLIP, np.random.default_rng(k), with_load=True, deep_slip=True)
        v = classify(tel, TH)
        assert v.label is Label.SLIP and v.evidence["rule"] == "load_drop_at_rest", v.evidence
        assert _stream(tel.samples()) == v
        tel.load[:] = np.nan  # a driver without a load sensor: finger telemetry alone
        assert classify(tel, TH).label is Label.SUCCESS


def test_carried_object_stays_success_and_reports_its_load() -> None:
    for k in range(10):
        tel = synth_attempt(Label.SUCCESS, np.random.default_rng(k), with_load=True)
        v = classify(tel, TH)
        assert v.label is Label.SUCCESS, v.evidence
        assert abs(v.evidence["lift_load_drop_n"]) < TH.load_drop_max_n


def test_load_drop_rule() -> None:
    """Heavier during the steady lift than at rest is a drag, not a carried weight: SLIP."""
    base = synth_attempt(Label.SUCCESS, np.random.default_rng(3), noise=False, with_load=True)
    lift = base.phase >= int(Phase.MICRO_LIFT)
    drag = base.load.copy()
    drag[(base.phase == int(Phase.MICRO_LIFT))] += 2.0
    dragged = Telemetry(**{**base.to_dict(), "load": drag})
    v = classify(dragged, TH)
    assert v.label is Label.SLIP and v.evidence["lift_load_drop_n"] > TH.load_drop_max_n
    assert classify(dragged, TH.model_copy(update={"use_load": False})).label is Label.SUCCESS
    offset = Telemetry(**{**base.to_dict(), "load": base.load - 0.6})  # a constant sensor offset changes nothing
    assert classify(offset, TH).label is Label.SUCCESS
    pushed = Telemetry(**{**base.to_dict(), "load": np.where(lift, -30.0, base.load)})
    v = classify(pushed, TH)  # pressing on something the table holds up: not carrying
    assert v.label is Label.SLIP and v.evidence["rule"] == "wrist_pushed_up"
    gap = base.load.copy()
    gap[lift] = np.nan  # unmeasured during the lift: no load evidence, finger rules decide
    assert classify(Telemetry(**{**base.to_dict(), "load": gap}), TH).label is Label.SUCCESS


def test_semantic_hook() -> None:
    ok_v = classify(_good(), TH)
    assert ok_v.label is Label.SUCCESS

    class Veto:
        def verify(self, context):  # noqa: ANN001, ANN201
            return False, "target still at its place"

    class Boom:
        def verify(self, context):  # noqa: ANN001, ANN201
            raise RuntimeError("camera gone")

    assert isinstance(Veto(), SemanticVerifier)
    assert semantic_check(ok_v, AcceptAll(), None)[0]
    assert semantic_check(ok_v, Veto(), None) == (False, "target still at its place")
    assert semantic_check(ok_v, Boom(), None)[0] is False
    empty_v = classify(synth_attempt(Label.EMPTY, np.random.default_rng(0)), TH)
    assert semantic_check(empty_v, Veto(), None)[0] is True  # only SUCCESS is checked


def test_thresholds_from_profile_rejects_typos() -> None:
    from bt_grasp.errors import UserError
    assert thresholds_from_profile({"watchdog": {"closed_eps": 0.03}}).closed_eps == 0.03
    with pytest.raises(UserError):
        thresholds_from_profile({"watchdog": {"closed_epsilon": 0.03}})
    with pytest.raises(UserError):
        thresholds_from_profile({"watchdog": {"empty_effort_max": 0.9, "hold_effort_min": 0.5}})


# --- property tests ------------------------------------------------------------------------------

_vals = st.sampled_from([0.0, 0.01, 0.03, 0.05, 0.1, 0.2, 0.5, 0.8, 1.0])
_eff = st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9, 1.1])
_vel = st.sampled_from([0.0, 0.001, -0.001, 0.01, -0.05])
_h = st.sampled_from([0.0, 0.002, 0.005, 0.01, 0.02, 0.04])
_load = st.sampled_from([None, None, 6.9, 6.9, 7.0, 7.5, 8.5, -3.0, float("nan")])


@st.composite
def sample_seqs(draw: st.DrawFn, allow_bad: bool = True) -> list[Sample]:
    """Piecewise-constant random telemetry: segments of repeated readings so windows can fill."""
    n_seg = draw(st.integers(0, 8))
    t = 0.0
    out: list[Sample] = []
    phase = 0
    for _ in range(n_seg):
        reps = draw(st.integers(1, 30))
        dt = draw(st.sampled_from([0.005, 0.01, 0.02, 0.05]))
        phase = min(4, phase + draw(st.integers(0, 1))) if draw(st.booleans()) else draw(st.integers(0, 4))
        a, e, v, h = draw(_vals), draw(_eff), draw(_vel), draw(_h)
        cmd = draw(st.sampled_from([0.0, 1.0, a]))
        stalled = draw(st.booleans()) and draw(st.booleans())
        load = draw(_load)
        for _ in range(reps):
            t += dt
            out.append(Sample(t=t, aperture_m=a * 0.085, aperture_norm=a, commanded_aperture=cmd, effort=e,
                              velocity=v, ee_height=h, phase=phase, stalled=stalled, load=load))
    if allow_bad and out and draw(st.booleans()):
        k = draw(st.integers(0, len(out) - 1))
        kind = draw(st.sampled_from(["nan", "back", "inf", "phase"]))
        s = out[k]
        if kind == "nan":
            out[k] = Sample(**{**s.__dict__, "effort": float("nan")})
        elif kind == "inf":
            out[k] = Sample(**{**s.__dict__, "ee_height": float("inf")})
        elif kind == "phase":
            out[k] = Sample(**{**s.__dict__, "phase": 9})
        else:
            out[k] = Sample(**{**s.__dict__, "t": s.t - 1.0})
    return out


_settings = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(sample_seqs())
def test_prop_streaming_equals_batch(samples: list[Sample]) -> None:
    batch = classify(Telemetry.from_samples(samples), TH)
    assert classify_reference(Telemetry.from_samples(samples), TH) == batch
    assert _stream(samples) == batch
    assert classify_stream(samples, TH) == batch
    assert 0.0 <= batch.confidence <= 1.0
    if batch.index is not None:  # causal: the prefix up to the decision gives the same verdict
        assert classify(Telemetry.from_samples(samples[: batch.index + 1]), TH) == batch


@_settings
@given(sample_seqs(allow_bad=False))
def test_prop_closed_zero_effort_never_success(samples: list[Sample]) -> None:
    closed = [Sample(**{**s.__dict__, "aperture_norm": 0.0, "aperture_m": 0.0, "effort": 0.0})
              for s in samples]
    assert classify(Telemetry.from_samples(closed), TH).label is not Label.SUCCESS


@_settings
@given(sample_seqs(allow_bad=False))
def test_prop_contact_without_lift_never_success(samples: list[Sample]) -> None:
    flat = [Sample(**{**s.__dict__, "ee_height": 0.03}) for s in samples]
    assert classify(Telemetry.from_samples(flat), TH).label is not Label.SUCCESS


@_settings
@given(sample_seqs(), st.sampled_from([0.25, 0.5, 2.0, 4.0]))
def test_prop_time_scaling_with_windows(samples: list[Sample], k: float) -> None:
    """Scaling time by k (a power of two: exact in floating point) with the windows, the budget and
    the velocity thresholds scaled to match leaves the label unchanged."""
    th2 = TH.model_copy(update={"settle_window_s": TH.settle_window_s * k,
                                "stall_window_s": TH.stall_window_s * k,
                                "attempt_time_budget_s": TH.attempt_time_budget_s * k,
                                "stall_velocity_eps": TH.stall_velocity_eps / k})
    scaled = [Sample(**{**s.__dict__, "t": s.t * k, "velocity": s.velocity / k}) for s in samples]
    a = classify(Telemetry.from_samples(samples), TH)
    b = classify(Telemetry.from_samples(scaled), th2)
    assert a.label is b.label
    assert a.index == b.index


@_settings
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=0, max_size=40))
def test_prop_never_raises_on_garbage(xs: list[float]) -> None:
    n = len(xs)
    d = {name: np.asarray(xs, float) for name in
         ("t", "aperture_m", "aperture_norm", "commanded_aperture", "effort", "velocity", "ee_height")}
    d["phase"] = np.asarray([x if math.isfinite(x) else 0 for x in xs], float) % 7
    v = classify(d, TH)
    assert v.label in set(Label) and 0 <= v.confidence <= 1
    sc = StreamingClassifier(TH)
    for i in range(n):
        sc.feed({k: d[k][i] for k in d})
    assert sc.finish().label is v.label


def test_phase_enum_order() -> None:
    assert [int(p) for p in Phase] == [0, 1, 2, 3, 4]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(sample_seqs(), min_size=1, max_size=5))
def test_prop_many_equals_single(seqs: list[list[Sample]]) -> None:
    """Vectorising over attempts (padding to one matrix) changes nothing for any attempt."""
    tels = [Telemetry.from_samples(s) for s in seqs]
    assert classify_many(tels, TH) == [classify_reference(t, TH) for t in tels]
