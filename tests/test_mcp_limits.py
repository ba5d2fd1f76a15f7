"""The MCP tools publish the limits they enforce, refuse unknown arguments, and the call that
trips an episode guard says `terminal` (no robot: the checks all happen before any motion)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import anyio
import jsonschema
import pytest
from helpers import ROOT

from bt_grasp.context import EpisodeLimits
from bt_grasp.mcp_server.inputs import LIFT_HEIGHT, MAX_TEXT, PUSH_DIRECTIONS, PUSH_DISTANCE
from bt_grasp.mcp_server.server import build_server
from bt_grasp.mcp_server.session import ToolSession

sys.path.insert(0, str(ROOT / "tests" / "corpus"))
from run_corpus import _StubWorld  # noqa: E402


def _session(actions: int = 10, streak: int = 5, ticks: int = 1000) -> ToolSession:
    return ToolSession(_StubWorld(), EpisodeLimits(actions, streak, ticks), reset=False)


def _app(session: ToolSession, calls: list):
    async def call(tool, **args):
        calls.append((tool, args))
        return session.call(tool, **args)

    return build_server(SimpleNamespace(session=session, call=call))


def _schema(app, tool: str) -> dict:
    return app._tool_manager.get_tool(tool).parameters


def test_the_call_that_trips_the_perception_streak_guard_is_terminal():
    result = _session(streak=0).call("survey_scene")
    assert (result["outcome"], result["terminal"], result["ok"]) == ("terminal", True, False)
    assert result["reason"].startswith("perception loop")


def test_the_call_that_reaches_the_tick_cap_is_terminal():
    session = _session(ticks=1)
    session.call("survey_scene")  # tick 1 (the stub camera fails: an ordinary not_found)
    result = session.call("survey_scene")
    assert (result["outcome"], result["terminal"]) == ("terminal", True)
    assert result["reason"].startswith("tick cap")


def test_schemas_publish_the_enforced_limits():
    app = _app(_session(), [])
    push = _schema(app, "push")["properties"]
    assert push["direction"]["enum"] == list(PUSH_DIRECTIONS)
    assert (push["distance"]["minimum"], push["distance"]["maximum"]) == PUSH_DISTANCE
    lift = _schema(app, "lift")["properties"]["height"]
    assert (lift["minimum"], lift["maximum"]) == LIFT_HEIGHT
    force = _schema(app, "grasp")["properties"]["force"]["anyOf"][0]
    assert (force["minimum"], force["maximum"]) == (0, 100.0)  # the profile's max_force_n
    assert _schema(app, "locate_object")["properties"]["target"]["maxLength"] == MAX_TEXT
    assert _schema(app, "finish")["properties"]["decision"]["enum"] == ["FINALIZE", "WAIT_CLARIFY"]
    for tool in app._tool_manager.list_tools():
        assert tool.parameters["additionalProperties"] is False, tool.name


@pytest.mark.parametrize("tool, args", [("push", {"target": "mug", "direction": "diagonal"}),
                                        ("push", {"target": "mug", "distance": 0.5}),
                                        ("lift", {"height": -0.1}),
                                        ("grasp", {"force": 1e6}),
                                        ("locate_object", {"target": "x" * (MAX_TEXT + 1)}),
                                        ("status", {"verbose": True})])
def test_what_the_schema_refuses_the_session_refuses_too(tool, args):
    app = _app(_session(), [])
    assert not jsonschema.Draft202012Validator(_schema(app, tool)).is_valid(args)
    assert _session().call(tool, **args)["outcome"] == "invalid_input"


def test_the_server_refuses_an_unknown_argument_before_the_robot_sees_the_call():
    calls: list = []
    app = _app(_session(), calls)

    async def go():
        with pytest.raises(Exception, match="distnace"):
            await app.call_tool("push", {"target": "mug", "distnace": 0.1})

    anyio.run(go)
    assert calls == []
