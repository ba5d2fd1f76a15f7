"""Mobile-manipulation tools as leaves: nav_to, walk_around, show_object_by_category,
show_receptacles, gaze_at, pick, place_on, open, close, ask, listen, finish.

They talk to the world only through ctx.driver, ctx.perceiver and ctx.services, like every other
leaf, and use of the driver only what bt_grasp/drivers/base.py declares (Driver, MobileBase, Head,
Articulated, Located, UserChannel, ReceptacleAnnotator): a driver lacking a protocol gets the
leaf's documented fallback, never an AttributeError. Markers are the integer ids of
the last Set-of-Mark overlay of their kind; the mapping lives in ctx.services (with the located
objects) and, JSON-friendly, on the blackboard (`objects.marks`, `receptacles.marks`). A marker
that is unknown, or was drawn before the robot last moved, is the outcome `stale_marker` — never
an exception — so trees can route on it.

Receptacle marks come from the simulator's instance ids (ReceptacleAnnotator) only when the
perceiver is the sim annotator; otherwise (geometric perception, or a driver without them) the only
receptacle shown is the one the robot stands at (Located), which is what a real robot's map
provides.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.base import (
    Articulated,
    Execution,
    Head,
    Located,
    MobileBase,
    ReceptacleAnnotator,
    UserChannel,
)
from bt_grasp.drivers.motion import start_motion
from bt_grasp.mobile.som import MATCH_MIN, LexicalMatcher, Mark, marks_dir, overlay
from bt_grasp.mobile.user import SeenItem, TerminalUser
from bt_grasp.nodes.base import Leaf, LeafResult, Pending
from bt_grasp.nodes.perception import PERCEPTION_SECONDS
from bt_grasp.nodes.primitives import _exec_meta, check_grasp
from bt_grasp.nodes.terminal import Finalize
from bt_grasp.nodes.watchdog import WatchedMotion
from bt_grasp.perception.grounding import parse
from bt_grasp.watchdog.live import LiveWatchdog

SHOWN = "mobile.scene.object"  # ctx.services: (observation, scene graph) of the last object overlay
VIEW = "mobile.view"  # ctx.services: increments whenever the base moves (marks drawn before are stale)


def _png_name(node_id: str, tick: int) -> str:
    """Overlay file name: included node ids contain '/', which must not become folders."""
    return f"{node_id.replace('/', '__')}_t{tick}.png"


def _view(ctx: Any) -> int:
    return int(ctx.services.get(VIEW, 0))


def _marks(ctx: Any, kind: str) -> dict[int, Mark]:
    return ctx.services.setdefault(f"mobile.marks.{kind}", {})


def _user(ctx: Any) -> Any:
    """The user channel: ctx.services["user"], else the driver's simulated user, else a terminal."""
    driver_user = ctx.driver.user if isinstance(ctx.driver, UserChannel) else None
    return ctx.services.get("user") or driver_user or TerminalUser()


def _lookup(ctx: Any, kind: str, marker: Any) -> tuple[Mark | None, str]:
    """(mark, "") or (None, why it is stale/unknown)."""
    try:
        mid = int(marker)
    except (TypeError, ValueError):
        return None, f"not a marker id: {marker!r}"
    mark = _marks(ctx, kind).get(mid)
    if mark is None:
        return None, f"unknown {kind} marker {mid}"
    if mark.view != _view(ctx):
        return None, f"{kind} marker {mid} was drawn before the robot moved"
    return mark, ""


def _motion_outcome(ex: Execution) -> str:
    if ex.fault is None:
        return "done"
    return "infeasible" if ex.fault.startswith(("infeasible", "blocked")) else "fault"


def _seen(marks: dict[int, Mark]) -> list[SeenItem]:
    """What the user is shown: each mark's description, image position and mask (the overlay)."""
    return [SeenItem(m.marker, f"a {m.name}", None, m.point2d, m.attributes.get("colour"), m.attributes.get("category"),
                     None, getattr(m.located, "mask", None), m.observation) for m in marks.values()]


def inventory_text(marks: dict[int, Mark]) -> str:
    return ", ".join(f"{k}: a {m.name}" for k, m in sorted(marks.items()))


