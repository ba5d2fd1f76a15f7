"""Contract: the simulated stretch_body subset has the real classes' signatures and status keys.

stretch_body is imported in a subprocess with a throw-away fleet directory (its import reads
HELLO_FLEET_PATH/HELLO_FLEET_ID and the two fleet YAML files, and calls sys.exit without them), so
this test needs no robot. Skipped, with the reason, when stretch_body is not importable. CI:
  apt-get install -y libusb-1.0-0
  pip install --no-deps hello-robot-stretch-body
  pip install pyrealsense2 opencv-python-headless filelock click pyserial aioserial psutil \
      dynamixel-sdk meshio chime
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from bt_grasp.drivers.stretch.sim.body import SimStretchRobot
from bt_grasp.drivers.stretch.sim.dynamixels import SimDynamixel, SimEndOfArm, SimHead, SimStretchGripper
from bt_grasp.drivers.stretch.sim.steppers import SimBase, SimPrismaticJoint

# (real class path, sim class, methods the driver or the sim subset relies on)
CLASSES: list[tuple[str, type, tuple[str, ...]]] = [
    ("stretch_body.robot:Robot", SimStretchRobot,
     ("startup", "stop", "push_command", "wait_command", "is_homed", "get_status", "home")),
    ("stretch_body.end_of_arm_tools:ToolStretchGripper", SimEndOfArm,
     ("move_to", "move_by", "get_joint", "wait_until_at_setpoint", "startup", "stop", "pose",
      "is_tool_present", "pull_status")),
    ("stretch_body.stretch_gripper:StretchGripper", SimStretchGripper,
     ("move_to", "move_by", "pose", "pull_status", "wait_until_at_setpoint", "quick_stop",
      "pct_to_world_rad", "world_rad_to_pct", "startup", "stop")),
    ("stretch_body.dynamixel_hello_XL430:DynamixelHelloXL430", SimDynamixel,
     ("move_to", "move_by", "wait_until_at_setpoint", "pull_status", "quick_stop", "startup", "stop")),
    ("stretch_body.lift:Lift", SimPrismaticJoint,
     ("move_to", "move_by", "wait_until_at_setpoint", "wait_while_is_moving", "wait_for_contact",
      "push_command", "pull_status", "startup", "stop")),
    ("stretch_body.base:Base", SimBase,
     ("translate_by", "rotate_by", "set_velocity", "wait_until_at_setpoint", "wait_while_is_moving",
      "push_command", "pull_status", "startup")),
    ("stretch_body.head:Head", SimHead,
     ("move_to", "move_by", "get_joint", "wait_until_at_setpoint", "pose", "pull_status", "startup", "stop")),
]

# status keys StretchDriver reads, per object
DRIVER_KEYS = {
    "gripper": {"pos_pct", "effort", "stalled", "stall_overload", "gripper_conversion"},
    "lift": {"pos", "vel", "motor"},
    "lift.motor": {"is_mg_moving", "pos_calibrated"},
    "base": {"x", "y", "theta", "left_wheel", "right_wheel"},
    "base.left_wheel": {"is_mg_moving"},
    "head.head_pan": {"pos", "vel"},
}

_PROBE = textwrap.dedent("""
    import importlib, inspect, json, sys
    out = {"signatures": {}, "status": {}, "errors": []}
    for path, methods in json.loads(sys.argv[1]):
        mod, cls = path.split(":")
        C = getattr(importlib.import_module(mod), cls)
        out["signatures"][path] = {
            m: [[p.name, str(p.kind), repr(p.default)] for p in inspect.signature(getattr(C, m)).parameters.values()]
            for m in methods if hasattr(C, m)}
        out["signatures"][path]["__missing__"] = [m for m in methods if not hasattr(C, m)]
    def gripper():
        import stretch_body.stretch_gripper as sg
        g = sg.StretchGripper()
        out["pct_max_open"] = g.pct_max_open
        return {"gripper": g.status, "gripper.gripper_conversion": g.status["gripper_conversion"]}
    def lift():
        import stretch_body.lift as lift
        L = lift.Lift()
        return {"lift": L.status, "lift.motor": L.motor.status}
    def base():
        import stretch_body.base as base
        B = base.Base()
        return {"base": B.status, "base.left_wheel": B.left_wheel.status}
    def head():
        import stretch_body.head as head
        return {"head.head_pan": head.Head().get_joint("head_pan").status}  # = status["head_pan"] once started
    for part, read in (("gripper", gripper), ("lift", lift), ("base", base), ("head", head)):
        try:  # one part failing to import or start still lets the others report
            out["status"].update({name: sorted(status) for name, status in read().items()})
        except Exception as e:
            out["errors"].append("%s: %r" % (part, e))
    print("JSON" + json.dumps(out))
