"""The Watchdog of a running grasp: labels as the telemetry arrives, batch == streaming, and a
reactive condition that stops a grasp its Watchdog already calls EMPTY.

A fake streaming robot replays synthetic attempts (bt_grasp/watchdog/synthetic.py: kinematic
sketches) a few samples per control period, as a driver records them.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import tree

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.drivers.base import Execution, Observation
from bt_grasp.drivers.motion import MotionHalted, SteppedMotion
from bt_grasp.outcomes import Decision, Label
from bt_grasp.profile import load_profile
from bt_grasp.runner import Runner
from bt_grasp.services import Services
from bt_grasp.tick_budget import episode_limits
from bt_grasp.watchdog.classify import classify
from bt_grasp.watchdog.dataset import load_dataset
from bt_grasp.watchdog.live import LiveWatchdog
from bt_grasp.watchdog.synthetic import synth_attempt, synth_dataset
from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.watchdog.thresholds import WatchdogThresholds, thresholds_from_profile

TH = WatchdogThresholds()
PERIOD = 0.05
DATA = Path(__file__).resolve().parent / "data" / "watchdog"


def _prefix(tel: Telemetry, n: int) -> Telemetry:
    return Telemetry(**{k: v[:n] for k, v in tel.to_dict().items()})


def _polled(tel: Telemetry, rng: np.random.Generator) -> tuple[LiveWatchdog, list[int]]:
    """Feed `tel` as growing prefixes of random chunk sizes (polls); the prefix lengths fed."""
    live, ends, n = LiveWatchdog(TH), [], 0
    while n < len(tel):
        n = min(len(tel), n + int(rng.integers(0, 9)))
        ends.append(n)
        live.update(_prefix(tel, n))
    return live, ends


def test_polled_in_chunks_equals_batch_on_synthetic_attempts() -> None:
    rng = np.random.default_rng(0)
    for _, tel in synth_dataset(60, seed=7):
        live, _ = _polled(tel, rng)
        assert live.final(tel) == classify(tel, TH)


def test_polled_in_chunks_equals_batch_on_recorded_attempts() -> None:
    th = thresholds_from_profile(load_profile("ur5e_robotiq"))
    traces = load_dataset(DATA)
    assert len(traces) >= 36, "the recorded regression set is missing"
    rng = np.random.default_rng(1)
    for tr in traces:
        live = LiveWatchdog(th)
        n = 0
        while n < len(tr.telemetry):
            n = min(len(tr.telemetry), n + int(rng.integers(0, 9)))
            live.update(_prefix(tr.telemetry, n))
        assert live.final(tr.telemetry) == classify(tr.telemetry, th), tr.id


def test_the_label_is_final_once_stable_and_reads_only_new_samples() -> None:
    tel = synth_attempt(Label.EMPTY, np.random.default_rng(1))
    live = LiveWatchdog(TH)
    decided_at = None
    for n in range(1, len(tel) + 1):
        v = live.update(_prefix(tel, n))
        if v is not None and decided_at is None:
            decided_at = n
    assert decided_at is not None and decided_at < len(tel)  # before the attempt ended
    assert live.verdict.label is Label.EMPTY
    assert live.verdict.index == decided_at - 1  # decided on the sample that made it stable
    assert live.classifier.n == decided_at  # nothing fed after the decision, nothing fed twice


class ReplayRobot:
    """A streaming robot whose grasp replays `tel`, `per_poll` samples per control period."""

    name = "replay"
    control_period = PERIOD

    def __init__(self, tel: Telemetry, per_poll: int = 4) -> None:
        self.tel = tel
        self.per_poll = per_poll
        self.log: list[str] = []

    def feasible(self, waypoints) -> tuple[bool, str]:
        return True, ""

    def observe(self) -> Observation:
        """A blank frame: the grasp plan is a service here, but a frame must still be one."""
        return Observation(np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.float32), np.eye(3), np.eye(4))

    def start(self, primitive: str, /, **kwargs) -> SteppedMotion:
        self.log.append(f"start {primitive}")
        n = [0]

        def so_far() -> Telemetry:
            return _prefix(self.tel, n[0])

        def steps():
            try:
                while n[0] < len(self.tel):
                    n[0] = min(len(self.tel), n[0] + self.per_poll)
                    yield
            except MotionHalted as halt:
                self.log.append(f"cancel {primitive}: {halt.fault} after {n[0]} samples")
                return Execution(so_far(), n[0] / self.per_poll * PERIOD, halt.fault)
            self.log.append(f"end {primitive}")
            return Execution(so_far(), n[0] / self.per_poll * PERIOD, None)

        return SteppedMotion(primitive, steps(), so_far, lambda: n[0] / self.per_poll * PERIOD)


def _run(text: str, robot: ReplayRobot):
    spec = tree(text)
    pose = SimpleNamespace(position=np.zeros(3), orientation=np.array([0.0, 0.0, 0.0, 1.0]), width=0.05)
    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec),
                     driver=robot, blackboard=Blackboard({"goal.object": "mug", "obj": SimpleNamespace(name="mug")}))
    ctx.services = Services(plan_grasps=lambda obs, located: [pose], thresholds=TH,
                            classify=lambda t: classify(t, TH))
    return Runner(spec, ctx).run(), ctx


# A reactive sequence: its condition is ticked again before the running grasp every tick, and
# halts the grasp once the grasp's Watchdog says EMPTY or STALL.
STOP_EARLY = """
    tree: stop_early
    root:
      selector:
        children:
          - sequence:
              memory: false
              children:
                - inverter:
                    child:
                      selector:
                        children:
                          - label_is: {key: "{g.label_so_far}", label: EMPTY}
                          - label_is: {key: "{g.label_so_far}", label: STALL}
                - grasp: {id: g, target: "{obj}"}
                - evaluate_grasp: {id: judge}
                - finalize: {reason: held}
          - wait_clarify: {reason: "the Watchdog stopped the grasp"}