class NavTo(Leaf):
    """Drive to the receptacle's standoff; every mark drawn before becomes stale."""

    TYPE = "nav_to"
    SUCCESS_OUTCOMES = frozenset({"arrived"})

    def execute(self) -> LeafResult | Pending:
        ctx = self.ctx
        name = str(self.port("receptacle"))
        if not isinstance(ctx.driver, MobileBase):
            return self.result("unreachable", event_meta={"reason": "driver has no MobileBase"})
        motion = start_motion(ctx.driver, "nav_to", place=name, timeout=ctx.remaining_time())
        ctx.services[VIEW] = _view(ctx) + 1  # the base moves from now on: marks drawn before are stale

        def finish(ex: Execution) -> LeafResult:
            outcome = "arrived" if ex.fault is None else ("unreachable" if ex.fault.startswith("infeasible") else "fault")
            writes = {"nav.at": name if outcome == "arrived" else None}
            return self.result(outcome, writes, ex.duration, {**ex.info, "fault": ex.fault, "receptacle": name})

        return Pending(motion, finish, halt_writes=lambda ex: {"nav.at": None})  # halted on the way


def _survey(leaf: Leaf):
    from bt_grasp.nodes.perception import observe_and_survey

    return observe_and_survey(leaf)


def _object_marks(leaf: Leaf, objs: list, obs: Any, scene: Any) -> dict[int, Mark]:
    ctx = leaf.ctx
    marks: dict[int, Mark] = {}
    from bt_grasp.perception.assemble import to_located

    for k, o in enumerate(objs):
        located = to_located(obs, scene, o, 1.0, 1)
        pts = located.points_base if located is not None else np.zeros((0, 3))
        marks[k] = Mark(k, "object", o.name, _view(ctx), pts.mean(0) if len(pts) else None, located, obs,
                        tuple(o.point2d), dict(o.attributes))
    return marks


class ShowObjectByCategory(Leaf):
    """Mark the objects matching a category; one -> best is it, many -> ask, none -> search on."""

    TYPE = "show_object_by_category"
    SUCCESS_OUTCOMES = frozenset({"one", "many"})

    def execute(self) -> LeafResult:
        ctx = self.ctx
        query = str(self.port("category") or "")
        obs, scene = _survey(self)
        matcher = ctx.services.get("category_matcher") or LexicalMatcher()
        objs = list(scene.objects)
        if self.port("condition"):
            objs = [o for o in objs if matcher.score(query, o) >= MATCH_MIN]
        # markers are numbered by visibility: marker 0 (objects.best) is the most visible match
        objs.sort(key=lambda o: -float(o.attributes.get("pixels", 0)))
        marks = _object_marks(self, objs, obs, scene)
        ctx.services["mobile.marks.object"] = marks
        ctx.services[SHOWN] = (obs, scene)
        key = self.out_key("result")
        png = None
        if marks:
            png = str(overlay(obs.rgb, [m.located.mask for m in marks.values()],
                              marks_dir(ctx) / _png_name(self.node_id, ctx.tick)))
        if marks:  # the robot reports what it sees (the user may now name the target)
            _user(ctx).report_seen(_seen(marks))
        outcome = "none" if not marks else ("one" if len(marks) == 1 or not self.port("condition") else "many")
        writes = {f"{key}.marks": {k: m.name for k, m in marks.items()}, f"{key}.best": 0 if marks else None,
                  f"{key}.count": len(marks), f"{key}.inventory": inventory_text(marks), f"{key}.image": png,
                  f"{key}.query": query}
        return self.result(outcome, writes, PERCEPTION_SECONDS)

    def simulate(self, outcome: str) -> LeafResult:
        key = self.out_key("result")
        return self.result(outcome, {f"{key}.best": None if outcome == "none" else 0}, PERCEPTION_SECONDS)


class WalkAround(Leaf):
    """Survey the current receptacle from `views` head pans; merge objects seen twice (3D < 5 cm).

    A driver without a Head observes `views` times from where it looks (no panning)."""

    TYPE = "walk_around"
    SUCCESS_OUTCOMES = frozenset({"found"})
    HOME_PAN = -1.5708  # the ready pose looks along -y, where the arm reaches
    LOOK_TIMEOUT_S = 3.0

    def execute(self) -> LeafResult:
        ctx = self.ctx
        n = int(self.port("views"))
        pans = np.linspace(-1.9, -1.25, n) if n > 1 else [self.HOME_PAN]
        found: list[tuple[str, np.ndarray]] = []
        from bt_grasp.perception.assemble import to_located

        head = ctx.driver if isinstance(ctx.driver, Head) else None
        looked = 0.0
        faults: list[str] = []
        for pan in pans:
            if head is not None:
                ex = head.look(float(pan), timeout=self.LOOK_TIMEOUT_S)
                looked += ex.duration
                if ex.fault:
                    faults.append(f"pan {pan:.2f}: {ex.fault}")
            obs = ctx.driver.observe()
            scene = ctx.perceiver.survey(obs)
            for o in scene.objects:
                loc = to_located(obs, scene, o, 1.0, 1)
                if loc is None or not len(loc.points_base):
                    continue
                c = loc.points_base.mean(0)
                if all(np.linalg.norm(c - q) > 0.05 for _, q in found):
                    found.append((o.name, c))
        if head is not None:
            ex = head.look(self.HOME_PAN, timeout=self.LOOK_TIMEOUT_S)
            looked += ex.duration
            if ex.fault:
                faults.append(f"home: {ex.fault}")
        key = self.out_key("result")
        text = ", ".join(f"{k}: a {name}" for k, (name, _) in enumerate(found))
        meta = {"head_pans": len(pans) if head is not None else 0, "look_faults": faults}
        return self.result("found" if found else "not_found", {key: text, f"{key}.count": len(found)},
                           PERCEPTION_SECONDS * n + looked, meta)


