"""Every shipped tree is settled exactly by `verify` with its default settings.

Specification pinned here: for trees/*.yaml and trees/mobile/*.yaml, verify_tree() searches every
run (method "symbolic", complete), proves that every run decides, and reports exact bounds: none
is an upper bound marked "<=" (`unreached`), so a change to a tree that leaves the search
unsettled fails here, not silently in the output. clutter.yaml's bounds are those of the full
search (`verify --exact`): 45 perception calls, 20 open_gripper calls, 18963 ticks.
"""

from __future__ import annotations

import pytest
from helpers import ROOT

from bt_grasp.spec.loader import load_tree
from bt_grasp.verifier_api import verify_tree

SHIPPED = sorted(p for p in (ROOT / "trees").rglob("*.yaml") if "subtrees" not in p.parts)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT / "trees")))
def test_every_shipped_tree_is_proven_with_exact_bounds(path):
    result = verify_tree(load_tree(str(path)))
    assert result.proven, result.problem
    assert result.complete and result.method == "symbolic", result.method
    assert result.unreached == [], f"upper bounds only: {result.unreached}"


def test_clutter_is_settled_at_the_bounds_of_the_full_search():
    bounds = verify_tree(load_tree(str(ROOT / "trees" / "clutter.yaml"))).bounds
    assert (bounds["perception"], bounds["primitive:open_gripper"], bounds["ticks"]) == (45, 20, 18963)
