"""Plug-ins by name: the built-ins are entry points like any other, names are checked when a
profile loads, and a broken plug-in is one line naming its entry point."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import ROOT

from bt_grasp import plugins
from bt_grasp.errors import UserError
from bt_grasp.profile import validate_profile


def fake_distribution(site: Path, name: str, entry_points: str) -> None:
    """An installed distribution as importlib.metadata sees it: a dist-info folder on sys.path."""
    info = site / f"{name}-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(entry_points)


@pytest.fixture()
def site(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_the_built_in_table_is_what_pyproject_declares():
    tomllib = pytest.importorskip("tomllib")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    for group in (plugins.PERCEIVERS, plugins.DRIVERS, plugins.NODES):
        assert declared.get(group, {}) == plugins.BUILTIN[group], group


def test_built_ins_load_through_the_entry_point_path():
    from bt_grasp.perception.geometric import GeometricPerceiver

    assert plugins.names(plugins.PERCEIVERS)[:2] == ["geometric", "sim"]
    assert isinstance(plugins.make_perceiver("geometric"), GeometricPerceiver)
    from bt_grasp.builtin_drivers import pybullet_arm

    assert plugins.load(plugins.DRIVERS, "pybullet_arm") is pybullet_arm


def test_an_installed_plugin_is_listed_and_loaded(site):
    (site / "my_vision.py").write_text("class Seg:\n    name = 'seg'\n    def __init__(self, **kw):\n"
                                       "        self.kw = kw\n")
    fake_distribution(site, "my_vision", "[bt_grasp.perceivers]\nseg = my_vision:Seg\n")
    try:
        assert "seg" in plugins.names(plugins.PERCEIVERS)
        assert plugins.make_perceiver("seg", threshold=3).kw == {"threshold": 3}
    finally:
        sys.modules.pop("my_vision", None)


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(UserError) as err:
        plugins.load(plugins.DRIVERS, "pybulet_arm", file="robot.yaml")
    assert str(err.value) == ("robot.yaml: unknown driver 'pybulet_arm' (did you mean pybullet_arm?) "
                              "(known: mujoco_arm, pybullet_arm, stretch)")


def test_a_broken_plugin_is_one_line_naming_its_entry_point(site):
    (site / "broken_vision.py").write_text("import no_such_dependency\n")
    fake_distribution(site, "broken_vision", "[bt_grasp.perceivers]\nbroken = broken_vision:Seg\n")
    try:
        with pytest.raises(UserError) as err:
            plugins.make_perceiver("broken")
    finally:
        sys.modules.pop("broken_vision", None)
    assert str(err.value) == ("plug-in bt_grasp.perceivers 'broken' = 'broken_vision:Seg' cannot be loaded: "
                              "ModuleNotFoundError: No module named 'no_such_dependency' "
                              "(fix or uninstall the package that declares it)")


PROFILE = (ROOT / "robots" / "ur5e_robotiq.yaml").read_text()


def test_the_profile_names_its_driver_and_perceiver_and_both_are_checked(tmp_path):
    path = tmp_path / "robot.yaml"
    path.write_text(PROFILE.replace("driver: pybullet_arm", "driver: pybullet_arm\nperception: sim"))
    assert validate_profile(path).perception == "sim"
    assert validate_profile(ROOT / "robots" / "ur5e_robotiq.yaml").perception == "geometric"
    path.write_text(PROFILE.replace("driver: pybullet_arm", "driver: pybullet_arm\nperception: vlm"))
    with pytest.raises(UserError) as err:
        validate_profile(path)
    line = PROFILE.splitlines().index("driver: pybullet_arm") + 2
    assert str(err.value) == (f"{path}:{line}:13: profile field perception: unknown perceiver 'vlm' "
                              "(known: geometric, sim)")