class ShowReceptacles(Leaf):
    """Mark the receptacles in view; `target` picks receptacles.best by text similarity."""

    TYPE = "show_receptacles"
    SUCCESS_OUTCOMES = frozenset({"found"})

    def execute(self) -> LeafResult:
        import difflib

        ctx = self.ctx
        obs = ctx.driver.observe()
        inst = (obs.annotations or {}).get("instance")
        masks: list[np.ndarray] = []
        names: list[str] = []
        annotated = isinstance(ctx.driver, ReceptacleAnnotator) and getattr(ctx.perceiver, "name", "") == "sim"
        if annotated and inst is not None:
            for name, body in ctx.driver.receptacle_bodies().items():
                m = inst == body
                if m.sum() >= 50:
                    names.append(name)
                    masks.append(m)
        elif isinstance(ctx.driver, Located) and (here := ctx.driver.located_at()):
            names, masks = [here], [np.zeros(obs.depth.shape, dtype=bool)]
        marks = {k: Mark(k, "receptacle", n, _view(ctx)) for k, n in enumerate(names)}
        ctx.services["mobile.marks.receptacle"] = marks
        key = self.out_key("result")
        png = str(overlay(obs.rgb, masks, marks_dir(ctx) / _png_name(self.node_id, ctx.tick))) if marks else None
        target = str(self.port("target") or "")
        best = None
        if marks:
            best = max(marks, key=lambda k: difflib.SequenceMatcher(None, target.lower(), marks[k].name).ratio())
        return self.result("found" if marks else "not_found",
                           {f"{key}.marks": {k: m.name for k, m in marks.items()}, f"{key}.best": best,
                            f"{key}.image": png}, PERCEPTION_SECONDS)

    def simulate(self, outcome: str) -> LeafResult:
        return self.result(outcome, {f"{self.out_key('result')}.best": 0 if outcome == "found" else None},
                           PERCEPTION_SECONDS)


class GazeAt(Leaf):
    TYPE = "gaze_at"
    SUCCESS_OUTCOMES = frozenset({"done"})

    def execute(self) -> LeafResult | Pending:
        mark, why = _lookup(self.ctx, "object", self.port("marker"))
        if mark is None or mark.point_base is None:
            return self.result("stale_marker", {f"{self.node_id}.reason": why}, event_meta={"reason": why})
        motion = start_motion(self.ctx.driver, "gaze_at", point=mark.point_base, timeout=self.ctx.remaining_time())
        return Pending(motion, lambda ex: self.result(_motion_outcome(ex), duration=ex.duration,
                                                      event_meta={**ex.info, "target": mark.name}))


