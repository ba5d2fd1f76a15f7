"""The Python API: a tree built in code is the tree its YAML would be, errors are one line at the
user's own line, and a run takes any Driver and Perceiver and reports events and ticks."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers import ROOT

from bt_grasp import api
from bt_grasp.drivers.base import Execution
from bt_grasp.errors import UserError
from bt_grasp.perception.geometric import GeometricPerceiver
from bt_grasp.perception.synthetic import Prim, overhead_camera, render
from bt_grasp.watchdog.telemetry import Telemetry

YAML = textwrap.dedent("""\
    tree: pick
    goal: {object: red box}
    budgets: {actions: 4, perception_streak: 3, max_ticks: 2000}
    root:
      selector:
        id: episode
        children:
          - sequence:
              children:
                - survey_scene
                - locate_object: {id: locate, target: "{goal.object}"}
                - retry:
                    attempts: 2
                    child:
                      grasp: {id: grasp, target: "{target}"}
                - finalize: {reason: grasped}
          - switch:
              on: "{grasp.outcome}"
              cases:
                infeasible: {wait_clarify: {reason: no grasp}}
              default: {wait_clarify: {reason: not found}}
""")


def built() -> api.Tree:
    return api.Tree("pick", api.selector(
        api.sequence(
            api.leaf("survey_scene"),
            api.leaf("locate_object", id="locate", target="{goal.object}"),
            api.retry(api.leaf("grasp", id="grasp", target="{target}"), attempts=2),
            api.leaf("finalize", reason="grasped")),
        api.switch("{grasp.outcome}", cases={"infeasible": api.leaf("wait_clarify", reason="no grasp")},
                   default=api.leaf("wait_clarify", reason="not found")),
        id="episode"), budgets={"actions": 4, "perception_streak": 3, "max_ticks": 2000}, goal={"object": "red box"})


def test_a_tree_built_in_code_is_the_spec_its_yaml_loads_to():
    assert built().spec() == api.from_yaml(YAML)
    assert api.from_dict(built().to_dict()) == api.from_yaml(YAML)


def test_verify_dot_and_export_work_on_a_built_tree():
    from bt_grasp.dot import build_graph
    from bt_grasp.interop.btcpp_export import export_spec
    from bt_grasp.structure import structure

    spec = built().spec()
    res = api.verify(built())
    assert res.proven and res.bounds["primitive:grasp"] == 2 and res.bounds["actions"] == 2
    assert "grasp" in build_graph(structure(spec.root), title=spec.name).to_string()
    assert export_spec(spec) == export_spec(api.from_yaml(YAML)) and 'name="grasp"' in export_spec(spec)


def test_a_wrong_port_in_code_is_reported_at_the_line_that_built_the_node():
    line = sys._getframe().f_lineno + 2
    tree = api.Tree("t", api.sequence(
        api.leaf("grasp", forse=3),
        api.leaf("finalize")))
    with pytest.raises(UserError) as err:
        tree.spec()
    assert str(err.value).startswith(f"{__file__}:{line}: unknown port 'forse' for grasp (did you mean force?)")


def test_an_unknown_node_type_in_code_names_its_line():
    line = sys._getframe().f_lineno + 1
    tree = api.Tree("t", api.sequence(api.leaf("finalise")))
    with pytest.raises(UserError, match=r"unknown node type 'finalise' \(did you mean finalize\?\)") as err:
        tree.spec()
    assert (err.value.file, err.value.line) == (__file__, line)


def test_yaml_text_errors_are_at_string_line_col():
    with pytest.raises(UserError) as err:
        api.from_yaml(YAML.replace("attempts: 2", "attempts: two"))
    assert str(err.value) == "<string>:13:27: port 'attempts' of retry must be an integer, got a string ('two')"


def test_dict_errors_name_the_key_path():
    data = {"tree": "t", "root": {"sequence": {"children": ["survey_scene", {"grasp": {"forse": 1}}]}}}
    with pytest.raises(UserError) as err:
        api.from_dict(data)
    assert str(err.value).startswith("<dict>:root.sequence.children[1].grasp.forse: unknown port 'forse'")
    with pytest.raises(UserError, match=r"^<dict>:budgets.actions: budget 'actions' must be a literal"):
        api.from_dict({**built().to_dict(), "budgets": {"actions": "many"}})


def test_a_child_that_is_not_a_node_is_refused_where_it_is_written():
    with pytest.raises(UserError, match="a child of sequence must be a node"):
        api.sequence(api.leaf("survey_scene"), "finalize")


def test_shipped_trees_load_by_name():
    assert api.as_spec("clutter").name == "clutter"


def test_import_bt_grasp_stays_cheap_and_the_api_is_reexported_lazily():
    code = ("import sys, bt_grasp; heavy = [m for m in ('numpy', 'bt_grasp.api', 'pybullet') if m in sys.modules];"
            "print(heavy); print(bt_grasp.Tree is __import__('bt_grasp.api').api.Tree)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"]


# -- running with your own driver and perceiver --------------------------------------------------

class DeskCamera:
    """A fake robot for this test: a fixed camera over a red and a blue box (a ray-cast RGB-D
    frame), and a gripper whose open command always completes at once."""

    name = "desk"

    def __init__(self) -> None:
        K, T, shape = overhead_camera(size=96)
        self.frame = render([Prim("box", (0.5, 0.05, 0.025), (0.06, 0.05, 0.05), (0.8, 0.1, 0.1),
                                  name="red box", colour="red", category="box"),
                             Prim("box", (0.45, -0.1, 0.025), (0.05, 0.05, 0.05), (0.1, 0.2, 0.8),
                                  name="blue box", colour="blue", category="box")], K, T, shape)
        self.frame.annotations = None  # a real camera knows nothing of instances
        self.calls: list[str] = []

    def reset(self, episode: int = 0, seed: int = 0):
        self.calls.append("reset")
        return self.frame

    def observe(self):
        self.calls.append("observe")
        return self.frame

    def open_gripper(self, timeout=None):
        self.calls.append("open_gripper")
        return Execution(Telemetry.empty(), duration=0.5)

    def stop(self) -> None:
        self.calls.append("stop")

    def close(self) -> None:
        self.calls.append("close")


class Wrapped:
    """A perceiver of one's own: the geometric one, remembering what it was asked to locate."""

    name = "wrapped"

    def __init__(self) -> None:
        self.inner, self.asked = GeometricPerceiver(), []
        self.min_pixels = self.inner.min_pixels

    def survey(self, obs):
        return self.inner.survey(obs)

    def locate(self, obs, text, scene=None):
        self.asked.append(text)
        return self.inner.locate(obs, text, scene)


