"""The run's one-line summary and JSON result: the decision, with the goal it answers and the
last Watchdog label (why a "safe stop" stopped) — what a user otherwise opens the trace for."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bt_grasp.observers import Record, RunObserver
from bt_grasp.outcomes import OutcomeEvent
from bt_grasp.result import EpisodeResult


class GoalSeen(RunObserver):
    """Keeps the goal text the episode started with (from --goal, the tree's goal: or the scene)."""

    def __init__(self) -> None:
        self.goal: str | None = None

    def started(self, header: Record, ctx: Any) -> None:
        goal = ctx.blackboard.get("goal.text")
        self.goal = str(goal) if goal is not None else None


def last_watchdog_label(events: Iterable[OutcomeEvent]) -> str | None:
    """The label of the last attempt the Watchdog judged (None when it judged none)."""
    labels = [e.watchdog_label for e in events if e.watchdog_label]
    return labels[-1] if labels else None


def summary_line(result: EpisodeResult, goal: str | None) -> str:
    """EpisodeResult.summary_line with the goal and the last Watchdog label after the reason."""
    head = f"{result.decision.value}: {result.reason}"
    line = result.summary_line()
    extra = f' | goal "{goal}"' if goal else ""
    extra += f" | watchdog {last_watchdog_label(result.events) or '-'}"
    return head + extra + line[len(head):] if line.startswith(head) else line + extra


def result_json(result: EpisodeResult, goal: str | None) -> dict[str, Any]:
    """EpisodeResult.to_json with the goal and the last Watchdog label."""
    return {**result.to_json(), "goal": goal, "watchdog_label": last_watchdog_label(result.events)}
