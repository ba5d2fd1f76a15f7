"""Deprecated path of bt_grasp.py_trees_controls (py_trees' controls, state as data), kept for one
release."""

from bt_grasp._renamed import alias

alias(__name__, "bt_grasp.py_trees_controls")
