"""ToolSession: one persistent bt_grasp episode driven one tool call at a time (no MCP here).

Why a session and not one episode per call: the episode budgets (`actions`, `perception_streak`,
`max_ticks`) only mean something if they are counted across the planner's calls. So the session
owns the episode's long-lived state — ledger, blackboard, logical clock, tick count, trial ids,
decision — and every tool call compiles a small fixed tree (built as YAML text, loaded with
load_tree_text, so the same validator and compiler as shipped trees apply) into a fresh Runner
whose RunContext *shares* that state. Budget guards, the Watchdog and event emission therefore
behave exactly as in `bt-grasp run`; the session only adds:

- a pre-check that refuses an action-counting tool once the action budget is spent (the core
  guard would refuse it anyway, but only after the tool's locate step had used the camera);
- the terminal state: once a guard (or `finish`) sets the episode's Decision, every further call
  returns that decision without touching the robot, until `reset_episode` starts a new episode;
- input validation and exception containment: a tool call never raises; bad input is an
  `invalid_input` result, an unexpected failure an `error` result.

Each tool tree ends in `finalize` with one of two reserved reasons (call succeeded / call failed),
so every tool tree passes `bt-grasp verify` on its own; any *other* decision at the end of a call
came from an episode guard and ends the episode.
"""

from __future__ import annotations

import inspect
import json
import math
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import EpisodeLimits, Ledger, LogicalClock, RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.mcp_server.mobile import register_mobile
from bt_grasp.outcomes import Decision
from bt_grasp.registry import Registry
from bt_grasp.trace import jsonable

CALL_OK = "mcp: tool call completed"
CALL_FAILED = "mcp: tool call stopped early"
_CALL_REASONS = (CALL_OK, CALL_FAILED)

MAX_TEXT = 200  # referring expressions and place names longer than this are refused
PUSH_DIRECTIONS = ("auto", "left", "right", "up", "down")
PUSH_DISTANCE = (0.03, 0.20)  # metres; the push leaf's port range
LIFT_HEIGHT = (0.0, 0.40)  # metres

# -- the tool trees ----------------------------------------------------------------------------

_LOCATE = 'locate_object: {id: locate, target: "{tool.target}"}'
_STEPS: dict[str, list[str]] = {
    "survey_scene": ["survey_scene: {id: survey}"],
    "locate_object": [_LOCATE],
    "grasp_target": [_LOCATE, 'grasp: {id: grasp, force: "{tool.force}"}',
                     "force_success: {id: judged, child: {evaluate_grasp: {id: watchdog, semantic: true}}}"],
    "grasp_located": ['grasp: {id: grasp, force: "{tool.force}"}',
                      "force_success: {id: judged, child: {evaluate_grasp: {id: watchdog, semantic: true}}}"],
    "push_target": [_LOCATE, 'push: {id: push, direction: "{tool.direction}", distance: "{tool.distance}"}'],
    "push_located": ['push: {id: push, direction: "{tool.direction}", distance: "{tool.distance}"}'],
    "place": ['place: {id: place, target: "{tool.place}"}'],
    "lift": ['lift: {id: lift, height: "{tool.height}"}'],
    "open_gripper": ["open_gripper: {id: open_gripper}"],
    "nav_to": ['nav_to: {id: nav_to, pose: "{tool.pose}"}'],
    "gaze_at": ['gaze_at: {id: gaze_at, point: "{tool.point}"}'],
}


def tool_tree_text(name: str) -> str:
    """The YAML of one tool call: its steps in a sequence, then a finalize that marks the call
    done; a failing step falls through to a second finalize. Budgets here only matter to
    `verify`: at run time the session's limits apply."""
    steps = "\n".join(f"            - {s}" for s in _STEPS[name])
    return f"""\
tree: mcp_{name}
description: one MCP tool call ({name}) inside a persistent episode
root:
  selector:
    id: call
    children:
      - sequence:
          id: steps
          children:
{steps}
            - finalize: {{id: call_ok, reason: "{CALL_OK}"}}
      - finalize: {{id: call_failed, reason: "{CALL_FAILED}"}}
"""


def tool_registry() -> Registry:
    """A private copy of the default registry plus the mobile leaves."""
    from bt_grasp.spec.loader import copy_registry

    return register_mobile(copy_registry(default_registry()))


