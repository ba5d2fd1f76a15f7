"""The head camera path without a camera: a synthetic .bag recorded with pyrealsense2's software
device, played back (real time off) through RealSenseHeadCamera, and the head kinematic chain."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bt_grasp.drivers.stretch.camera import gaze_angles, head_camera_pose, odometry_pose


def _rs_or_skip():
    try:
        import pyrealsense2 as rs  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"pyrealsense2 not importable ({exc}): pip install pyrealsense2; "
                    "apt-get install libusb-1.0-0")


def _frame(w: int = 64, h: int = 48) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    u, v = np.meshgrid(np.arange(w), np.arange(h))
    rgb = np.stack([(4 * u) % 256, (5 * v) % 256, np.full_like(u, 77)], axis=-1).astype(np.uint8)
    depth = (0.5 + 0.01 * u + 0.002 * v).astype(np.float32)  # a tilted plane, 0.5 .. 1.2 m
    depth[0, 0] = 0.0  # unknown pixel stays 0
    K = np.array([[50.0, 0, 31.5], [0, 52.0, 23.5], [0, 0, 1]])
    return rgb, depth, K


def test_bag_roundtrip_gives_observation_data(tmp_path) -> None:
    _rs_or_skip()
    from bt_grasp.drivers.stretch.camera import RealSenseHeadCamera, write_synthetic_bag

    rgb, depth, K = _frame()
    bag = write_synthetic_bag(tmp_path / "head.bag", rgb, depth, K, n_frames=5)
    assert bag.stat().st_size > 0
    cam = RealSenseHeadCamera(bag=bag)
    try:
        out_rgb, out_depth, out_K, ann = cam.read()
    finally:
        cam.close()
    assert ann is None
    assert out_rgb.shape == rgb.shape and out_rgb.dtype == np.uint8
    assert out_depth.shape == depth.shape and out_depth.dtype == np.float32
    np.testing.assert_allclose(out_K, K, atol=1e-4)
    np.testing.assert_array_equal(out_rgb, rgb)
    # depth is aligned to colour (rs.align), which leaves a few holes (0 = unknown) even with
    # identical intrinsics, and may take a value from the next row (0.002 m here); every valid
    # pixel keeps its metres value within that
    valid = out_depth > 0
    assert valid.mean() > 0.85
    np.testing.assert_allclose(out_depth[valid], depth[valid], atol=2.5e-3)
    assert out_depth[0, 0] == 0.0


def test_missing_pyrealsense_is_backend_unavailable(monkeypatch) -> None:
    import builtins

    from bt_grasp.drivers.stretch import camera
    from bt_grasp.errors import BackendUnavailable

    real_import = builtins.__import__

    def no_rs(name, *a, **k):
        if name == "pyrealsense2":
            raise ImportError("No module named 'pyrealsense2'")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_rs)
    with pytest.raises(BackendUnavailable, match="pyrealsense2"):
        camera.RealSenseHeadCamera()


def test_chain_is_rigid_and_looks_where_gaze_says() -> None:
    for pan, tilt in [(-math.pi / 2, -0.8), (0.3, 0.2), (-2.0, -1.0)]:
        T = head_camera_pose(pan, tilt)
        np.testing.assert_allclose(T[:3, :3] @ T[:3, :3].T, np.eye(3), atol=1e-9)
        assert 1.1 < T[2, 3] < 1.45  # the head camera is ~1.3 m up
    target = np.array([0.2, -0.8, 0.6])
    pan, tilt = gaze_angles(target)
    p = np.linalg.inv(head_camera_pose(pan, tilt)) @ np.append(target, 1.0)
    assert p[2] > 0 and np.hypot(p[0], p[1]) / p[2] < 1e-4
    T = odometry_pose(0.1, 0.2, math.pi / 2)
    np.testing.assert_allclose(T @ [1, 0, 0, 1], [0.1, 1.2, 0, 1], atol=1e-12)
