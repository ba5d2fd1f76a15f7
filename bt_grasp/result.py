"""What an episode ended with: the decision, its reason and what the run spent.

A leaf module (it needs only bt_grasp.outcomes) so that the runner, its observers and the trace
writer can all name it without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bt_grasp.outcomes import Decision, OutcomeEvent


@dataclass
class EpisodeResult:
    decision: Decision
    reason: str
    ticks: int
    clock: float
    wall: float
    actions: int
    action_budget: int
    counters: dict[str, Any]
    events: list[OutcomeEvent] = field(default_factory=list)
    exit_code: int = 0
    robot: str = ""  # the robot profile's name, when the run knows it (a set-up failure names it)

    def summary_line(self) -> str:
        return (f"{self.decision.value}: {self.reason} | actions {self.actions}/{self.action_budget}"
                f" | ticks {self.ticks} | sim {self.clock:.1f} s | wall {self.wall:.1f} s")

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.decision.value, "reason": self.reason, "ticks": self.ticks,
                "clock": round(self.clock, 4), "wall": round(self.wall, 3), "actions": self.actions,
                "action_budget": self.action_budget, "counters": self.counters,
                "events": [e.model_dump(mode="json") for e in self.events]}
