"""The user on the other end of `ask`: a rule-based simulated user, or a terminal prompt on hardware.

Rules of the simulated user (pinned in tests/test_mobile_units.py), chosen so that an agent can
only succeed by perceiving and asking, never by being handed the answer:
- it holds the goal (an instruction and the catalogue names that satisfy it);
- it never reveals where the target is (no receptacle names, no coordinates);
- it names or describes the target only after the robot has reported seeing it;
- it never speaks the robot's internal marker ids (answers carry no digits);
- it may revise the instruction mid-run: once it has seen `after_reports` robot reports and then
  `delay_s` more seconds pass on its clock (the world's time: a person speaks whenever they
  like, also while the robot is moving), delivered once through `poll()`, which the tree's
  reactive guard (`listen`) reads every tick.
The user judges which listed item is its target from ground truth (the simulator's names), as
a person looking at the robot's numbered overlay would.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np


@dataclass
class SeenItem:
    """One numbered item the robot shows the user: its description, image position and mask.

    `true_name` and `body` are what the person looking at the overlay knows (simulator ground
    truth); the robot never fills them — a simulated user reads them off the frame's annotations
    under the mark's mask (`identify`)."""

    marker: int
    description: str
    true_name: str | None
    point2d: tuple[float, float]
    colour: str | None = None
    category: str | None = None
    body: int | None = None  # simulator instance id (ground truth), when known
    mask: Any = None  # HxW bool: the mark on the overlay
    observation: Any = None  # the frame the overlay was drawn on


def identify(s: SeenItem) -> SeenItem:
    """Fill true_name/body/colour/category from the frame's instance annotations under the mask
    (the person sees which real object is marked). Unchanged when the frame has no annotations."""
    ann = getattr(s.observation, "annotations", None) or {}
    inst, objects = ann.get("instance"), ann.get("objects") or {}
    if s.body is not None or s.mask is None or inst is None:
        return s
    ids = np.asarray(inst)[np.asarray(s.mask, dtype=bool)]
    ids = ids[np.isin(ids, [int(k) for k in objects])]
    if not len(ids):
        return replace(s, true_name=None)
    vals, counts = np.unique(ids, return_counts=True)
    body = int(vals[int(np.argmax(counts))])
    info = objects.get(body) or objects.get(str(body)) or {}
    return replace(s, body=body, true_name=info.get("name"), colour=info.get("colour", s.colour),
                   category=info.get("category", s.category))


class User(Protocol):
    def instruction(self) -> str: ...

    def report_seen(self, seen: list[SeenItem]) -> None: ...

    def answer(self, question: str, seen: list[SeenItem]) -> str: ...

    def poll(self) -> str | None: ...


@dataclass
class Revision:
    """The user changes its mind: `delay_s` seconds (of the user's clock) after the robot's
    `after_reports`-th report of what it sees; without a delay, at that report."""

    after_reports: int
    instruction: str
    targets: frozenset[str]
    delay_s: float | None = None


@dataclass
class SimulatedUser:
    """Rule-based user holding `goal` (instruction text) and `targets` (accepted object names)."""

    goal: str
    targets: frozenset[str]
    revision: Revision | None = None
    target_bodies: frozenset[int] | None = None  # which instances, when identical objects differ only by place
    reports: int = 0
    saw_target: bool = False
    log: list[tuple[str, str]] = field(default_factory=list)  # (speaker, text)
    clock: Callable[[], float] | None = None  # the user's time (the simulated world's); needed by delay_s
    revised_at: float | None = None  # the user's time when it spoke the revision
    _pending: str | None = None
    _due: float | None = None  # when the revision will be spoken

    def __post_init__(self) -> None:
        rv = self.revision
        if rv is not None and rv.after_reports == 0 and rv.delay_s is not None and self.clock is not None:
            self._due = self._now() + rv.delay_s  # counted from the start: the user needs no report

    def instruction(self) -> str:
        return self.goal

    def report_seen(self, seen: list[SeenItem]) -> None:
        seen = [identify(s) for s in seen]
        self.reports += 1
        if any(self.is_target(s) for s in seen):
            self.saw_target = True
        self.speak_if_due()

    def _now(self) -> float:
        return float(self.clock()) if self.clock is not None else 0.0

    def speak_if_due(self) -> None:
        """Revise now if its time has come. The user speaks whether or not the robot listens:
        a harness calls this at the end of a run to know what the user wanted by then."""
        rv = self.revision
        if rv is None or self.reports < rv.after_reports or self.goal == rv.instruction:
            return
        if rv.delay_s is not None:
            if self._due is None:
                self._due = self._now() + rv.delay_s
            if self._now() < self._due:
                return
        self.goal, self.targets, self.saw_target = rv.instruction, rv.targets, False
        self.target_bodies = None
        self._pending = rv.instruction
        self.revised_at = self._due if self._due is not None else self._now()  # when it spoke
        self.log.append(("user", f"Actually, {rv.instruction}"))

    def is_target(self, s: SeenItem) -> bool:
        if self.target_bodies is not None and s.body is not None:
            return s.body in self.target_bodies
        return s.true_name in self.targets

    def poll(self) -> str | None:
        """The revised instruction, once (at the first poll after the user spoke); None otherwise."""
        self.speak_if_due()
        out, self._pending = self._pending, None
        return out

    def answer(self, question: str, seen: list[SeenItem]) -> str:
        self.log.append(("robot", question))
        seen = [identify(s) for s in seen]
        self.report_seen(seen)
        text = self._answer(seen)
        assert not re.search(r"\d", text), "the simulated user never speaks marker ids"
        self.log.append(("user", text))
        return text

    def _answer(self, seen: list[SeenItem]) -> str:
        hits = [s for s in seen if self.is_target(s)]
        if not hits:
            return "No, I don't see what I asked for among those."
        if len(hits) > 1:
            return "Any of those is fine."
        t = hits[0]
        others = [s for s in seen if not self.is_target(s)]
        if t.colour and all(o.colour != t.colour for o in others):
            return f"The {t.colour} one."
        same = [o for o in others if o.colour == t.colour] or others
        du = [o.point2d[0] - t.point2d[0] for o in same]
        dv = [o.point2d[1] - t.point2d[1] for o in same]
        if all(d > 0.02 for d in du):
            return "The one on the left."
        if all(d < -0.02 for d in du):
            return "The one on the right."
        if all(d < -0.02 for d in dv):
            return "The one in front."
        if all(d > 0.02 for d in dv):
            return "The one at the back."
        return f"The {t.true_name}."


class TerminalUser:
    """Hardware: the question is shown and the operator types the answer. Everything shown goes
    to stderr, so stdout keeps only the run's result (`bt-grasp run --json` stays one document)."""

    def instruction(self) -> str:
        return _prompt("Instruction for the robot: ")

    def report_seen(self, seen: list[SeenItem]) -> None:
        print("Robot sees: " + ", ".join(f"{s.marker}: {s.description}" for s in seen), file=sys.stderr)

    def answer(self, question: str, seen: list[SeenItem]) -> str:
        return _prompt(f"{question}\n> ")

    def poll(self) -> str | None:
        return None


def _prompt(text: str) -> str:
    """Ask on stderr, read one line from stdin ("" when there is no more input)."""
    sys.stderr.write(text)
    sys.stderr.flush()
    return sys.stdin.readline().strip()
