#!/usr/bin/env bash
# Optional stacks, so the Stretch contract test, the RealSense playback test and the local-Ray
# benchmark smoke test run
# instead of skipping: stretch_body is installed without its hardware dependencies (only what
# `import stretch_body` needs), pyrealsense2 needs libusb.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if ! ldconfig -p | grep -q libusb-1.0; then
  apt-get update -qq && apt-get install -y -qq libusb-1.0-0 >/dev/null
fi
# MuJoCo's arm world renders headless through EGL (MUJOCO_GL=egl), which needs libEGL.
if ! ldconfig -p | grep -q libEGL; then
  apt-get update -qq && apt-get install -y -qq libegl1 >/dev/null
fi
pip install -q '.[mujoco]'
pip install -q pyrealsense2 "ray>=2.9"
pip install -q --no-deps hello-robot-stretch-body
pip install -q opencv-python-headless filelock click pyserial aioserial psutil dynamixel-sdk meshio chime
# The tools' recorders (bt_grasp.observe): Foxglove (MCAP, live WebSocket), Groot2 (ZMQ + msgpack)
# and ROS 2 bags (rosbags, pure Python); websockets is the client the live Foxglove test uses.
pip install -q '.[foxglove,groot2,ros]' 'websockets>=12'
# BehaviorTree.CPP 4.8's Python binding: exported trees tick in BT.CPP, and the .btlog and the
# Groot2 replies are compared with BT.CPP's own FileLogger2 and Groot2Publisher.
pip install -q behaviortreepy