class CallBlackboard(Blackboard):
    """The episode's blackboard that also remembers what the current call wrote.

    The runner drains the change log every tick, so results are read from `call_writes`
    instead: a key a step did not write this call is absent, never a stale value from an
    earlier call.
    """

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        super().__init__(initial)
        self.call_writes: dict[str, Any] = {}

    def set(self, key: str, value: Any) -> None:
        super().set(key, value)
        self.call_writes[key] = value


def force_limit(session: Any) -> float:
    """The largest grip force `grasp` accepts: the gripper's max_force_n (at least the default)."""
    default_force = float(session.registry.require("grasp").ports["force"].default)
    max_force = float(getattr(getattr(session.world.profile, "gripper", None), "max_force_n", 0) or 0)
    return max(default_force, max_force) if max_force else 1000.0


class InvalidInput(ValueError):
    """A tool argument the session refuses; becomes an `invalid_input` result."""


# -- summaries -------------------------------------------------------------------------------

def scene_summary(scene: Any) -> dict[str, Any] | None:
    """A scene graph as names the planner can reuse verbatim in locate_object/grasp."""
    if scene is None:
        return None
    names = {o.id: o.name for o in scene.objects}
    objects = []
    for o in scene.objects:
        item: dict[str, Any] = {"id": o.id, "name": o.name, "description": o.description,
                                "point2d": [round(float(x), 3) for x in o.point2d]}
        attrs = {k: v for k, v in (o.attributes or {}).items() if not isinstance(v, np.ndarray)}
        if attrs:
            item["attributes"] = _rounded(jsonable(attrs))
        objects.append(item)
    relations = [[names.get(s, str(s)), rel, names.get(t, str(t))] for s, rel, t in scene.relations]
    return {"n_objects": len(objects), "objects": objects, "relations": relations}