""")

_FLEET_CONFIG = """robot:
  model_name: RE2V0
  tool: tool_stretch_gripper
  serial_no: stretch-re2-0000
  batch_name: contract-test
lift: {i_feedforward: 0.54, range_m: [0.0, 1.1]}
arm: {i_feedforward: 0.0, range_m: [0.0, 0.52]}
base: {wheel_separation_m: 0.3153}
"""


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if importlib.util.find_spec("stretch_body") is None:
        pytest.skip("stretch_body not installed: pip install --no-deps hello-robot-stretch-body plus its "
                    "import deps (see this file's docstring)")
    fleet = tmp_path_factory.mktemp("fleet")
    robot_dir = fleet / "stretch-re2-0000"
    robot_dir.mkdir()
    (robot_dir / "stretch_configuration_params.yaml").write_text(_FLEET_CONFIG)
    (robot_dir / "stretch_user_params.yaml").write_text("{}\n")
    env = dict(os.environ, HELLO_FLEET_PATH=str(fleet), HELLO_FLEET_ID="stretch-re2-0000")
    arg = json.dumps([[p, list(m)] for p, _, m in CLASSES])
    proc = subprocess.run([sys.executable, "-c", _PROBE, arg], env=env, capture_output=True, text=True,
                          timeout=60, cwd=str(fleet))
    line = next((x for x in proc.stdout.splitlines() if x.startswith("JSON")), None)
    if line is None:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"stretch_body installed but not importable here: {last}")
    return json.loads(line[4:])


def _sim_sig(cls: type, method: str) -> list[list[str]]:
    return [[p.name, str(p.kind), repr(p.default)] for p in inspect.signature(getattr(cls, method)).parameters.values()]


@pytest.mark.parametrize("path,cls,methods", CLASSES, ids=[c[0].split(":")[1] for c in CLASSES])
def test_signatures_match_stretch_body(real: dict[str, Any], path: str, cls: type,
                                       methods: tuple[str, ...]) -> None:
    sigs = real["signatures"][path]
    assert sigs["__missing__"] == [], f"stretch_body {path} lacks {sigs['__missing__']}"
    for m in methods:
        assert _sim_sig(cls, m) == sigs[m], f"{cls.__name__}.{m} differs from {path}.{m}"


def test_status_keys_match_stretch_body(real: dict[str, Any]) -> None:
    assert not real["errors"], real["errors"]
    w = _world_free_status()
    assert set(w["gripper"]) == set(real["status"]["gripper"])
    assert set(w["gripper.gripper_conversion"]) == set(real["status"]["gripper.gripper_conversion"])
    for part in ("lift", "lift.motor", "base", "base.left_wheel", "head.head_pan"):
        assert set(w[part]) <= set(real["status"][part]), f"sim {part} invents {set(w[part]) - set(real['status'][part])}"
    for part, keys in DRIVER_KEYS.items():
        assert keys <= set(real["status"][part]) and keys <= set(w[part]), part
    from bt_grasp.drivers.stretch.sim.params import PCT_MAX_OPEN

    assert PCT_MAX_OPEN == pytest.approx(real["pct_max_open"], abs=1e-6)


def _world_free_status() -> dict[str, list[str]]:
    """Status keys of the sim classes, built on a stand-in world (no PyBullet needed)."""

    class _W:
        t = 0.0

    w: Any = _W()
    g = SimStretchGripper(w, lambda: None)
    lift = SimPrismaticJoint("lift", w, lambda: None)
    base = SimBase(w, lambda: None)
    head = SimHead(w, lambda: None)
    return {"gripper": list(g.status), "gripper.gripper_conversion": list(g.status["gripper_conversion"]),
            "lift": list(lift.status), "lift.motor": list(lift.motor.status), "base": list(base.status),
            "base.left_wheel": list(base.left_wheel.status), "head.head_pan": list(head.status["head_pan"])}


def test_contract_probe_is_self_contained() -> None:
    """The probe must not import bt_grasp (it runs against a bare stretch_body install)."""
    assert "bt_grasp" not in _PROBE
    assert Path(__file__).name.startswith("test_stretch_")
