"""The Watchdog in the tree: evaluate_grasp (the label of the last grasp, written where trees
route), WatchedMotion (the label so far of a grasp still running, for reactive conditions) and
WatchedGrasp (the grasp leaves that run one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from py_trees.common import Status

from bt_grasp.aim_memory import note_wrong_hold
from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.capabilities import Motion
from bt_grasp.drivers.motion import HALTED
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.declare import key_port, leaf_type, sub_entries
from bt_grasp.outcomes import LABELS, ExecStatus, Label
from bt_grasp.registry import KeyUse, Port
from bt_grasp.watchdog.live import LiveWatchdog
from bt_grasp.watchdog.telemetry import Telemetry
from bt_grasp.watchdog.verdict import Verdict

SEMANTIC_OUTCOMES = ("ok", "mismatch", "unknown")


def as_verdict(answer: object) -> str:
    """A semantic verifier's first return value as ok / mismatch / unknown (a bool is ok or
    mismatch, None is unknown): no evidence is never ok."""
    if answer is True:
        return "ok"
    if answer is False:
        return "mismatch"
    return str(answer) if answer in SEMANTIC_OUTCOMES else "unknown"


class EvaluateGrasp(Leaf):
    """Classify the grasp telemetry; with `semantic: true` a SUCCESS is also checked by the
    semantic verifier (is the held object the target?): `{label}.semantic` is ok, mismatch or
    unknown, and only ok lets the leaf succeed."""

    NODE_TYPE = leaf_type("evaluate_grasp", "watchdog", {
        "execution": Port("execution", "str", default="{grasp.execution}",
                          doc="the grasp Execution to judge"),
        "label": key_port("label", "grasp.label", "where the Watchdog label is written"),
        "semantic": Port("semantic", "bool", default=False,
                         doc="after SUCCESS, re-perceive to check the held object is the target"),
    }, outcomes=LABELS, outcome_port="label",
        doc="Watchdog: turn the grasp telemetry into SUCCESS/EMPTY/SLIP/WEAK/STALL/TIMEOUT.",
        keys=(*sub_entries("label", "confidence", "evidence", "semantic", "semantic_ok"),
                       KeyUse("located", "target", "input", "semantic check: the located target"),
                       KeyUse("located_query", "target.query", "input", "semantic check: its text"),
                       KeyUse("located_frame", "target.frame", "input", "semantic check: its frame")))
    SUCCESS_OUTCOMES = frozenset({Label.SUCCESS.value})

    def execute(self) -> LeafResult:
        execution = self.port("execution")
        if execution is None:
            return self._finish(Label.STALL.value, 1.0, {"reason": "no grasp was executed"}, None)
        verdict = self.ctx.services.classify(execution.telemetry)
        label = verdict.label.value if hasattr(verdict.label, "value") else str(verdict.label)
        semantic: str | None = None
        if label == Label.SUCCESS.value and self.port("semantic"):
            verifier = self.ctx.services.semantic_verifier
            if verifier is None:
                semantic, reason = "unknown", "no semantic verifier configured"
            else:
                answer, reason = verifier(self.ctx)
                semantic = as_verdict(answer)
                if semantic == "mismatch" and getattr(verifier, "perceptual", False):
                    # learned from the robot's own re-perception only: a verifier that reads the
                    # simulator's ground truth (a test oracle) routes the tree but teaches nothing
                    note_wrong_hold(self.ctx.memory)
            verdict.evidence["semantic_reason"] = reason
        return self._finish(label, float(verdict.confidence), dict(verdict.evidence), semantic)

    def simulate(self, outcome: str) -> LeafResult:
        semantic = None
        if outcome == Label.SUCCESS.value and self.port("semantic"):
            assert self.ctx.oracle is not None  # simulate() runs only under the verifier's oracle
            semantic = self.ctx.oracle.choose(f"{self.node_id}#semantic", SEMANTIC_OUTCOMES)
        return self._finish(outcome, 1.0, {"rule": "chosen by verifier"}, semantic)

    def _finish(self, label: str, confidence: float, evidence: dict, semantic: str | None) -> LeafResult:
        key = self.out_key("label")
        writes = {f"{key}": label, f"{key}.confidence": round(confidence, 4),
                  f"{key}.evidence": evidence}
        success = label == Label.SUCCESS.value
        if self.port("semantic"):
            # "ok" | "mismatch" | "unknown" after SUCCESS; "n/a" when the label is not SUCCESS
            writes[f"{key}.semantic"] = semantic if success and semantic else "n/a"
            writes[f"{key}.semantic_ok"] = semantic == "ok"
        ok = success and (semantic is None or semantic == "ok")
        status = ExecStatus.SUCCESS if ok else (
            ExecStatus.WAIT_CLARIFY if success else ExecStatus.FAIL)
        self._attach_to_event(label, confidence, status, evidence)
        return LeafResult(label, Status.SUCCESS if ok else Status.FAILURE, writes,
                          answers={"semantic": semantic} if success and semantic else {})

    def _attach_to_event(self, label: str, confidence: float, status: ExecStatus, evidence: dict) -> None:
        """Complete the grasp attempt's event with the Watchdog verdict (one event per attempt)."""
        ctx = self.ctx
        grasp_events = [e for e in ctx.events if e.primitive == "grasp"]
        if grasp_events:
            event = grasp_events[-1]
            event.watchdog_label = label
            event.confidence = round(confidence, 4)
            event.exec_status = status
            event.metadata["watchdog"] = {k: v for k, v in evidence.items() if k != "window"}
        else:
            ctx.emit(self.node_id, "evaluate_grasp", status, label, round(confidence, 4),
                     {"watchdog": evidence})


