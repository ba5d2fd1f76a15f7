"""Hello Robot Stretch: a stretch_body driver, its head camera, and a simulated Stretch.

`StretchDriver` talks to a robot only through the stretch_body object model, so the same class
runs the real robot (`stretch_body.robot.Robot`) and `sim.SimStretchRobot`, the PyBullet-backed
re-implementation of the subset of that model the driver uses.
"""

from bt_grasp.drivers.stretch.driver import StretchDriver, make_stretch_driver

__all__ = ["StretchDriver", "make_stretch_driver"]
