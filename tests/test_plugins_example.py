"""The example plug-in package (tests/plugin_example), installed as a user would, used by name
through the CLI: its perceiver (--perception or the profile), its driver (--driver or the
profile) and its node type (in a tree file), all offline."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from bt_grasp.trace import read_trace

EXAMPLE = ROOT / "tests" / "plugin_example"
TREE = str(EXAMPLE / "example_tree.yaml")


def install(target: Path, work: Path) -> None:
    """Install the example package into `target` (a folder later put on PYTHONPATH), offline.

    pip builds it when the `wheel` package is there (older setuptools needs it for pip);
    otherwise setuptools installs the modules and the package's metadata (.egg-info, which
    importlib.metadata reads like a .dist-info) itself."""
    src = work / "src"
    shutil.copytree(EXAMPLE, src)  # builds write into the source folder
    if importlib.util.find_spec("wheel") is not None:
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
               "--quiet", "--target", str(target), str(src)]
    else:
        cmd = [sys.executable, "-c", "from setuptools import setup; setup()", "--quiet",
               "build_py", "--build-lib", str(target), "egg_info", "--egg-base", str(target)]
    done = subprocess.run(cmd, cwd=src, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    install(target, tmp_path_factory.mktemp("build"))
    return target


def cli(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    return subprocess.run([sys.executable, "-m", "bt_grasp.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def note_of(trace_path: Path) -> dict:
    """The example_note node's blackboard entry, as the trace recorded it."""
    trace = read_trace(str(trace_path))
    notes = [t["blackboard"]["note"] for t in trace.ticks if "note" in t.get("blackboard", {})]
    assert notes, "example_note never ran"
    return notes[-1]


def test_the_example_plugins_are_used_by_name_from_the_cli(site, tmp_path):
    trace = tmp_path / "run.jsonl"
    run = cli(site, "run", TREE, "--driver", "example_arm", "--perception", "example_counting",
              "--image-size", "96", "--trace", str(trace), "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    assert result["decision"] in ("FINALIZE", "WAIT_CLARIFY")
    assert read_trace(str(trace)).header["perception"] == "example_counting"
    note = note_of(trace)
    assert (note["driver"], note["perceiver"]) == ("example_arm", "example_counting")
    assert note["surveys"] >= 1
    assert note["commands"] == ["grasp"] * result["counters"]["primitive_calls"].get("grasp", 0)


def test_a_profile_names_the_plugins_and_validate_verify_nodes_see_the_node(site, tmp_path):
    profile = tmp_path / "my_robot.yaml"
    text = (ROOT / "robots" / "ur5e_robotiq.yaml").read_text()
    profile.write_text(text.replace("driver: pybullet_arm", "driver: example_arm\nperception: example_counting"))
    trace = tmp_path / "run.jsonl"
    run = cli(site, "run", TREE, "--robot", str(profile), "--image-size", "96", "--trace", str(trace),
              cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert (note_of(trace)["driver"], note_of(trace)["perceiver"]) == ("example_arm", "example_counting")
    assert cli(site, "validate", TREE, str(profile), cwd=tmp_path).returncode == 0
    verify = cli(site, "verify", TREE, "--json", cwd=tmp_path)
    assert verify.returncode == 0 and json.loads(verify.stdout)["proven"]
    assert "### `example_note`" in cli(site, "nodes", cwd=tmp_path).stdout


def test_without_the_package_the_names_are_unknown_and_the_known_ones_are_listed(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "bt_grasp.cli", "run", "clutter", "--driver", "example_arm"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert run.stderr.startswith("--driver: unknown driver 'example_arm'")
    assert run.stderr.endswith(" (known: mujoco_arm, pybullet_arm, stretch)\n") and run.stderr.count("\n") == 1


def broken_distribution(folder: Path, group: str, entry: str) -> Path:
    """A distribution declaring `entry` in `group` whose module does not exist."""
    info = folder / "broken_plugin-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken_plugin\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")
    return folder


def test_a_broken_node_plugin_is_one_line_naming_the_entry_point_and_exit_2(site, tmp_path):
    broken = broken_distribution(tmp_path / "broken", "bt_grasp.nodes", "wave = broken_nodes_missing.leaves:Wave")
    run = cli(Path(f"{site}{os.pathsep}{broken}"), "validate", TREE, cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1
    assert run.stderr.startswith("plug-in bt_grasp.nodes 'wave' = 'broken_nodes_missing.leaves:Wave' cannot be "
                                 "loaded: ModuleNotFoundError: No module named 'broken_nodes_missing'")


def test_a_broken_perceiver_or_driver_stops_the_run_before_the_robot_starts(tmp_path):
    for group, option in (("bt_grasp.perceivers", "--perception"), ("bt_grasp.drivers", "--driver")):
        broken = broken_distribution(tmp_path / group, group, "broken = no_such_backend:make")
        run = cli(broken, "run", "clutter", option, "broken", cwd=tmp_path)
        assert run.returncode == 2, run.stderr
        assert run.stderr == (f"{option}: plug-in {group} 'broken' = 'no_such_backend:make' cannot be loaded: "
                              "ModuleNotFoundError: No module named 'no_such_backend' "
                              "(fix or uninstall the package that declares it)\n")