"""


def test_a_reactive_condition_halts_a_grasp_its_watchdog_already_calls_empty() -> None:
    tel = synth_attempt(Label.EMPTY, np.random.default_rng(1))
    robot = ReplayRobot(tel)
    result, ctx = _run(STOP_EARLY, robot)
    assert result.decision == Decision.WAIT_CLARIFY and result.reason == "the Watchdog stopped the grasp"
    assert robot.log[0] == "start grasp" and robot.log[1].startswith("cancel grasp: ")
    [event] = result.events
    # preempted by its parent ("halted" from a sequence without memory, "preempted" from a reactive one)
    assert event.metadata["halted"] in ("halted", "preempted") and event.watchdog_label == "EMPTY"
    halted_after = event.metadata["samples"]
    assert halted_after < len(tel)  # stopped before the motion would have ended
    decided = LiveWatchdog(TH)
    decided.update(tel)
    # halted at the first poll after the label became final (the condition reads it next tick)
    assert halted_after - robot.per_poll <= decided.verdict.index + 1 <= halted_after
    assert ctx.blackboard.get("g.label_so_far") == "EMPTY"
    assert 0.0 < ctx.blackboard.get("g.label_so_far.confidence") <= 1.0


def test_a_grasp_that_holds_runs_to_the_end_and_evaluate_grasp_agrees_with_the_stream() -> None:
    tel = synth_attempt(Label.SUCCESS, np.random.default_rng(2))
    robot = ReplayRobot(tel)
    result, ctx = _run(STOP_EARLY, robot)
    assert result.decision == Decision.FINALIZE, result.reason
    assert robot.log == ["start grasp", "end grasp"]
    assert ctx.blackboard.get("g.label_so_far") == ctx.blackboard.get("grasp.label") == "SUCCESS"
    assert ctx.blackboard.get("g.label_so_far.confidence") == ctx.blackboard.get("grasp.label.confidence")


@pytest.mark.parametrize("label", [Label.SLIP, Label.STALL, Label.TIMEOUT])
def test_the_label_so_far_of_a_finished_grasp_is_the_batch_label(label: Label) -> None:
    tel = synth_attempt(label, np.random.default_rng(4))
    text = """
        tree: t
        root:
          sequence:
            children:
              - grasp: {id: g, target: "{obj}"}
              - evaluate_grasp: {id: judge}
              - finalize: {reason: judged}
    """
    _, ctx = _run(text, ReplayRobot(tel))
    assert ctx.blackboard.get("g.label_so_far") == ctx.blackboard.get("grasp.label") == classify(tel, TH).label.value


def test_a_grasp_halted_before_its_watchdog_decides_has_no_label() -> None:
    tel = synth_attempt(Label.SUCCESS, np.random.default_rng(2))
    text = """
        tree: t
        root:
          selector:
            children:
              - timeout:
                  seconds: 0.1
                  child:
                    grasp: {id: g, target: "{obj}"}
              - wait_clarify: {reason: "too slow"}
    """
    result, ctx = _run(text, ReplayRobot(tel))
    [event] = result.events
    assert event.metadata["halted"] == "timeout" and event.watchdog_label == "TIMEOUT"
    assert ctx.blackboard.get("g.label_so_far") is None
