"""The mobile leaves that talk with the user: ask (an answer resolved to one marker, never by
ids) and listen (a revised instruction rewrites the goal)."""

from __future__ import annotations

from typing import Any

from bt_grasp.drivers.capabilities import UserChannel
from bt_grasp.mobile.som import Mark
from bt_grasp.mobile.user import TerminalUser
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.declare import key_port, leaf_type
from bt_grasp.nodes.mobile_marks import _marks, _seen, inventory_text
from bt_grasp.perception.query import parse
from bt_grasp.registry import KeyUse, Port


def _user(ctx: Any) -> Any:
    """The user channel: ctx.services.user, else the driver's simulated user, else a terminal."""
    driver_user = ctx.driver.user if isinstance(ctx.driver, UserChannel) else None
    return ctx.services.user or driver_user or TerminalUser()


class Ask(Leaf):
    """Ask about the shown objects; resolve the answer to one marker (colour words, spatial words,
    "any"), never by ids. Writes objects.best on success."""

    NODE_TYPE = leaf_type("ask", "action", {
        "question": Port("question", "str", default="Which one do you mean?", doc="asked with the inventory"),
        "answer": key_port("answer", "ask.answer", "where the user's answer is written"),
        "outcome": key_port("outcome", "ask.outcome", "resolved | unresolved"),
    }, outcomes=("resolved", "unresolved"), outcome_port="outcome",
        doc="Ask the user about the shown objects; a resolving answer sets objects.best.",
        keys=(KeyUse("question_asked", "{id}.question", "output", "the question as asked"),
            KeyUse("best", "objects.best", "output", "the marker the answer resolves to")))
    SUCCESS_OUTCOMES = frozenset({"resolved"})

    def execute(self) -> LeafResult:
        ctx = self.ctx
        marks = _marks(ctx, "object")
        question = f"{self.port('question')} I see {inventory_text(marks) or 'nothing that matches'}."
        answer = _user(ctx).answer(question, _seen(marks))
        best = resolve_answer(answer, marks)
        writes = {self.out_key("answer"): answer, f"{self.node_id}.question": question}
        if best is None:
            return self.result("unresolved", writes, 1.0)
        writes["objects.best"] = best
        return self.result("resolved", writes, 1.0)

    def simulate(self, outcome: str) -> LeafResult:
        return self.result(outcome, {"objects.best": 0} if outcome == "resolved" else {}, 1.0)


def resolve_answer(answer: str, marks: dict[int, Mark]) -> int | None:
    """The marker an answer picks out, or None (a refusal, or still ambiguous)."""
    text = answer.lower()
    if not marks or any(w in text for w in ("don't see", "do not see", "none", "neither")):
        return None
    if any(w in text for w in ("any", "either", "whichever")):
        return min(marks)
    q = parse(text)
    cand = [m for m in marks.values() if q.colour is None or m.attributes.get("colour") == q.colour]
    if q.category is not None:
        cand = [m for m in cand if m.attributes.get("category") == q.category] or cand
    if q.superlative == "left":
        cand = [min(cand, key=lambda m: m.point2d[0])] if cand else cand
    elif q.superlative == "right":
        cand = [max(cand, key=lambda m: m.point2d[0])] if cand else cand
    elif q.superlative == "front":
        cand = [max(cand, key=lambda m: m.point2d[1])] if cand else cand
    elif q.superlative == "back":
        cand = [min(cand, key=lambda m: m.point2d[1])] if cand else cand
    names = {m.name for m in cand}
    if len(cand) == 1 or (cand and len(names) == 1 and any(n in text for n in names)):
        return cand[0].marker
    return None


class Listen(Leaf):
    """Reactive guard: a revised instruction from the user rewrites goal.text / goal.object."""

    NODE_TYPE = leaf_type("listen", "action", {
        "outcome": key_port("outcome", "listen.outcome", "same | revised"),
    }, outcomes=("same", "revised"), outcome_port="outcome",
        doc="Reactive guard on the user channel: a revised instruction rewrites goal.* and fails.",
        keys=(KeyUse("goal_text", "goal.text", "output", "the revised instruction"),
               KeyUse("goal_object", "goal.object", "output", "the revised object text"),
               KeyUse("revisions_before", "goal.revisions", "input", "revisions so far"),
               KeyUse("goal_revisions", "goal.revisions", "output", "revisions, this one counted")))
    SUCCESS_OUTCOMES = frozenset({"same"})

    def execute(self) -> LeafResult:
        from bt_grasp.goal_text import goal_object

        user = _user(self.ctx)
        new = user.poll() if hasattr(user, "poll") else None
        if not new:
            return self.result("same")
        return self.result("revised", {"goal.text": new, "goal.object": goal_object(new),
                                       "goal.revisions": int(self.ctx.blackboard.get("goal.revisions") or 0) + 1})
