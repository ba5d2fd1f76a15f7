"""The Driver seam holds: node modules reach the robot only through methods and attributes that a
protocol in bt_grasp/drivers/ declares, never through `driver.robot` (a vendor object model) or a
name computed at run time; and the mobile leaves fall back cleanly on drivers lacking a protocol."""

from __future__ import annotations

import ast
import typing
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.drivers import base, capabilities, motion
from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.capabilities import Head
from bt_grasp.nodes.mobile_motions import Close, Open
from bt_grasp.nodes.mobile_survey import WalkAround
from bt_grasp.perception.types import SceneGraph
from bt_grasp.watchdog.telemetry import Telemetry

ROOT = Path(__file__).resolve().parents[1]
# The scenario harness scores trials from simulator ground truth (like bt_grasp/bench/): it is not a node.
HARNESS = {ROOT / "bt_grasp" / "mobile" / "scenarios.py"}
NODE_MODULES = sorted(p for p in [*(ROOT / "bt_grasp" / "nodes").glob("*.py"), *(ROOT / "bt_grasp" / "mobile").glob("*.py")]
                      if p not in HARNESS)


def declared() -> set[str]:
    """Every method and attribute some driver protocol declares."""
    names: set[str] = set()
    for mod in (base, capabilities, motion):
        for obj in vars(mod).values():
            if isinstance(obj, type) and getattr(obj, "_is_protocol", False) and obj.__module__ == mod.__name__:
                names |= {n for n in vars(obj) if not n.startswith("_")} | set(typing.get_type_hints(obj))
    return names


def _is_driver(node: ast.AST, aliases: set[str]) -> bool:
    """`driver`, `<anything>.driver`, or a local name bound to one of those."""
    if isinstance(node, ast.Name):
        return node.id == "driver" or node.id in aliases
    return isinstance(node, ast.Attribute) and node.attr == "driver"


def _aliases(tree: ast.AST) -> set[str]:
    """Names assigned a driver expression (also inside `x if c else y`)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.NamedExpr)):
            value = node.value
            parts = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
            if any(_is_driver(p, out) for p in parts):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def seam_violations(source: str, where: str, allowed: set[str]) -> list[str]:
    tree = ast.parse(source)
    aliases = _aliases(tree)
    bad: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_driver(node.value, aliases) and node.attr not in allowed:
            bad.append(f"{where}:{node.lineno}: driver.{node.attr} is in no driver protocol")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
              and node.args and _is_driver(node.args[0], aliases)):
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                bad.append(f"{where}:{node.lineno}: {node.func.id}(driver, <computed name>) bypasses the protocols")
            elif name.value not in allowed:
                bad.append(f"{where}:{node.lineno}: driver.{name.value} is in no driver protocol")
    return bad


def test_node_modules_use_only_protocol_members_of_the_driver() -> None:
    allowed = declared()
    assert "robot" not in allowed
    assert {"look", "nav_to", "located_at", "receptacle_bodies", "user", "grasp_feasible"} <= allowed
    bad = [v for p in NODE_MODULES for v in seam_violations(p.read_text(), str(p.relative_to(ROOT)), allowed)]
    assert not bad, "\n".join(bad)


def test_the_scan_catches_what_it_forbids() -> None:
    allowed = declared()
    src = '''
def f(ctx, self):
    ctx.driver.robot.head.move_to("head_pan", 0.0)
    fn = getattr(self.ctx.driver, self.METHOD, None)
    head = ctx.driver if ok else None
    head.turn_head(1.0)
    hasattr(ctx.driver, "wheels")
    ctx.driver.nav_to("sofa")
    getattr(ctx.driver, "place_region", None)
'''
    bad = seam_violations(src, "x.py", allowed)
    assert len(bad) == 4, bad
    assert any("driver.robot" in b for b in bad) and any("computed name" in b for b in bad)
    assert any("turn_head" in b for b in bad) and any("wheels" in b for b in bad)


# -- walk_around with and without a head -------------------------------------------------------

class _Eyes:
    """A driver that can only observe (no Head)."""

    name = "eyes"

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def observe(self):
        self.calls.append(("observe",))
        return SimpleNamespace(depth=np.zeros((4, 4)), K=np.eye(3), T_cam_base=np.eye(4), clock=0.0)


class _HeadedEyes(_Eyes):
    def look(self, pan: float, tilt: float | None = None, timeout: float | None = None) -> Execution:
        self.calls.append(("look", round(pan, 4)))
        return Execution(Telemetry.empty(), 0.5, None if pan > -1.8 else "timeout")


def _walk(driver, views: int = 3):
    ctx = RunContext(registry=default_registry(), driver=driver,
                     perceiver=SimpleNamespace(survey=lambda o: SceneGraph([], [])), blackboard=Blackboard({}))
    leaf = WalkAround("walk", {"views": views}, ctx)
    return leaf, leaf.execute()


def test_walk_around_pans_the_head_through_the_protocol_and_comes_back() -> None:
    drv = _HeadedEyes()
    assert isinstance(drv, Head)
    _, res = _walk(drv, 3)
    assert drv.calls == [("look", -1.9), ("observe",), ("look", -1.575), ("observe",), ("look", -1.25),
                         ("observe",), ("look", -1.5708)]
    assert res.outcome == "not_found"
    assert res.event_meta["look_faults"] == ["pan -1.90: timeout"]  # reported, the survey goes on
    assert res.duration >= 4 * 0.5  # the head's time is the leaf's time


def test_walk_around_without_a_head_observes_from_where_it_looks() -> None:
    drv = _Eyes()
    assert not isinstance(drv, Head)
    _, res = _walk(drv, 3)
    assert drv.calls == [("observe",)] * 3
    assert res.outcome == "not_found" and res.event_meta["head_pans"] == 0


def test_open_and_close_without_articulation_are_infeasible_not_errors() -> None:
    ctx = RunContext(registry=default_registry(), driver=_Eyes(), perceiver=None, blackboard=Blackboard({}))
    for cls in (Open, Close):
        res = cls("a", {"marker": "cabinet drawer"}, ctx).execute()
        assert res.outcome == "infeasible" and res.event_meta["reason"] == "driver is not Articulated"
