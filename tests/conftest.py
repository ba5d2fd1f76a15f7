"""Fixtures shared by the test files: the simulated robots, built once per test file.

Building a robot loads meshes (a second or two), so each is module-scoped: the tests of one file
share it and reset the scene they need. Simulator imports happen inside the fixtures, so files
that use none of them never import pybullet. Shared fakes live in fakes.py, shared helpers in
helpers.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def arm(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The PyBullet UR5e arm; the test module may set ARM_IMAGE_SIZE (default 256 px)."""
    pytest.importorskip("airo_models")
    from bt_grasp.drivers.pybullet_arm.driver import PyBulletArm
    from bt_grasp.profile import load_profile

    robot = PyBulletArm(load_profile("ur5e_robotiq"), image_size=getattr(request.module, "ARM_IMAGE_SIZE", 256))
    yield robot
    robot.close()


@pytest.fixture(scope="module")
def stretch_profile() -> Any:
    """The Stretch 3 robot profile shipped in robots/."""
    from bt_grasp.profile import load_profile

    return load_profile("robots/stretch3.yaml")


@pytest.fixture(scope="module")
def sim_stretch(stretch_profile: Any) -> Iterator[Any]:
    """The unchanged StretchDriver on the simulated Stretch (needs hello-robot-stretch-urdf)."""
    pytest.importorskip("stretch_urdf", reason="hello-robot-stretch-urdf not installed")
    from bt_grasp.drivers.stretch.sim.factory import make_sim_stretch_driver

    driver = make_sim_stretch_driver(stretch_profile)
    yield driver
    driver.close()
