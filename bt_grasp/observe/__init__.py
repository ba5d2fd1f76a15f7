"""Runs seen in the tools robotics engineers already use: Foxglove (MCAP files and a live
WebSocket), Groot2 (BehaviorTree.CPP's log replay and live monitor) and ROS 2 bags.

Each recorder is a RunObserver (bt_grasp/observers.py); each library is an optional extra,
imported only when its recorder is asked for (`bt_grasp.observe.extras.need`)."""
