"""The tool trees: each MCP tool call runs one small fixed bt_grasp tree, written here as YAML.

Each ends in `finalize` with one of two reserved reasons (call succeeded / call failed), so every
tool tree passes `bt-grasp verify` on its own; any other decision came from an episode guard.
"""

from __future__ import annotations

from bt_grasp.default_registry import default_registry
from bt_grasp.mcp_server.mobile import register_mobile
from bt_grasp.registry import Registry

CALL_OK = "mcp: tool call completed"
CALL_FAILED = "mcp: tool call stopped early"
CALL_REASONS = (CALL_OK, CALL_FAILED)

_LOCATE = 'locate_object: {id: locate, target: "{tool.target}"}'
STEPS: dict[str, list[str]] = {
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
    steps = "\n".join(f"            - {s}" for s in STEPS[name])
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
