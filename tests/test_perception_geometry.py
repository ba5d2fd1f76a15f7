"""Camera maths: back-projection inverts projection for any pose; the plane fit resists clutter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from bt_grasp.errors import UserError
from bt_grasp.perception.backends import make_perceiver
from bt_grasp.perception.geometry import (
    backproject,
    fit_table_plane,
    pixel_ray_base,
    pointmap,
    project,
    unique_rows,
)


@settings(max_examples=40, deadline=None)
@given(f=st.floats(200, 900), cx=st.floats(20, 60), cy=st.floats(20, 60),
       rot=st.lists(st.floats(-np.pi, np.pi), min_size=3, max_size=3),
       t=st.lists(st.floats(-1, 1), min_size=3, max_size=3), seed=st.integers(0, 1000))
def test_backproject_inverts_project(f, cx, cy, rot, t, seed):
    K = np.array([[f, 0, cx], [0, f * 1.01, cy], [0, 0, 1]])
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("xyz", rot).as_matrix()
    T[:3, 3] = t
    rng = np.random.default_rng(seed)
    depth = rng.uniform(0.2, 2.0, (48, 64)).astype(np.float32)
    depth[rng.random(depth.shape) < 0.1] = 0.0  # unknown pixels
    P = pointmap(depth, K, T)
    assert np.isnan(P[depth == 0]).all()
    pts = backproject(depth, K, T)
    assert np.allclose(pts, P[depth > 0])
    uv, z = project(pts, K, T)
    v, u = np.nonzero(depth > 0)
    assert np.allclose(uv, np.column_stack([u, v]), atol=1e-6)
    assert np.allclose(z, depth[depth > 0], atol=1e-5)
    o, d = pixel_ray_base(float(u[0]), float(v[0]), K, T)
    along = (pts[0] - o) @ d
    assert np.allclose(o + along * d, pts[0], atol=1e-6)


def test_plane_fit_with_objects_and_tilt():
    rng = np.random.default_rng(3)
    n_true = Rotation.from_euler("x", 3, degrees=True).apply([0, 0, 1])
    xy = rng.uniform(-0.4, 0.4, (20000, 2))
    table = np.column_stack([xy, -(n_true[0] * xy[:, 0] + n_true[1] * xy[:, 1]) / n_true[2] + 0.7])
    table += rng.normal(0, 0.001, table.shape)
    boxes = np.column_stack([rng.uniform(-0.2, 0.2, (8000, 2)), rng.uniform(0.72, 0.8, 8000)])
    wall = np.column_stack([np.full(6000, 0.4), rng.uniform(-0.4, 0.4, 6000), rng.uniform(0.7, 1.5, 6000)])
    plane = fit_table_plane(np.vstack([table, boxes, wall]))
    assert plane is not None
    assert np.degrees(np.arccos(min(1.0, plane.normal @ n_true))) < 0.5
    assert abs(plane.z_at(0.0, 0.0) - 0.7) < 0.002
    assert fit_table_plane(np.zeros((10, 3))) is None


def test_factory():
    assert make_perceiver("sim").name == "sim"
    assert make_perceiver("geometric", min_pixels=5).name == "geometric"
    with pytest.raises(UserError):
        make_perceiver("oracle")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(1, 3), st.sampled_from([3, 1000, 2 ** 40]), st.integers(0, 2 ** 31 - 1))
def test_unique_rows_is_numpys_unique_over_rows(n, k, scale, seed):
    """Same rows, order, first indices and counts as np.unique(axis=0), spans that overflow one
    int64 key included (they fall back to numpy)."""
    rows = np.random.default_rng(seed).integers(-scale, scale, size=(n, k))
    want = np.unique(rows, axis=0, return_index=True, return_counts=True)
    got = unique_rows(rows, return_index=True, return_counts=True)
    for w, g in zip(want, got, strict=True):
        assert np.array_equal(w, g)
    assert np.array_equal(unique_rows(rows), want[0])
