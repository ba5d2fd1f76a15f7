"""A driver plug-in: a thin wrapper around bt_grasp's simulated UR5e (PyBullet), not a robot.

It shows the factory signature every driver plug-in has, and that a wrapper sees every command:
`commands` lists the primitive methods called. A driver for a real arm implements the Driver
protocol (bt_grasp.drivers.base) itself, talking to its hardware instead of delegating.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.drivers.pybullet_arm import PyBulletArm

# The blocking Driver methods a tree's primitives call; a wrapper that also forwarded `start`
# (the Streaming protocol) would see motions started instead, so it is not forwarded.
PRIMITIVES = ("grasp", "lift", "place", "open_gripper", "push")


class LoggingArm:
    """Forwards everything to the simulated arm and records which primitives were called."""

    def __init__(self, arm: PyBulletArm) -> None:
        self.arm = arm
        self.name = "example_arm"
        self.commands: list[str] = []

    def __getattr__(self, attr: str) -> Any:
        if attr == "start":  # run primitives through the blocking methods below
            raise AttributeError(attr)
        value = getattr(self.arm, attr)
        if attr in PRIMITIVES:
            def logged(*args: Any, **kwargs: Any) -> Any:
                self.commands.append(attr)
                return value(*args, **kwargs)
            return logged
        return value


def make_driver(profile: Any, gui: bool = False, lighting: str = "easy", image_size: int | None = None,
                dry_run: bool = False) -> LoggingArm:
    """The factory bt_grasp calls with the robot profile and the run's options."""
    return LoggingArm(PyBulletArm(profile, gui=gui, lighting=lighting, image_size=image_size))
