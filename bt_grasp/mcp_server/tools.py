"""The perception, manipulation and motion tools of a ToolSession: arguments checked, one tool tree
run, its blackboard writes and events turned into the result.

A mixin of bt_grasp.mcp_server.session.ToolSession, which owns the episode state and provides
`_run`, `_base`, `_terminal_result` and `_check_action_budget`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bt_grasp.mcp_server.inputs import (
    LIFT_HEIGHT,
    PUSH_DIRECTIONS,
    PUSH_DISTANCE,
    InvalidInput,
    force_limit,
    number_arg,
    text_arg,
    vector_arg,
)
from bt_grasp.mcp_server.summaries import event_summary, mask_summary, scene_summary


class SessionTools:
    """`_tool_<name>` for every robot tool; ToolSession.call dispatches to them."""

    # Provided by ToolSession (see the module docstring).
    blackboard: Any
    registry: Any
    _run: Callable[[str, dict[str, Any]], tuple[dict[str, Any], list[Any], bool]]
    _base: Callable[..., dict[str, Any]]
    _terminal_result: Callable[[str], dict[str, Any]]
    _check_action_budget: Callable[[], bool]

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
        text = text_arg(target, "target")
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
        text = text_arg(target, "target", required=False)
        default_force = float(self.registry.require("grasp").ports["force"].default)
        f = default_force if force is None else number_arg(force, "force", 0.0, force_limit(self))
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
            "event": event_summary(event) if event else None,
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
        text = text_arg(target, "target", required=False)
        if direction not in PUSH_DIRECTIONS:
            raise InvalidInput(f"direction must be one of {', '.join(PUSH_DIRECTIONS)}, got {direction!r}")
        dist = number_arg(distance, "distance", *PUSH_DISTANCE)
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
                       "event": event_summary(event) if event else None})
        if writes.get("push.reason"):
            result["why"] = writes["push.reason"]
        return result

    def _motion(self, tool: str, tree: str, params: dict[str, Any]) -> dict[str, Any]:
        writes, events, _ = self._run(tree, params)
        outcome = writes.get(f"{tool}.outcome")
        event = next((e for e in reversed(events) if e.primitive == tool), None)
        result = self._base(tool, ok=outcome == "done", outcome=outcome)
        result.update({"exec_status": getattr(event.exec_status, "value", None) if event else None,
                       "event": event_summary(event) if event else None})
        fault = (event.metadata or {}).get("fault") if event else None
        if fault:
            result["why"] = fault
        if writes.get(f"{tool}.error"):
            result["why"] = writes[f"{tool}.error"]
        return result

    def _tool_place(self, target: Any = "basket") -> dict[str, Any]:
        name = text_arg(target, "target") or "basket"
        return self._motion("place", "place", {"place": name})

    def _tool_lift(self, height: Any = 0.15) -> dict[str, Any]:
        return self._motion("lift", "lift", {"height": number_arg(height, "height", *LIFT_HEIGHT)})

    def _tool_open_gripper(self) -> dict[str, Any]:
        return self._motion("open_gripper", "open_gripper", {})

    def _tool_nav_to(self, x: Any = None, y: Any = None, theta: Any = None, place: Any = None) -> dict[str, Any]:
        """A pose (x, y[, theta]) or a place name the driver knows; exactly one of the two."""
        name = text_arg(place, "place", required=False)
        if name is not None:
            if x is not None or y is not None or theta is not None:
                raise InvalidInput("give either place or x, y[, theta], not both")
            return self._motion("nav_to", "nav_to", {"pose": name})
        if x is None or y is None:
            raise InvalidInput("nav_to needs x and y (metres), or a place name")
        pose = [number_arg(x, "x", -50.0, 50.0), number_arg(y, "y", -50.0, 50.0)]
        if theta is not None:
            pose.append(number_arg(theta, "theta", -2 * math.pi, 2 * math.pi))
        return self._motion("nav_to", "nav_to", {"pose": pose})

    def _tool_gaze_at(self, point: Any = None) -> dict[str, Any]:
        return self._motion("gaze_at", "gaze_at", {"point": vector_arg(point, "point", (3,))})
