"""The evaluate_grasp leaf: the Watchdog's label for the last grasp, written where trees route."""

from __future__ import annotations

from py_trees.common import Status

from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.outcomes import ExecStatus, Label

SEMANTIC_OUTCOMES = ("ok", "veto")


class EvaluateGrasp(Leaf):
    """Classify the grasp telemetry; with `semantic: true` a SUCCESS must also pass the semantic
    verifier (is the held object the target?) or the tree sees semantic_ok = false."""

    TYPE = "evaluate_grasp"
    SUCCESS_OUTCOMES = frozenset({Label.SUCCESS.value})

    def execute(self) -> LeafResult:
        execution = self.port("execution")
        if execution is None:
            return self._finish(Label.STALL.value, 1.0, {"reason": "no grasp was executed"}, None)
        verdict = self.ctx.services["classify"](execution.telemetry)
        label = verdict.label.value if hasattr(verdict.label, "value") else str(verdict.label)
        semantic_ok = None
        if label == Label.SUCCESS.value and self.port("semantic"):
            verifier = self.ctx.services.get("semantic_verifier")
            if verifier is not None:
                semantic_ok, reason = verifier(self.ctx)
                verdict.evidence["semantic_reason"] = reason
        return self._finish(label, float(verdict.confidence), dict(verdict.evidence), semantic_ok)

    def simulate(self, outcome: str) -> LeafResult:
        semantic_ok = None
        if outcome == Label.SUCCESS.value and self.port("semantic"):
            semantic_ok = self.ctx.oracle.choose(f"{self.node_id}#semantic", SEMANTIC_OUTCOMES) == "ok"
        return self._finish(outcome, 1.0, {"rule": "chosen by verifier"}, semantic_ok)

    def _finish(self, label: str, confidence: float, evidence: dict, semantic_ok: bool | None) -> LeafResult:
        key = self.out_key("label")
        writes = {f"{key}": label, f"{key}.confidence": round(confidence, 4),
                  f"{key}.evidence": evidence}
        if self.port("semantic"):
            # "ok" | "veto" | "unchecked" (no verifier available) | "n/a" (label is not SUCCESS)
            writes[f"{key}.semantic"] = ("n/a" if label != Label.SUCCESS.value else
                                         "unchecked" if semantic_ok is None else
                                         "ok" if semantic_ok else "veto")
            writes[f"{key}.semantic_ok"] = bool(semantic_ok)
        ok = label == Label.SUCCESS.value and semantic_ok is not False
        status = ExecStatus.SUCCESS if ok else (
            ExecStatus.WAIT_CLARIFY if semantic_ok is False and label == Label.SUCCESS.value
            else ExecStatus.FAIL)
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