def _rounded(value: Any, digits: int = 3) -> Any:
    """Floats to `digits` places: millimetres are plenty for a planner, and tokens cost."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, digits) for v in value]
    return value


def mask_summary(located: Any, scene: Any = None) -> dict[str, Any] | None:
    """A located object without the arrays: bbox, pixel and point counts, where it is."""
    if located is None:
        return None
    pts = np.asarray(located.points_base, dtype=float).reshape(-1, 3)
    out: dict[str, Any] = {"name": located.name, "object_id": int(located.object_id),
                           "bbox": [int(v) for v in located.bbox],
                           "mask_pixels": int(np.count_nonzero(located.mask)) if located.mask is not None else 0,
                           "n_points": int(len(pts)), "score": round(float(located.score), 4)}
    if len(pts):
        out["centroid_base"] = [round(float(v), 4) for v in np.median(pts, axis=0)]
        out["extent_m"] = [round(float(v), 4) for v in (pts.max(axis=0) - pts.min(axis=0))]
    names = {o.id: o.name for o in scene.objects} if scene is not None else {}
    out["occluded_by"] = [names.get(i, str(i)) for i in located.occluded_by]
    return out


def _event_summary(event: Any) -> dict[str, Any]:
    meta = dict(event.metadata or {})
    watchdog = meta.pop("watchdog", None)
    out = {"trial_id": event.trial_id, "primitive": event.primitive,
           "exec_status": getattr(event.exec_status, "value", event.exec_status),
           "label": event.watchdog_label, "confidence": event.confidence,
           "clock": event.clock, "metadata": jsonable(meta)}
    if isinstance(watchdog, dict):
        out["watchdog"] = jsonable({k: v for k, v in watchdog.items() if k in ("rule", "semantic_reason")}
                                   or watchdog)
    return out


# -- the session -------------------------------------------------------------------------------

class ToolSession:
    """One world and one running episode; `call(tool, **args)` -> a JSON-safe result dict.

    Not thread-safe by design beyond a lock: the MCP layer serialises calls onto one thread,
    because PyBullet and real drivers expect a single caller.
    """

    def __init__(self, world: Any, limits: EpisodeLimits | None = None, episode: int = 0, seed: int = 0,
                 target: str | None = None, reset: bool = True, log_path: str | Path | None = None) -> None:
        self.world = world
        self.limits = limits or EpisodeLimits()
        self.registry = tool_registry()
        self._specs: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._log_path = Path(log_path) if log_path else None
        self.mobile = hasattr(world.driver, "nav_to") and hasattr(world.driver, "gaze_at")
        self.episode, self.seed, self.target = episode, seed, target
        self.episodes_started = 0
        self._new_state()
        if reset:
            self._reset_driver(episode, seed, target)

    # -- state -----------------------------------------------------------------------------
    def _new_state(self) -> None:
        """Fresh episode state: counters start at zero only here, i.e. only for a new scene."""
        self.blackboard = CallBlackboard()
        self.ledger = Ledger()
        self.clock = LogicalClock()
        self.services: dict[str, Any] = dict(self.world.services)
        self.run_id = uuid.uuid4().hex[:8]
        self.tick = 0
        self.trial = 0
        self.decision: Decision | None = None
        self.reason = ""
        self.events: list[Any] = []
        self.calls = 0
        self._errors: dict[str, Any] = {}

    def _reset_driver(self, episode: int, seed: int, target: str | None) -> None:
        driver = self.world.driver
        if target:
            driver.reset(episode=episode, seed=seed, target=target)
        else:
            driver.reset(episode=episode, seed=seed)
        self.episode, self.seed, self.target = episode, seed, target
        self.episodes_started += 1
        task = driver.task() if hasattr(driver, "task") else None
        if task:
            self.blackboard.set("goal.object", task)
            self.blackboard.set("goal.text", f"Grasp the {task}")

    @property
    def terminal(self) -> bool:
        return self.decision is not None

    def tools(self) -> list[str]:
        """The tool names this robot supports (mobile tools only when the driver has them)."""
        names = ["survey_scene", "locate_object", "grasp", "push", "place", "lift", "open_gripper"]
        if self.mobile:
            names += ["nav_to", "gaze_at"]
        return names + ["finish", "reset_episode", "status"]

    def budget(self) -> dict[str, Any]:
        """What is used and what is left, attached to every result so a planner can see it."""
        lim, led = self.limits, self.ledger
        return {"actions_used": led.actions, "action_budget": lim.actions,
                "actions_left": max(0, lim.actions - led.actions),
                "perception_streak": led.perception_streak,
                "perception_streak_limit": lim.perception_streak,
                "ticks": self.tick, "max_ticks": lim.max_ticks, "clock": round(self.clock.now, 4)}

    # -- public entry --------------------------------------------------------------------------
    def call(self, tool: str, /, **args: Any) -> dict[str, Any]:
        """Run one tool; never raises (an exception becomes an `error` result)."""
        with self._lock:
            start = time.perf_counter()
            self._errors = {}
            try:
                handler: Callable[..., dict[str, Any]] | None = getattr(self, f"_tool_{tool}", None)
                if handler is None or tool not in self.tools():
                    result = self._invalid(tool, f"unknown tool {tool!r} (known: {', '.join(self.tools())})")
                elif self.terminal and tool not in ("status", "reset_episode"):
                    result = self._terminal_result(tool)
                else:
                    try:
                        inspect.signature(handler).bind(**args)
                    except TypeError as exc:  # unknown or missing arguments
                        raise InvalidInput(f"{tool}: {exc}") from None
                    result = handler(**args)
                    if self.terminal and result.get("outcome") is None:
                        # A guard (perception streak, tick cap) ended the episode in this call
                        # before its leaf produced an outcome: say so, as every later call will.
                        result.update(ok=False, outcome="terminal")
            except InvalidInput as exc:
                result = self._invalid(tool, str(exc))
            except Exception as exc:  # contain everything: a tool call must answer
                result = self._base(tool, ok=False, outcome="error")
                result["error"] = f"{type(exc).__name__}: {exc}"
            result.setdefault("wall_s", round(time.perf_counter() - start, 3))
            self.calls += 1
            self._log(tool, args, result)
            return result

    # -- result helpers ------------------------------------------------------------------------
    def _base(self, tool: str, ok: bool, outcome: str | None) -> dict[str, Any]:
        out = {"tool": tool, "ok": ok, "outcome": outcome, "terminal": self.terminal,
               "decision": self.decision.value if self.decision else None,
               "reason": self.reason or None, **self.budget()}
        if self._errors:  # a leaf caught a driver/perception exception during this call
            out["error"] = "; ".join(f"{node}: {msg}" for node, msg in self._errors.items())
        return out

    def _invalid(self, tool: str, message: str) -> dict[str, Any]:
        result = self._base(tool, ok=False, outcome="invalid_input")
        result["error"] = message
        return result

    def _terminal_result(self, tool: str) -> dict[str, Any]:
        result = self._base(tool, ok=False, outcome="terminal")
        result["hint"] = "the episode has ended; call reset_episode to start a new one"
        return result

    def _log(self, tool: str, args: dict[str, Any], result: dict[str, Any]) -> None:
        if self._log_path is None:
            return
        try:
            with self._log_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"wall_time": time.time(), "run_id": self.run_id, "tool": tool,
                                     "args": jsonable(args), "result": result}, default=str) + "\n")
        except OSError:
            pass  # the log is best effort; the call's answer matters more

    # -- running a tool tree -------------------------------------------------------------------
    def _spec(self, name: str) -> Any:
        if name not in self._specs:
            from bt_grasp.spec.loader import load_tree_text

            self._specs[name] = load_tree_text(tool_tree_text(name), file=f"<mcp:{name}>",
                                               registry=self.registry)
        return self._specs[name]

    def _run(self, name: str, params: dict[str, Any]) -> tuple[dict[str, Any], list[Any], bool]:
        """Run tool tree `name` in the shared state. Returns (this call's blackboard writes,
        this call's events, whether the steps all succeeded)."""
        from bt_grasp.runner import Runner

        spec = self._spec(name)
        for key, value in params.items():
            self.blackboard.set(f"tool.{key}", value)
        self.blackboard.call_writes = {}
        ctx = RunContext(registry=self.registry, limits=self.limits, driver=self.world.driver,
                         perceiver=self.world.perceiver, profile=self.world.profile,
                         blackboard=self.blackboard, clock=self.clock, ledger=self.ledger,
                         run_id=self.run_id, tick=self.tick, services=self.services,
                         _trial=self.trial)
        result = Runner(spec, ctx).run()
        self.tick, self.trial = ctx.tick, ctx._trial
        self.events.extend(result.events)
        self._errors = {k[:-len(".error")]: v for k, v in self.blackboard.call_writes.items()
                        if k.endswith(".error") and v}
        if result.reason not in _CALL_REASONS:  # an episode guard decided: the episode is over
            self.decision, self.reason = result.decision, result.reason
        return dict(self.blackboard.call_writes), list(result.events), result.reason == CALL_OK

    def _check_action_budget(self) -> bool:
        """Refuse an action once the budget is spent, with the core guard's own reason."""
        if self.ledger.actions >= self.limits.actions:
            self.decision = Decision.WAIT_CLARIFY
            self.reason = f"action budget spent ({self.limits.actions} grasp/push actions)"
            return False
        return True

    # -- validation ------------------------------------------------------------------------------
    @staticmethod
    def _text(value: Any, what: str, required: bool = True) -> str | None:
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise InvalidInput(f"{what} is required (a referring text such as 'red mug')")
            return None
        if not isinstance(value, str):
            raise InvalidInput(f"{what} must be text, not {type(value).__name__}")
        text = " ".join(value.split())
        if len(text) > MAX_TEXT:
            raise InvalidInput(f"{what} is longer than {MAX_TEXT} characters")
        return text

    @staticmethod
    def _number(value: Any, what: str, lo: float, hi: float) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InvalidInput(f"{what} must be a number")
        if not lo <= float(value) <= hi:
            raise InvalidInput(f"{what} must be within [{lo}, {hi}], got {value}")
        return float(value)

    @staticmethod
    def _vector(value: Any, what: str, sizes: tuple[int, ...]) -> list[float]:
        if not isinstance(value, (list, tuple)) or len(value) not in sizes:
            raise InvalidInput(f"{what} must be a list of {' or '.join(map(str, sizes))} numbers")
        out = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InvalidInput(f"{what} must hold finite numbers")
            out.append(float(v))
        return out

    def _located_now(self) -> Any:
        return self.blackboard.get("target")

    # -- perception tools --------------------------------------------------------------------------
    def _tool_survey_scene(self) -> dict[str, Any]:
        writes, _, _ = self._run("survey_scene", {})
        outcome = writes.get("scene.outcome")
        result = self._base("survey_scene", ok=outcome == "found", outcome=outcome)
        result["scene"] = scene_summary(writes.get("scene"))
        return result

    def _tool_locate_object(self, target: Any = None) -> dict[str, Any]:
        text = self._text(target, "target")
        writes, _, _ = self._run("locate_object", {"target": text})
        return self._locate_result("locate_object", writes, text)

    def _locate_result(self, tool: str, writes: dict[str, Any], text: str | None) -> dict[str, Any]:
        outcome = writes.get("target.outcome")
        result = self._base(tool, ok=outcome in ("found", "occluded"), outcome=outcome)
        scene = writes.get("scene")
        result["query"] = text
        result["mask"] = mask_summary(writes.get("target"), scene)
        result["occluder"] = writes.get("target.occluder")
        if scene is not None:
            result["visible"] = [o.name for o in scene.objects]
        return result

    # -- manipulation tools ----------------------------------------------------------------------
    def _tool_grasp(self, target: Any = None, force: Any = None) -> dict[str, Any]:
        text = self._text(target, "target", required=False)
        default_force = float(self.registry.require("grasp").ports["force"].default)
        f = default_force if force is None else self._number(force, "force", 0.0, force_limit(self))
        if text is None and self._located_now() is None:
            raise InvalidInput("no located target: pass target, or call locate_object first")
        if not self._check_action_budget():
            return self._terminal_result("grasp")
        name = "grasp_target" if text else "grasp_located"
        params: dict[str, Any] = {"force": f}
        if text:
            params["target"] = text
        writes, events, _ = self._run(name, params)
        return self._grasp_result(writes, events, text)

    def _grasp_result(self, writes: dict[str, Any], events: list[Any], text: str | None) -> dict[str, Any]:
        if text and writes.get("target.outcome") == "not_found":
            result = self._locate_result("grasp", writes, text)
            result["ok"] = False
            result["outcome"] = "not_found"
            result["attempted"] = False
            return result
        grasp_outcome = writes.get("grasp.outcome")
        label = writes.get("grasp.label")
        semantic = writes.get("grasp.label.semantic")
        ok = label == "SUCCESS" and semantic not in ("mismatch", "unknown")
        result = self._base("grasp", ok=ok, outcome=label or grasp_outcome)
        event = next((e for e in reversed(events) if e.primitive == "grasp"), None)
        result.update({
            "attempted": event is not None,
            "grasp_outcome": grasp_outcome,
            "label": label,
            "confidence": writes.get("grasp.label.confidence"),
            "semantic": semantic,
            "exec_status": getattr(event.exec_status, "value", None) if event else None,
            "event": _event_summary(event) if event else None,
        })
        if text:
            result["query"] = text
            result["mask"] = mask_summary(writes.get("target"), writes.get("scene"))
        if writes.get("grasp.reason"):
            result["why"] = writes["grasp.reason"]
        if label and label != "SUCCESS":
            result["hint"] = "the gripper may still be closed: open_gripper before the next attempt"
        return result

    def _tool_push(self, target: Any = None, direction: Any = "auto", distance: Any = 0.10) -> dict[str, Any]:
        text = self._text(target, "target", required=False)
        if direction not in PUSH_DIRECTIONS:
            raise InvalidInput(f"direction must be one of {', '.join(PUSH_DIRECTIONS)}, got {direction!r}")
        dist = self._number(distance, "distance", *PUSH_DISTANCE)
        if text is None and self._located_now() is None:
            raise InvalidInput("no located target: pass target, or call locate_object first")
        if not self._check_action_budget():
            return self._terminal_result("push")
        params: dict[str, Any] = {"direction": direction, "distance": dist}
        if text:
            params["target"] = text
        writes, events, _ = self._run("push_target" if text else "push_located", params)
        if text and writes.get("target.outcome") == "not_found":
            result = self._locate_result("push", writes, text)
            result.update(ok=False, outcome="not_found", attempted=False)
            return result
        outcome = writes.get("push.outcome")
        event = next((e for e in reversed(events) if e.primitive == "push"), None)
        result = self._base("push", ok=outcome == "done", outcome=outcome)
        result.update({"attempted": event is not None,
                       "exec_status": getattr(event.exec_status, "value", None) if event else None,
                       "event": _event_summary(event) if event else None})
        if writes.get("push.reason"):
            result["why"] = writes["push.reason"]
        return result

    def _motion(self, tool: str, tree: str, params: dict[str, Any]) -> dict[str, Any]:
        writes, events, _ = self._run(tree, params)
        outcome = writes.get(f"{tool}.outcome")
        event = next((e for e in reversed(events) if e.primitive == tool), None)
        result = self._base(tool, ok=outcome == "done", outcome=outcome)
        result.update({"exec_status": getattr(event.exec_status, "value", None) if event else None,
                       "event": _event_summary(event) if event else None})
        fault = (event.metadata or {}).get("fault") if event else None
        if fault:
            result["why"] = fault
        if writes.get(f"{tool}.error"):
            result["why"] = writes[f"{tool}.error"]
        return result

    def _tool_place(self, target: Any = "basket") -> dict[str, Any]:
        name = self._text(target, "target") or "basket"
        return self._motion("place", "place", {"place": name})

    def _tool_lift(self, height: Any = 0.15) -> dict[str, Any]:
        return self._motion("lift", "lift", {"height": self._number(height, "height", *LIFT_HEIGHT)})

    def _tool_open_gripper(self) -> dict[str, Any]:
        return self._motion("open_gripper", "open_gripper", {})

    def _tool_nav_to(self, x: Any = None, y: Any = None, theta: Any = None, place: Any = None) -> dict[str, Any]:
        """A pose (x, y[, theta]) or a place name the driver knows; exactly one of the two."""
        name = self._text(place, "place", required=False)
        if name is not None:
            if x is not None or y is not None or theta is not None:
                raise InvalidInput("give either place or x, y[, theta], not both")
            return self._motion("nav_to", "nav_to", {"pose": name})
        if x is None or y is None:
            raise InvalidInput("nav_to needs x and y (metres), or a place name")
        pose = [self._number(x, "x", -50.0, 50.0), self._number(y, "y", -50.0, 50.0)]
        if theta is not None:
            pose.append(self._number(theta, "theta", -2 * math.pi, 2 * math.pi))
        return self._motion("nav_to", "nav_to", {"pose": pose})

    def _tool_gaze_at(self, point: Any = None) -> dict[str, Any]:
        return self._motion("gaze_at", "gaze_at", {"point": self._vector(point, "point", (3,))})

    # -- episode tools ---------------------------------------------------------------------------
    def _tool_finish(self, decision: Any = "FINALIZE", reason: Any = None) -> dict[str, Any]:
        """The planner's own terminal decision (the tool-level `finalize` / `wait_clarify`)."""
        try:
            dec = Decision(str(decision).upper())
        except ValueError:
            raise InvalidInput("decision must be FINALIZE or WAIT_CLARIFY") from None
        why = self._text(reason, "reason", required=False) or ("done" if dec is Decision.FINALIZE
                                                              else "needs clarification")
        self.decision, self.reason = dec, why
        return self._base("finish", ok=True, outcome=dec.value)

    def _tool_reset_episode(self, episode: Any = 0, seed: Any = 0, target: Any = None) -> dict[str, Any]:
        """A new scene and a new episode: the only way the counters start again from zero."""
        for value, what in ((episode, "episode"), (seed, "seed")):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(f"{what} must be a non-negative integer")
        text = self._text(target, "target", required=False)
        previous = {"run_id": self.run_id, "decision": self.decision.value if self.decision else None,
                    "reason": self.reason or None, **self.budget()}
        self._new_state()
        self._reset_driver(int(episode), int(seed), text)
        result = self._base("reset_episode", ok=True, outcome="reset")
        result.update({"episode": self.episode, "seed": self.seed, "task": self.blackboard.get("goal.object"),
                       "previous_episode": previous})
        return result

    def _tool_status(self) -> dict[str, Any]:
        result = self._base("status", ok=True, outcome="status")
        located = self._located_now()
        result.update({
            "robot": getattr(self.world.profile, "name", None),
            "perception": getattr(self.world.perceiver, "name", None),
            "run_id": self.run_id, "episode": self.episode, "seed": self.seed,
            "task": self.blackboard.get("goal.object"),
            "located": located.name if located is not None and not isinstance(located, str) else None,
            "tools": self.tools(), "calls": self.calls, "events": len(self.events),
            "counters": jsonable(self.ledger.snapshot()),
        })
        return result
