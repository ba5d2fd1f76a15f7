"""The mobile leaves that look and mark what they see: show_object_by_category, walk_around and
show_receptacles.

Receptacle marks come from the simulator's instance ids (ReceptacleAnnotator) only when the
perceiver is the sim annotator; otherwise (geometric perception, or a driver without them) the only
receptacle shown is the one the robot stands at (AtReceptacle), which is what a real robot's map
provides.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.capabilities import AtReceptacle, Head, ReceptacleAnnotator
from bt_grasp.mobile.som import MATCH_MIN, LexicalMatcher, Mark, marks_dir, overlay
from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.nodes.declare import SHOW_OUT, ablation_port, finding_type, key_port, leaf_type, sub_entries
from bt_grasp.nodes.mobile_dialogue import _user
from bt_grasp.nodes.mobile_marks import _png_name, _seen, _view, inventory_text
from bt_grasp.nodes.perception import PERCEPTION_SECONDS
from bt_grasp.registry import Port


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

    NODE_TYPE = leaf_type("show_object_by_category", "perception", {
        "category": Port("category", "str", required=True, doc='what to look for, e.g. "{goal.object}"'),
        "condition": ablation_port("condition", "ignore the category, mark every object, best = first"),
        "result": key_port("result", "objects", "where marks, best marker and inventory are written"),
        "outcome": key_port("outcome", "objects.outcome", "one | many | none"),
    }, outcomes=SHOW_OUT, perception=True, outcome_port="outcome",
        doc="Numbered Set-of-Mark overlay of the objects matching a category (PNG in the trace folder).",
        keys=sub_entries("result", "marks", "best", "count", "inventory", "image", "query"))
    SUCCESS_OUTCOMES = frozenset({"one", "many"})

    def execute(self) -> LeafResult:
        ctx = self.ctx
        query = str(self.port("category") or "")
        obs, scene = _survey(self)
        matcher = ctx.services.category_matcher or LexicalMatcher()
        objs = list(scene.objects)
        if self.port("condition"):
            objs = [o for o in objs if matcher.score(query, o) >= MATCH_MIN]
        # markers are numbered by visibility: marker 0 (objects.best) is the most visible match
        objs.sort(key=lambda o: -float(o.attributes.get("pixels", 0)))
        marks = _object_marks(self, objs, obs, scene)
        ctx.memory.marks["object"] = marks
        ctx.memory.shown = (obs, scene)
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

    NODE_TYPE = finding_type("walk_around", {
        "views": Port("views", "int", default=3, minimum=1, maximum=5, doc="head pan viewpoints"),
    }, ("inventory", "where the inventory text is written"),
        doc='Inventory of the current receptacle from several viewpoints ("0: a mug, 1: a remote").',
        keys=sub_entries("result", "count"))
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
            obs = ctx.observe()
            scene = ctx.survey(obs)
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

    NODE_TYPE = finding_type("show_receptacles", {
        "target": Port("target", "str", default="", doc="receptacle wanted (its marker becomes receptacles.best)"),
    }, ("receptacles", "where receptacle marks are written"),
        doc="Numbered Set-of-Mark overlay of the receptacles in view.",
        keys=sub_entries("result", "marks", "best", "image"))
    SUCCESS_OUTCOMES = frozenset({"found"})

    def execute(self) -> LeafResult:
        import difflib

        ctx = self.ctx
        obs = ctx.observe()
        inst = (obs.annotations or {}).get("instance")
        masks: list[np.ndarray] = []
        names: list[str] = []
        annotator = ctx.driver if isinstance(ctx.driver, ReceptacleAnnotator) else None
        if annotator is not None and getattr(ctx.perceiver, "name", "") == "sim" and inst is not None:
            for name, body in annotator.receptacle_bodies().items():
                m = inst == body
                if m.sum() >= 50:
                    names.append(name)
                    masks.append(m)
        elif isinstance(ctx.driver, AtReceptacle) and (here := ctx.driver.located_at()):
            names, masks = [here], [np.zeros(obs.depth.shape, dtype=bool)]
        marks = {k: Mark(k, "receptacle", n, _view(ctx)) for k, n in enumerate(names)}
        ctx.memory.marks["receptacle"] = marks
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
