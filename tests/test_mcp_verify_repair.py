"""Verify-and-repair over MCP: a scripted planner submits a tree that can loop, reads the
counterexample, submits the repaired tree, sees it PROVEN, runs it and gets the decision.

Pinned here: `verify_tree` answers as data (verdict, bounds, properties with witnesses, the
counterexample with its loop marked, `file:line:col` for bad YAML); `run_tree` refuses a tree
that is not PROVEN, with the counterexample, before anything moves; a PROVEN tree runs on the
robot (the PyBullet arm) and ends the episode with the tree's decision.
"""

from __future__ import annotations

from types import SimpleNamespace

import anyio
import pytest
from helpers import arm_world

from bt_grasp.context import EpisodeLimits
from bt_grasp.mcp_server.server import build_server
from bt_grasp.mcp_server.session import ToolSession

mcp = pytest.importorskip("mcp", reason="MCP SDK not installed (pip install 'bt_grasp[mcp]')")

LOOPING = """\
tree: release
properties:
  - name: release_after_looking
    only_after: {event: {node: open_gripper}, after: {node: survey, outcome: found}}
root:
  selector:
    children:
      - sequence:
          children:
            - survey_scene: {id: survey}
            - repeat: {id: again, child: {open_gripper: {id: release}}}
            - finalize: {reason: released}
      - wait_clarify: {reason: no scene}
"""
REPAIRED = LOOPING.replace("repeat: {id: again,", "retry: {id: again, attempts: 3,")
BAD = "tree: bad\nroot:\n  sequence:\n    children:\n      - grasp: {id: g, forse: 3}\n"


@pytest.fixture(scope="module")
def world():
    w = arm_world(image_size=128)
    yield w
    w.close()


def test_planner_repairs_a_looping_tree_and_runs_it(world) -> None:
    """looping tree -> COUNTEREXAMPLE (a loop) and run_tree refused -> repaired tree PROVEN,
    its property HOLDS -> run_tree -> the tree's decision ends the episode."""
    from mcp import Client

    session = ToolSession(world, EpisodeLimits(10, 5, 5000), seed=0)

    async def call(tool, **args):
        return session.call(tool, **args)

    app = build_server(SimpleNamespace(session=session, call=call))
    seen: dict = {}

    async def planner() -> None:
        with anyio.fail_after(120):
            async with Client(app) as client:
                async def ask(tool: str, **args) -> dict:
                    result = await client.call_tool(tool, args)
                    assert not result.is_error, result.content
                    return result.structured_content
                seen["bad"] = await ask("verify_tree", tree=BAD)
                seen["looping"] = await ask("verify_tree", tree=LOOPING)
                seen["refused"] = await ask("run_tree", tree=LOOPING)
                seen["repaired"] = await ask("verify_tree", tree=REPAIRED)
                seen["ran"] = await ask("run_tree", tree=REPAIRED)
                seen["after"] = await ask("status")

    anyio.run(planner)
    bad = seen["bad"]
    assert (bad["verdict"], bad["line"], bad["col"]) == ("INVALID", 5, 24)
    assert bad["error"].startswith("<submitted>:5:24: ")

    looping = seen["looping"]
    assert looping["verdict"] == "COUNTEREXAMPLE" and not looping["ok"]
    cx = looping["counterexample"]
    assert cx["steps"][0] == {"node": "survey", "outcome": "found"}
    assert "loop" in cx and cx["loop"]["from_step"] >= 2
    assert "loop" in looping["problem"]
    assert looping["properties"][0]["verdict"] == "NOT CHECKED"

    refused = seen["refused"]
    assert (refused["outcome"], refused["ok"], refused["terminal"]) == ("refused", False, False)
    assert refused["verification"]["counterexample"] == cx
    assert refused["actions_used"] == 0 and refused["ticks"] == 0  # nothing ran

    repaired = seen["repaired"]
    assert repaired["verdict"] == "PROVEN" and repaired["ok"]
    assert repaired["bounds"]["primitive:open_gripper"] == 3
    assert repaired["properties"] == [{"name": "release_after_looking", "verdict": "HOLDS",
                                       "property": "never open_gripper unless after survey found"}]

    ran = seen["ran"]
    assert ran["ok"] and ran["terminal"]
    assert ran["decision"] in ("FINALIZE", "WAIT_CLARIFY")
    assert ran["outcome"] == ran["decision"]
    assert ran["reason"] in ("released", "no scene")
    assert ran["ran"]["ticks"] > 0
    assert seen["after"]["decision"] == ran["decision"]


def test_run_tree_refuses_a_tree_whose_property_is_violated(world) -> None:
    """PROVEN to decide is not enough: a violated property refuses the run too, with the
    witness as data, and the robot does not move."""
    session = ToolSession(world, EpisodeLimits(10, 5, 5000), seed=0)
    text = REPAIRED.replace("after: {node: survey, outcome: found}", "after: {node: survey, outcome: not_found}")
    result = session.call("run_tree", tree=text)
    assert (result["outcome"], result["ticks"], result["terminal"]) == ("refused", 0, False)
    report = result["verification"]
    assert report["verdict"] == "PROVEN" and not report["properties_hold"]
    prop = report["properties"][0]
    assert prop["verdict"] == "VIOLATED"
    assert {"node": "survey", "outcome": "found"} in prop["witness"]["steps"]
    assert "properties do not all hold" in result["hint"]