def test_a_run_uses_the_given_driver_and_perceiver_and_reports_events_and_ticks():
    tree = api.Tree("look", api.selector(
        api.sequence(api.leaf("survey_scene"), api.leaf("locate_object", target="{goal.object}"),
                     api.leaf("open_gripper", id="open"), api.leaf("finalize", reason="seen")),
        api.leaf("wait_clarify", reason="not seen")), budgets={"actions": 2})
    driver, perceiver = DeskCamera(), Wrapped()
    events, ticks = [], []
    result = api.run(tree, driver=driver, perceiver=perceiver, goal="Grasp the red box",
                     on_event=events.append, on_tick=ticks.append)
    assert (result.decision.value, result.reason) == ("FINALIZE", "seen")
    assert perceiver.asked == ["red box"]
    assert driver.calls[0] == "reset" and "observe" in driver.calls and "open_gripper" in driver.calls
    assert "close" not in driver.calls  # a driver passed in is the caller's to close
    assert [(e.node, e.primitive) for e in events] == [("open", "open_gripper")]
    assert [t.tick for t in ticks] == list(range(1, result.ticks + 1))
    visited = dict(ticks[-1].visited)
    assert visited["open"] == "SUCCESS" and visited["finalize_1"] == "SUCCESS"
    assert ticks[-1].clock == pytest.approx(result.clock)
    assert sum(len(t.events) for t in ticks) == 1 and ticks[-1].events[0] is events[0]


