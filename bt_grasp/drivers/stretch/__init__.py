"""Hello Robot Stretch: a stretch_body driver, its head camera, and a simulated Stretch.

`driver.StretchDriver` talks to a robot only through the stretch_body object model, so the same class
runs the real robot (`stretch_body.robot.Robot`) and `sim.SimStretchRobot`, the PyBullet-backed
re-implementation of the subset of that model the driver uses. `factory.make_stretch_driver`
picks one of the two from the profile.
"""