def label_of(verdict: Verdict | None) -> str | None:
    if verdict is None:
        return None
    return verdict.label.value if hasattr(verdict.label, "value") else str(verdict.label)


class WatchedMotion:
    """A grasp motion read by a LiveWatchdog at every poll.

    Each poll feeds the new telemetry samples; the label so far (None until one is final) and
    its confidence are published as `{key}.label_so_far` / `{key}.label_so_far.confidence`, so a
    condition in a reactive parent can stop the grasp the tick after the Watchdog has decided.
    A finished attempt publishes its final verdict, which equals the batch classifier's.
    """

    def __init__(self, motion: Motion, watchdog: LiveWatchdog, key: str,
                 publish: Callable[[str, Any], None]) -> None:
        self.motion = motion
        self.primitive = motion.primitive
        self.watchdog = watchdog
        self.key = f"{key}.label_so_far"
        self._publish = publish
        self._shown: tuple[str | None, float | None] | None = None
        self._show(None)

    def poll(self) -> Execution | None:
        execution = self.motion.poll()
        if execution is None:
            self._show(self.watchdog.update(self.motion.telemetry()))
        else:
            self._show(self.watchdog.final(execution.telemetry))
        return execution

    def cancel(self, fault: str = HALTED) -> Execution:
        execution = self.motion.cancel(fault)
        self._show(self.watchdog.update(execution.telemetry))
        return execution

    def telemetry(self) -> Telemetry:
        return self.motion.telemetry()

    @property
    def elapsed(self) -> float:
        return self.motion.elapsed

    @property
    def label(self) -> str | None:
        """The label reached so far (None: nothing final yet)."""
        return label_of(self.watchdog.verdict)

    def _show(self, verdict: Verdict | None) -> None:
        shown = (label_of(verdict), round(float(verdict.confidence), 4) if verdict is not None else None)
        if shown != self._shown:  # write only on change: the trace logs every blackboard write
            self._shown = shown
            self._publish(self.key, shown[0])
            self._publish(f"{self.key}.confidence", shown[1])


class WatchedGrasp(Leaf):
    """A grasp leaf (grasp, pick) whose running motion a streaming Watchdog reads: `live` is the
    current attempt, and a preempted attempt is labelled with what its Watchdog had decided."""

    MAX_CANDIDATES = 8  # planned grasps checked for feasibility before the leaf gives up
    live: WatchedMotion | None = None  # the running attempt under its streaming Watchdog

    def watched(self, motion: Motion) -> WatchedMotion:
        """The grasp motion under a streaming Watchdog: `{id}.label_so_far` while it runs."""
        live = LiveWatchdog(self.ctx.services.thresholds)
        self.live = WatchedMotion(motion, live, self.node_id, self.ctx.blackboard.set)
        return self.live

    def halt_label(self, execution: Execution | None) -> str | None:
        """A preempted grasp is labelled with what its Watchdog had decided (None: nothing yet)."""
        return self.live.label if self.live is not None else None