def test_a_run_writes_its_trace_with_tick_subscribers_attached(tmp_path):
    from bt_grasp.trace import read_trace

    tree = api.Tree("look", api.selector(api.leaf("survey_scene"), api.leaf("wait_clarify", reason="x")))
    ticks = []
    result = api.run(tree, driver=DeskCamera(), perceiver=Wrapped(), trace=str(tmp_path / "run.jsonl"),
                     on_tick=ticks.append)
    trace = read_trace(str(tmp_path / "run.jsonl"))
    assert trace.complete and trace.header["perception"] == "wrapped"
    assert [t["visited"] for t in trace.ticks] == [[list(v) for v in t.visited] for t in ticks]
    assert result.decision.value == "WAIT_CLARIFY"


def test_plugin_names_work_in_place_of_objects():
    with pytest.raises(UserError, match=r"unknown perceiver 'vlm' \(known: .*geometric.*sim"):
        api.run(built(), driver=DeskCamera(), perceiver="vlm")
    with pytest.raises(UserError, match=r"^unknown driver 'ur5' \(known: mujoco_arm, pybullet_arm, stretch\)$"):
        api.run(built(), driver="ur5")
    assert np.isfinite(api.run(api.Tree("s", api.leaf("wait_clarify", reason="x")), driver=DeskCamera(),
                               perceiver="geometric").clock)


class StreamingDesk(DeskCamera):
    """The fake robot with a gripper that takes three control periods to open, run across ticks."""

    control_period = 0.1

    def start(self, primitive, /, **kwargs):
        from bt_grasp.drivers.motion import SteppedMotion

        self.calls.append(f"start {primitive}")
        ran = [0]

        def steps():
            for _ in range(3):
                ran[0] += 1
                yield
            return Execution(Telemetry.empty(), ran[0] * self.control_period)

        return SteppedMotion(primitive, steps(), Telemetry.empty, lambda: ran[0] * self.control_period)


def test_tick_subscribers_see_a_motion_running_across_ticks():
    tree = api.Tree("open", api.selector(
        api.sequence(api.leaf("open_gripper", id="open"), api.leaf("finalize", reason="opened")),
        api.leaf("wait_clarify", reason="stuck")))
    ticks, events = [], []
    result = api.run(tree, driver=StreamingDesk(), perceiver=Wrapped(), on_tick=ticks.append,
                     on_event=events.append)
    assert result.reason == "opened"
    status = [dict(t.visited).get("open") for t in ticks]
    assert status[:3] == ["RUNNING", "RUNNING", "RUNNING"] and status[3] == "SUCCESS"
    assert [len(t.events) for t in ticks[:4]] == [0, 0, 0, 1] and len(events) == 1
    assert [t.clock for t in ticks] == sorted(t.clock for t in ticks)


def test_numpy_port_values_are_written_as_plain_numbers():
    spec = api.Tree("t", api.sequence(api.leaf("lift", id="lift", height=np.float32(0.25)),
                                      api.leaf("finalize"))).spec()
    height = spec.node("lift").params["height"]
    assert height == pytest.approx(0.25) and type(height) is float


def test_api_run_hides_the_pybullet_banner_like_the_cli(tmp_path):
    """A script's output is its own: no 'pybullet build time' line from a simulated run."""
    import os

    script = "from bt_grasp import api\nprint(api.run('open_loop', image_size=64).decision)\n"
    env = {k: v for k, v in os.environ.items() if k != "BT_GRASP_VERBOSE"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pybullet build time" not in done.stdout + done.stderr
    assert done.stdout.strip() in ("Decision.FINALIZE", "Decision.WAIT_CLARIFY", "FINALIZE", "WAIT_CLARIFY")


def test_every_error_of_a_tree_in_code_names_its_own_line():
    with pytest.raises(api.UserError) as info:
        api.Tree("t", api.sequence(api.leaf("grasp", forse=3),
                                   api.leaf("locate"))).spec()
    lines = str(info.value).splitlines()
    here = info.tb.tb_frame.f_code.co_filename
    assert len(lines) == 2 and all(line.startswith(f"{here}:") for line in lines)
    assert int(lines[1].split(":")[1]) == int(lines[0].split(":")[1]) + 1
    assert "unknown port 'forse'" in lines[0] and "unknown node type 'locate'" in lines[1]
