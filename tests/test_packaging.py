"""Shipped trees and robot profiles are package data: found by name from any folder, in a checkout
and in a plain (non-editable) install; a path wins over a name; an unknown name is one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT

from bt_grasp.errors import UserError
from bt_grasp.profile import load_profile
from bt_grasp.resources import ROBOTS, TREES, profile_path, shipped_dir, shipped_names, tree_path

tomllib = pytest.importorskip("tomllib")


def _cli(args: list[str], cwd, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bt_grasp.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env=env)


def _pythonpath(*paths) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths)}


def test_pyproject_lists_every_package_and_maps_the_shipped_folders():
    from setuptools import find_namespace_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    code = {p for p in find_namespace_packages(str(ROOT), include=["bt_grasp*"])
            if any((ROOT / p.replace(".", "/")).glob("*.py"))}
    data = {f"bt_grasp.{kind}" + "".join(f".{part}" for part in d.relative_to(ROOT / kind).parts)
            for kind in (TREES, ROBOTS) for d in [ROOT / kind, *(ROOT / kind).rglob("*")]
            if d.is_dir() and any(d.glob("*.yaml"))}
    assert set(config["packages"]) == code | data
    assert config["package-dir"] == {"bt_grasp.trees": "trees", "bt_grasp.robots": "robots"}


def test_in_a_checkout_the_shipped_folders_are_the_repository_folders():
    assert shipped_dir(TREES) == ROOT / "trees" and shipped_dir(ROBOTS) == ROOT / "robots"
    assert {"clutter", "open_loop", "remove_all", "fetch_and_place", "mobile/fetch_open_loop"} \
        <= set(shipped_names(TREES))
    assert {"ur5e_robotiq", "stretch3", "stretch3_household"} <= set(shipped_names(ROBOTS))


def test_names_resolve_with_or_without_yaml_and_a_path_wins_over_a_name(tmp_path, monkeypatch):
    assert tree_path("clutter") == str(ROOT / "trees" / "clutter.yaml")
    assert tree_path("clutter.yaml") == tree_path("clutter")
    assert profile_path("stretch3") == ROOT / "robots" / "stretch3.yaml"
    assert load_profile("ur5e_robotiq").name == load_profile(None).name
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clutter").write_text("a local file")
    assert tree_path("clutter") == "clutter"


@pytest.mark.parametrize("bad", ["clutterr", "../trees/clutter", "/no/such/clutter"])
def test_an_unknown_name_is_one_line_listing_the_shipped_names(bad):
    with pytest.raises(UserError) as info:
        tree_path(bad)
    text = str(info.value)
    assert "\n" not in text and text.startswith(f"{bad}: tree not found")
    assert "clutter, fetch_and_place" in text


def test_the_cli_runs_shipped_trees_by_name_from_another_folder(tmp_path):
    env = _pythonpath(ROOT)
    ran = _cli(["run", "clutter", "--image-size", "128"], tmp_path, env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count("\n") == 1 and ran.stdout.startswith(("FINALIZE", "WAIT_CLARIFY"))
    by_path = _cli(["verify", str(ROOT / "trees" / "open_loop.yaml")], tmp_path, env)
    assert by_path.returncode == 0 and "PROVEN" in by_path.stdout
    unknown = _cli(["run", "clutter", "--robot", "stretch4"], tmp_path, env)
    assert unknown.returncode == 2
    assert unknown.stderr.strip().startswith("stretch4: robot profile not found")
    assert "(did you mean stretch3?)" in unknown.stderr and unknown.stderr.count("\n") == 1


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """What a wheel of bt_grasp holds (setuptools' build_py of a copy of the sources), alone on a
    PYTHONPATH: no checkout next to it. (.ci/run checks a real `pip install .` the same way.)"""
    base = tmp_path_factory.mktemp("install")
    src = base / "src"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True)
    if files.returncode != 0:
        pytest.skip("not a git checkout")
    for name in files.stdout.splitlines():
        if (ROOT / name).is_file() and (name.split("/")[0] in ("bt_grasp", "trees", "robots")
                                        or name in ("pyproject.toml", "README.md", "LICENSE")):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    site = base / "site"
    built = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                            "--build-lib", str(site)], cwd=src, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    return site


def test_a_plain_install_carries_the_shipped_trees_and_profiles(installed):
    for name in ("trees/clutter.yaml", "trees/subtrees/remove_occluder.yaml",
                 "trees/mobile/fetch_open_loop.yaml", "robots/stretch3.yaml", "robots/ur5e_robotiq.yaml"):
        assert (installed / "bt_grasp" / name).is_file(), name


def test_a_plain_install_runs_by_name_from_any_folder(installed, tmp_path):
    env = _pythonpath(installed)
    where = _cli(["run", "--help"], tmp_path, env)
    assert where.returncode == 0
    ran = _cli(["run", "clutter", "--image-size", "128", "--json"], tmp_path, env)
    assert ran.returncode == 0, ran.stderr
    assert '"decision"' in ran.stdout and ran.stderr == ""
    check = _cli(["verify", "open_loop"], tmp_path, env)
    assert check.returncode == 0 and "PROVEN" in check.stdout
    probe = subprocess.run([sys.executable, "-c", "import bt_grasp.resources as r; print(r.shipped_dir('robots'))"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert probe.stdout.strip() == str(installed / "bt_grasp" / "robots")


def test_a_plain_install_resolves_the_includes_of_shipped_trees(installed, tmp_path):
    """The mobile trees include '../fetch_and_place.yaml': the include root marker must ship."""
    assert (installed / "bt_grasp" / "trees" / ".bt-grasp-root").is_file()
    checked = _cli(["validate", "mobile/fetch_no_watchdog", "mobile/fetch_no_retry"], tmp_path,
                   _pythonpath(installed))
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.count(": ok") == 2


def test_validate_and_export_take_shipped_names_too(capsys):
    from bt_grasp.cli import main

    assert main(["validate", "clutter", "mobile/fetch_open_loop"]) == 0
    assert capsys.readouterr().out.count(": ok") == 2
    assert main(["export", "open_loop"]) == 0
    assert "<root" in capsys.readouterr().out


def test_profile_show_prints_a_shipped_profile_to_copy(capsys, tmp_path):
    """`bt-grasp profile show NAME > mine.yaml` gives a profile that loads like the shipped one."""
    from bt_grasp.cli import main

    assert main(["profile", "list"]) == 0
    assert {"ur5e_robotiq", "stretch3"} <= set(capsys.readouterr().out.splitlines())
    assert main(["profile", "show", "stretch3"]) == 0
    mine = tmp_path / "mine.yaml"
    mine.write_text(capsys.readouterr().out)
    assert load_profile(str(mine)).model_dump() == load_profile("stretch3").model_dump()
    assert main(["profile", "show", "stretch9"]) == 2
    assert capsys.readouterr().err.startswith("stretch9: robot profile not found")
