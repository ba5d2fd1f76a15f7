"""`bt-grasp serve` end to end: the MCP SDK's own stdio client drives the server subprocess
(PyBullet arm, 256² images): list tools, survey, locate, grasp, then exhaust a one-action budget
and see every further call come back as a terminal WAIT_CLARIFY. Also the serve CLI's errors.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pytest

from bt_grasp.outcomes import LABELS

mcp = pytest.importorskip("mcp", reason="MCP SDK not installed (pip install 'bt_grasp[mcp]')")

ROOT = Path(__file__).resolve().parent.parent
ARM_TOOLS = {"survey_scene", "locate_object", "grasp", "push", "place", "lift", "open_gripper",
             "verify_tree", "run_tree",
             "finish", "reset_episode", "status"}


def serve_command() -> tuple[str, list[str]]:
    """`bt-grasp serve` once the CLI wires it in; `python -m bt_grasp.mcp_server` (same code) before."""
    from bt_grasp.cli import build_parser

    subs = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    script = Path(sys.executable).with_name("bt-grasp")
    if "serve" in subs.choices:
        if script.exists():
            return str(script), ["serve"]
        return sys.executable, ["-m", "bt_grasp.cli", "serve"]
    return sys.executable, ["-m", "bt_grasp.mcp_server"]


def _data(result) -> dict:
    assert not result.is_error, result.content
    data = result.structured_content
    assert isinstance(data, dict)
    assert json.loads(result.content[0].text) == data  # text and structured content agree
    return data


def test_stdio_client_drives_the_arm_and_hits_the_budget(tmp_path) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    command, args = serve_command()
    log = tmp_path / "calls.jsonl"
    params = StdioServerParameters(
        command=command, cwd=str(ROOT),
        args=[*args, "--robot", "robots/ur5e_robotiq.yaml", "--perception", "sim", "--transport", "stdio",
              "--actions", "1", "--image-size", "256", "--seed", "0", "--log", str(log)])
    server_err = (tmp_path / "server.err").open("w")
    seen: dict = {}

    async def scenario() -> None:
        with anyio.fail_after(80):
            async with stdio_client(params, errlog=server_err) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    listed = await client.list_tools()
                    seen["tools"] = {t.name: t for t in listed.tools}

                    survey = _data(await client.call_tool("survey_scene", {}))
                    task = _data(await client.call_tool("status", {}))["task"]
                    loc = _data(await client.call_tool("locate_object", {"target": task}))
                    missing = _data(await client.call_tool("locate_object", {"target": "green giraffe"}))
                    grasp = _data(await client.call_tool("grasp", {"target": task}))
                    refused = _data(await client.call_tool("grasp", {}))
                    after = [_data(await client.call_tool(name, a)) for name, a in
                             (("survey_scene", {}), ("push", {"target": task}), ("place", {}))]
                    bad_args = await client.call_tool("locate_object", {})
                    status = _data(await client.call_tool("status", {}))
                    seen.update(survey=survey, task=task, loc=loc, missing=missing, grasp=grasp,
                                refused=refused, after=after, bad_args=bad_args, status=status)

    start = time.perf_counter()
    try:
        anyio.run(scenario)
    finally:
        server_err.close()
    elapsed = time.perf_counter() - start
    err_text = (tmp_path / "server.err").read_text()
    assert elapsed < 90, f"took {elapsed:.1f} s"

    tools = seen["tools"]
    assert set(tools) == ARM_TOOLS, err_text
    assert "target" in tools["grasp"].input_schema["properties"]

    survey = seen["survey"]
    assert survey["ok"] and survey["outcome"] == "found"
    assert seen["task"] in [o["name"] for o in survey["scene"]["objects"]]

    loc = seen["loc"]
    assert loc["outcome"] in ("found", "occluded") and loc["mask"]["n_points"] > 0
    assert len(loc["mask"]["bbox"]) == 4
    assert seen["missing"]["outcome"] == "not_found" and not seen["missing"]["terminal"]

    grasp = seen["grasp"]
    assert grasp["attempted"] and grasp["label"] in LABELS and grasp["confidence"] is not None
    assert grasp["exec_status"] in ("SUCCESS", "FAIL", "WAIT_CLARIFY")
    assert grasp["actions_used"] == grasp["action_budget"] == 1 and not grasp["terminal"]

    refused = seen["refused"]
    assert refused["terminal"] and refused["decision"] == "WAIT_CLARIFY"
    assert "action budget spent" in refused["reason"]
    for r in seen["after"]:
        assert r["terminal"] and r["decision"] == "WAIT_CLARIFY" and r["outcome"] == "terminal"

    assert seen["bad_args"].is_error  # the SDK's own argument check: an error result, server lives on
    assert seen["status"]["terminal"] and seen["status"]["counters"]["primitive_calls"] == {"grasp": 1}

    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["tool"] for x in lines][:3] == ["survey_scene", "status", "locate_object"]
    assert "bt-grasp serve: ur5e_robotiq" in err_text  # the banner went to stderr, not the wire


def test_serve_reports_a_bad_budget_in_one_line(capsys) -> None:
    from bt_grasp.mcp_server.cli import main

    assert main(["--actions", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "--actions must be >= 0, got -1"


def test_missing_sdk_is_one_line(monkeypatch) -> None:
    from bt_grasp.errors import BackendUnavailable
    from bt_grasp.mcp_server.server import require_mcp

    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    with pytest.raises(BackendUnavailable) as exc:
        require_mcp()
    assert "pip install 'bt_grasp[mcp]'" in str(exc.value) and "\n" not in str(exc.value)


def test_serve_parser_defaults() -> None:
    from bt_grasp.mcp_server.cli import add_serve_parser

    parser = argparse.ArgumentParser()
    add_serve_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["serve"])
    assert (args.transport, args.perception, args.actions, args.perception_streak) == ("stdio", "geometric", 10, 5)
