"""A leaning block is measured along its own faces, not along the spread of its points."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from bt_grasp.perception.features import planar_faces, principal_extents


def _leaning_cube_surface(side: float = 0.045, tilt_deg: float = 35.0, step: float = 0.0015) -> np.ndarray:
    """Points on the two faces of a cube a camera above sees when the cube leans `tilt_deg` about
    its x axis: its top and one side (1.5 mm grid)."""
    g = np.arange(-side / 2, side / 2 + 1e-9, step)
    u, v = (a.ravel() for a in np.meshgrid(g, g))
    top = np.stack([u, v, np.full_like(u, side / 2)], axis=1)
    front = np.stack([u, np.full_like(u, -side / 2), v], axis=1)
    return Rotation.from_euler("x", tilt_deg, degrees=True).apply(np.concatenate([top, front]))


def test_a_leaning_cubes_extents_in_its_face_frame_are_its_sides():
    pts = _leaning_cube_surface()
    _, faces, frame = planar_faces(pts)
    assert faces and faces[0][3] > 0.95  # the first face found is a full square
    assert np.allclose(frame, [0.045] * 3, atol=0.004)
    # The principal axes run along the two faces' diagonal: longer than any side.
    assert principal_extents(pts)[0] > 0.055


def test_a_balls_cap_shows_no_rectangular_face():
    """A ball's cap has no rectangular face (so no block frame is read off it: the frame is used
    only where a rectangle holds most of the points, vocabulary.rectangular_face)."""
    g = np.linspace(-1, 1, 60)
    x, y = (a.ravel() for a in np.meshgrid(g, g))
    keep = x ** 2 + y ** 2 < 0.8
    r = 0.03
    cap = np.stack([r * x[keep], r * y[keep], np.sqrt(r ** 2 - (r * x[keep]) ** 2 - (r * y[keep]) ** 2)], axis=1)
    _, faces, _ = planar_faces(cap)
    assert all(f[3] < 0.9 for f in faces)
