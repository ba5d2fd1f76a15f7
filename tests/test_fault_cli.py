"""Faults through the command line: `bt-grasp run` (a subprocess, and cli.main), `bench` (one
episode) and `serve` (the MCP SDK's stdio client, a client that goes away, SIGTERM), with the
`fault` driver and perceiver plug-ins (bt_grasp.testing.faults). Each ends in a recorded decision
(or, for a robot that cannot start, one line and exit 3), no traceback, the driver stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from bt_grasp.cli import main
from bt_grasp.testing.faults import DEMO_TREE, FAULT_DRIVER, FAULT_PERCEIVER, profile_yaml

ROOT = Path(__file__).resolve().parent.parent
BT_GRASP = [sys.executable, "-m", "bt_grasp.cli"]


def files(tmp_path: Path, fault: str | None = None, call_timeout_s: float | None = 0.5) -> tuple[str, str]:
    """(tree, robot profile) files running the fault plug-ins on the fake arm."""
    tree, profile = tmp_path / "demo.yaml", tmp_path / "fault_arm.yaml"
    tree.write_text(DEMO_TREE)
    profile.write_text(profile_yaml(fault, call_timeout_s=call_timeout_s))
    return str(tree), str(profile)


def bt_grasp(args: list[str], env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*BT_GRASP, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, **(env or {})})


def final(trace: Path) -> dict:
    return json.loads(trace.read_text().splitlines()[-1])


@pytest.mark.parametrize("fault", ["poll:hang", "clock:wrong_type", "locate:raise:1+", "halt:raise"])
def test_run_records_the_decision_of_a_faulty_robot(tmp_path, fault) -> None:
    """A subprocess run: the summary line, the trace's final line, exit 0, no traceback; the
    driver's log shows stop() after the fault."""
    tree, profile = files(tmp_path)
    log, trace = tmp_path / "calls.log", tmp_path / "run.jsonl"
    var = "BT_GRASP_PERCEIVER_FAULT" if fault.startswith("locate") else "BT_GRASP_DRIVER_FAULT"
    done = bt_grasp(["run", tree, "--robot", profile, "--trace", str(trace)],
                    env={var: fault, "BT_GRASP_FAULT_LOG": str(log)})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and done.stderr == ""
    decision = final(trace)
    assert done.stdout.startswith(f"{decision['decision']}: {decision['reason']} |")
    assert "stop" in log.read_text().split()
    if fault == "poll:hang":
        assert decision["reason"] == "driver not responding: slow_open poll gave no answer within 0.5 s"


@pytest.mark.parametrize("fault", ["factory:raise", "reset:raise", "reset:hang"])
def test_a_robot_that_cannot_start_is_one_line_and_exit_3(tmp_path, capsys, fault) -> None:
    tree, profile = files(tmp_path, fault)
    trace = tmp_path / "run.jsonl"
    code = main(["run", tree, "--robot", profile, "--trace", str(trace)])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert err.startswith("bt-grasp: robot 'fault_arm' could not start: ") and err.count("\n") == 1
    assert final(trace)["decision"] == "WAIT_CLARIFY" and final(trace)["reason"].startswith("setup failed: ")


def test_bench_records_a_decision_for_an_episode_whose_driver_faults(tmp_path) -> None:
    """One bench episode on the simulated arm wrapped by the fault driver (its poll raises once):
    the record holds a decision, no error, and the run did not crash the worker."""
    from bt_grasp.bench.results import load_records

    profile = yaml.safe_load((ROOT / "robots" / "ur5e_robotiq.yaml").read_text())
    profile.update(name="ur5e_fault", driver=FAULT_DRIVER, driver_options={"wrap": "pybullet_arm", "fault": "poll:raise"})
    path = tmp_path / "ur5e_fault.yaml"
    path.write_text(yaml.safe_dump(profile))
    out = tmp_path / "bench"
    code = main(["bench", "--trees", "clutter", "--robot", str(path), "--seeds", "0", "--episodes", "1",
                 "--perception", "sim", "--workers", "1", "--image-size", "128", "--out", str(out),
                 "--no-progress"])
    assert code == 0
    records = load_records(out / "results.jsonl")
    assert len(records) == 1 and "error" not in records[0]
    assert records[0]["decision"] in ("FINALIZE", "WAIT_CLARIFY") and records[0]["reason"]


