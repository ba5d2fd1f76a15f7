"""The vocabulary every part of bt_grasp shares: Watchdog labels, execution status, decisions, events."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field


class Label(str, enum.Enum):
    """What the Watchdog concluded about one grasp attempt."""

    SUCCESS = "SUCCESS"
    EMPTY = "EMPTY"
    SLIP = "SLIP"
    WEAK = "WEAK"
    STALL = "STALL"
    TIMEOUT = "TIMEOUT"


LABELS: tuple[str, ...] = tuple(label.value for label in Label)


class ExecStatus(str, enum.Enum):
    """How a primitive attempt ended from the tree's point of view."""

    SUCCESS = "SUCCESS"
    FAIL = "FAIL"
    WAIT_CLARIFY = "WAIT_CLARIFY"


class Decision(str, enum.Enum):
    """The two terminal decisions an episode can end in."""

    FINALIZE = "FINALIZE"
    WAIT_CLARIFY = "WAIT_CLARIFY"


class OutcomeEvent(BaseModel):
    """One primitive attempt, as recorded in the trace and handed to observers."""

    trial_id: str
    node: str
    primitive: str
    watchdog_label: str | None = None
    confidence: float | None = None
    exec_status: ExecStatus
    clock: float = Field(description="logical clock (seconds) when the attempt ended")
    wall_time: float = Field(default_factory=time.time)
    metadata: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class LeafCall:
    """One leaf call that finished with an outcome, as the leaf itself reports it: the node id,
    the outcome it answered, the ticks the call spanned (1 when it ended in the tick it started)
    and the answers to its sub-questions (a Watchdog's semantic verdict: {"semantic": "ok"})."""

    node: str
    outcome: str
    ticks: int
    answers: dict[str, str] = field(default_factory=dict)
