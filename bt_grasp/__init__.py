"""bt_grasp: declarative behavior trees for robot grasping with provably bounded recovery."""

__version__ = "0.1.0"