def test_clutter_on_the_arm_names_a_camera_that_keeps_failing(tmp_path) -> None:
    """The shipped tree on the simulated arm with a perceiver whose locate always raises: the
    search ends at the perception-streak guard, and its reason names the fault."""
    trace = tmp_path / "run.jsonl"
    done = bt_grasp(["run", "clutter", "--perception", FAULT_PERCEIVER, "--image-size", "128", "--trace", str(trace)],
                    env={"BT_GRASP_PERCEIVER_FAULT": "locate:raise:1+", "BT_GRASP_PERCEIVER_WRAP": "geometric"},
                    timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert final(trace)["reason"] == ("perception loop: 5 perception calls in a row without a manipulation "
                                      "(last fault: locate: RuntimeError: injected fault: locate failed)")


# -- serve -------------------------------------------------------------------------------------------

def serve(profile: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([*BT_GRASP, "serve", "--robot", profile], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, **env})


def test_serve_answers_status_while_a_call_hangs_and_decides_not_responding(tmp_path) -> None:
    pytest.importorskip("mcp", reason="MCP SDK not installed (pip install 'bt_grasp[mcp]')")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    _, profile = files(tmp_path, call_timeout_s=1.0)
    log = tmp_path / "calls.log"
    params = StdioServerParameters(command=sys.executable, args=["-m", "bt_grasp.cli", "serve", "--robot", profile],
                                   cwd=str(ROOT), env={**os.environ, "BT_GRASP_DRIVER_FAULT": "poll:hang",
                                                       "BT_GRASP_FAULT_LOG": str(log)})
    seen: dict = {}

    async def scenario() -> None:
        with anyio.fail_after(60):
            async with stdio_client(params, errlog=(tmp_path / "err").open("w")) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()

                async def lift() -> None:
                    seen["lift"] = (await session.call_tool("lift", {"height": 0.1})).structured_content

                async with anyio.create_task_group() as group:
                    group.start_soon(lift)
                    await anyio.sleep(0.3)
                    with anyio.fail_after(0.5):  # answered while the lift waits for the robot
                        seen["status"] = (await session.call_tool("status", {})).structured_content
                seen["after"] = (await session.call_tool("status", {})).structured_content

    anyio.run(scenario)
    assert seen["status"]["busy"] is True and seen["status"]["decision"] is None
    assert seen["lift"]["terminal"] and seen["lift"]["decision"] == "WAIT_CLARIFY"
    assert seen["lift"]["reason"] == "driver not responding: lift poll gave no answer within 1 s"
    assert seen["after"]["busy"] is False
    assert "stop" in log.read_text().split()
    assert "Traceback" not in (tmp_path / "err").read_text()


def test_serve_cancels_the_call_of_a_client_that_went_away(tmp_path) -> None:
    """stdin closes while a call hangs (with a 30 s limit): the server cancels it, stops and
    closes the robot, and exits at once."""
    _, profile = files(tmp_path, call_timeout_s=30.0)
    log = tmp_path / "calls.log"
    proc = serve(profile, {"BT_GRASP_DRIVER_FAULT": "poll:hang", "BT_GRASP_FAULT_LOG": str(log)})
    assert proc.stderr.readline().startswith("bt-grasp serve: fault_arm")
    for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "0"}}},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "lift", "arguments": {}}}):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    deadline = time.monotonic() + 20
    while "poll" not in (log.read_text().split() if log.exists() else []):  # the lift hangs in its poll
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=15) == 0 and "Traceback" not in err
    assert log.read_text().split()[-2:] == ["stop", "close"]


def test_serve_stops_and_closes_the_robot_on_sigterm(tmp_path) -> None:
    _, profile = files(tmp_path)
    log = tmp_path / "calls.log"
    proc = serve(profile, {"BT_GRASP_FAULT_LOG": str(log)})
    assert proc.stderr.readline().startswith("bt-grasp serve: fault_arm")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0 and "Traceback" not in err
    assert log.read_text().split() == ["reset", "stop", "close"]


@pytest.mark.parametrize("fault", ["factory:raise", "reset:raise"])
def test_serve_with_a_robot_that_cannot_start_is_one_line_and_exit_3(tmp_path, fault) -> None:
    _, profile = files(tmp_path, fault)
    done = bt_grasp(["serve", "--robot", profile])
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.startswith("bt-grasp: robot 'fault_arm' could not start: RuntimeError: injected fault")
    assert done.stderr.count("\n") == 1


def test_a_module_attr_plug_in_that_does_not_import_is_one_line_exit_2(tmp_path, capsys) -> None:
    """`module:attr` names load without an entry point; a wrong one is bad input, not a crash."""
    tree, _ = files(tmp_path)
    code = main(["run", tree, "--driver", "no_such_module:make", "--perception", FAULT_PERCEIVER])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "plug-in bt_grasp.drivers 'no_such_module:make'" in err and "ModuleNotFoundError" in err
