"""A short run of tools/perf/fuzz_loaders.py: mutated trees, profiles, traces and BT.CPP documents
either load or fail with one located line — never another exception."""

from __future__ import annotations

import pytest
from helpers import load_script

fuzz_loaders = load_script("tools/perf/fuzz_loaders.py")


@pytest.mark.parametrize("target", sorted(fuzz_loaders.LOADERS))
def test_mutated_documents_load_or_give_one_located_line(target):
    tally = fuzz_loaders.fuzz(target, examples=25, seed=0)
    assert tally["examples"] == 25
    assert tally["accepted"] + tally["refused"] == 25


def test_the_mutations_reach_both_outcomes():
    """A fuzzer whose every document is refused (or accepted) would test nothing."""
    tally = fuzz_loaders.fuzz("trace", examples=40, seed=0)
    assert tally["accepted"] > 0 and tally["refused"] > 0
