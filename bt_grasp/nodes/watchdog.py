"""The evaluate_grasp leaf: the Watchdog's label for the last grasp, written where trees route."""

from __future__ import annotations

from py_trees.common import Status

from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.outcomes import ExecStatus, Label

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

    TYPE = "evaluate_grasp"
    SUCCESS_OUTCOMES = frozenset({Label.SUCCESS.value})

    def execute(self) -> LeafResult:
        execution = self.port("execution")
        if execution is None:
            return self._finish(Label.STALL.value, 1.0, {"reason": "no grasp was executed"}, None)
        verdict = self.ctx.services["classify"](execution.telemetry)
        label = verdict.label.value if hasattr(verdict.label, "value") else str(verdict.label)
        semantic: str | None = None
        if label == Label.SUCCESS.value and self.port("semantic"):
            verifier = self.ctx.services.get("semantic_verifier")
            if verifier is None:
                semantic, reason = "unknown", "no semantic verifier configured"
            else:
                answer, reason = verifier(self.ctx)
                semantic = as_verdict(answer)
            verdict.evidence["semantic_reason"] = reason
        return self._finish(label, float(verdict.confidence), dict(verdict.evidence), semantic)

    def simulate(self, outcome: str) -> LeafResult:
        semantic = None
        if outcome == Label.SUCCESS.value and self.port("semantic"):
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
        return LeafResult(label, Status.SUCCESS if ok else Status.FAILURE, writes)

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
