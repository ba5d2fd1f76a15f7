"""The object catalogue: size, unique appearance names, graspability, discriminating names."""

from __future__ import annotations

import os

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bt_grasp.bench.catalogue import (
    MAX_GRASP_WIDTH,
    by_name,
    catalogue,
    distinguishing_name,
    extents,
    graspable_width,
)
from bt_grasp.bench.objects import ObjectSpec

CAT = catalogue()


def test_at_least_150_distinct_objects_with_unique_names():
    assert len(CAT) >= 150
    assert len({s.name for s in CAT}) == len(CAT)
    assert len({(s.shape, s.dims, s.rgba, s.mesh) for s in CAT}) == len(CAT)


@pytest.mark.parametrize("spec", CAT, ids=lambda s: s.name)
def test_spec_fields_are_consistent(spec: ObjectSpec):
    assert spec.colour in spec.name and spec.category in spec.name
    assert spec.size in ("small", "medium", "large")
    assert 0.0 < spec.mass < 1.0 and 0.3 <= spec.friction <= 1.2
    assert all(0.0 <= c <= 1.0 for c in spec.rgba)
    n_dims = {"box": 3, "cylinder": 2, "sphere": 1, "mesh": 1}[spec.shape]
    assert len(spec.dims) == n_dims
    if spec.shape == "mesh":
        assert spec.mesh and os.path.exists(os.path.join(pybullet_data.getDataPath(), spec.mesh))
    assert graspable_width(spec) <= MAX_GRASP_WIDTH


def test_size_word_present_exactly_when_the_colour_category_has_several_sizes():
    groups: dict[tuple[str, str], list[ObjectSpec]] = {}
    for s in CAT:
        groups.setdefault((s.colour, s.category), []).append(s)
    for specs in groups.values():
        for s in specs:
            assert s.name.startswith(s.size + " ") == (len(specs) > 1), s.name


def test_meshes_fit_the_gripper_when_loaded():
    """The tabulated mesh extents match what PyBullet loads at the catalogue scale."""
    cid = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
        seen: set[tuple[str, float]] = set()
        for s in CAT:
            if s.shape != "mesh" or (s.mesh, s.dims[0]) in seen:
                continue
            seen.add((s.mesh, s.dims[0]))  # type: ignore[arg-type]
            body = p.loadURDF(s.mesh, [0, 0, 1], globalScaling=s.dims[0], physicsClientId=cid)
            lo, hi = p.getAABB(body, physicsClientId=cid)
            ext = np.subtract(hi, lo)
            assert min(ext[0], ext[1]) <= MAX_GRASP_WIDTH, (s.name, ext)
            assert np.allclose(ext, extents(s), atol=0.006), (s.name, ext, extents(s))
    finally:
        p.disconnect(cid)


def test_distinguishing_name_discriminates_distractors():
    small, large = by_name("small red box"), by_name("large red box")
    blue = by_name("small blue box")
    assert distinguishing_name(small, [blue]) == "red box"
    assert distinguishing_name(small, [large, blue]) == "small red box"
    assert distinguishing_name(large, [small]) == "large red box"
    assert distinguishing_name(by_name("red mug"), [by_name("blue mug")]) == "red mug"
    with pytest.raises(KeyError):
        by_name("green unicorn")
