"""A simulated Stretch: PyBullet world + a stretch_body-shaped robot object + the unchanged driver.

`factory.make_sim_stretch_driver(profile)` returns a `SimStretchDriver`, which *is* a StretchDriver (all
motion logic inherited, nothing overridden on the robot path) whose robot is a `body.SimStretchRobot`,
whose clock is simulated time, and whose camera renders from the head camera link. It adds what
only a simulator can: ground truth (GroundTruth protocol) and physical fault injection.
"""