class Pick(Leaf):
    """Grasp the marked object (first feasible planned grasp) and classify it with the Watchdog."""

    TYPE = "pick"
    SUCCESS_OUTCOMES = frozenset({"SUCCESS"})
    MAX_CANDIDATES = 8
    live: WatchedMotion | None = None  # the running grasp under its streaming Watchdog

    def execute(self) -> LeafResult | Pending:
        ctx = self.ctx
        self.live = None
        exec_key = self.out_key("execution")
        mark, why = _lookup(ctx, "object", self.port("marker"))
        if mark is None or mark.located is None:
            return self.result("stale_marker", {exec_key: None, f"{self.node_id}.reason": why},
                               event_meta={"reason": why})
        candidates = ctx.services["plan_grasps"](mark.observation, mark.located)
        for pose in candidates[: self.MAX_CANDIDATES]:
            ok, _ = check_grasp(ctx.driver, pose, pose)
            if not ok:
                continue
            motion = start_motion(ctx.driver, "grasp", pose=pose, width=pose.width, force=20.0,
                                  timeout=ctx.remaining_time())
            if self.port("watchdog"):  # the label so far while it runs ({id}.label_so_far)
                self.live = motion = WatchedMotion(motion, LiveWatchdog(ctx.services.get("thresholds")),
                                                   self.node_id, ctx.blackboard.set)
            return Pending(motion, lambda ex, mark=mark: self.finish(ex, mark),
                           halt_writes=lambda ex: {exec_key: ex})
        return self.result("infeasible", {exec_key: None}, event_meta={"reason": "no feasible grasp",
                                                                       "target": mark.name})

    def finish(self, ex: Execution, mark: Mark) -> LeafResult:
        """The grasp ended: a driver fault, else the Watchdog's label of its telemetry."""
        exec_key = self.out_key("execution")
        meta = {**_exec_meta(ex), "target": mark.name, "marker": mark.marker}
        if ex.fault is not None and ex.fault != "timeout":
            return self.result("infeasible" if ex.fault.startswith("infeasible") else "fault",
                               {exec_key: ex}, ex.duration, meta)
        if self.port("watchdog"):
            verdict = self.ctx.services["classify"](ex.telemetry)
            label = verdict.label.value if hasattr(verdict.label, "value") else str(verdict.label)
            meta["watchdog"] = {"label": label, "confidence": round(float(verdict.confidence), 4),
                                "rule": verdict.evidence.get("rule")}
        else:
            label = "SUCCESS"  # ablation: a finished motion is believed
            meta["watchdog"] = {"label": None, "ablated": True}
        return self.result(label, {exec_key: ex, f"{self.out_key('outcome')}.target": mark.name},
                           ex.duration, meta)

    def halt_label(self, execution: Execution | None) -> str | None:
        """A preempted pick is labelled with what its Watchdog had decided (None: nothing yet)."""
        return self.live.label if self.live is not None else None


class PlaceOn(Leaf):
    TYPE = "place_on"
    SUCCESS_OUTCOMES = frozenset({"done"})

    def execute(self) -> LeafResult | Pending:
        mark, why = _lookup(self.ctx, "receptacle", self.port("marker"))
        if mark is None:
            return self.result("stale_marker", {f"{self.node_id}.reason": why}, event_meta={"reason": why})
        motion = start_motion(self.ctx.driver, "place", target=mark.name, timeout=self.ctx.remaining_time())
        return Pending(motion, lambda ex: self.result(_motion_outcome(ex), duration=ex.duration,
                                                      event_meta={**_exec_meta(ex), "receptacle": mark.name}))


class _Articulate(Leaf):
    SUCCESS_OUTCOMES = frozenset({"done"})

    PRIMITIVE = ""  # the Articulated method, started as a motion

    def execute(self) -> LeafResult | Pending:
        marker = self.port("marker")
        handle: str | None = marker if isinstance(marker, str) and not marker.isdigit() else None
        if handle is None:
            mark, why = _lookup(self.ctx, "receptacle", marker)
            if mark is None:
                return self.result("stale_marker", {f"{self.node_id}.reason": why}, event_meta={"reason": why})
            handle = f"{mark.name} drawer"
        if not isinstance(self.ctx.driver, Articulated):
            return self.result("infeasible", event_meta={"reason": "driver is not Articulated"})
        motion = start_motion(self.ctx.driver, self.PRIMITIVE, handle=handle, timeout=self.ctx.remaining_time())
        return Pending(motion, lambda ex: self.result(_motion_outcome(ex), duration=ex.duration,
                                                      event_meta={**ex.info, "handle": handle}))


class Open(_Articulate):
    TYPE = "open"
    PRIMITIVE = "open"


class Close(_Articulate):
    TYPE = "close"
    PRIMITIVE = "close_articulated"


class Ask(Leaf):
    """Ask about the shown objects; resolve the answer to one marker (colour words, spatial words,
    "any"), never by ids. Writes objects.best on success."""

    TYPE = "ask"
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

    TYPE = "listen"
    SUCCESS_OUTCOMES = frozenset({"same"})

    def execute(self) -> LeafResult:
        from bt_grasp.goal_text import goal_object

        user = _user(self.ctx)
        new = user.poll() if hasattr(user, "poll") else None
        if not new:
            return self.result("same")
        return self.result("revised", {"goal.text": new, "goal.object": goal_object(new),
                                       "goal.revisions": int(self.ctx.blackboard.get("goal.revisions") or 0) + 1})


class Finish(Finalize):
    TYPE = "finish"


MOBILE_LEAVES: tuple[type[Leaf], ...] = (NavTo, WalkAround, ShowObjectByCategory, ShowReceptacles, GazeAt, Pick,
                                         PlaceOn, Open, Close, Ask, Listen, Finish)
