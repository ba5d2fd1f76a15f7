"""A verdict never depends on how fast or busy the machine is.

Every limit the verifier decides by (when to ask the compositional summary, how long the search
may still look for exact bounds after it, how many witness runs the summary plays, when the
reference search pauses) is a count of work, not a clock. These tests run the same trees with a
clock that jumps a thousand seconds at every reading, as a machine too loaded to do anything
between two readings would look, and expect the very same result.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from bt_grasp.spec.loader import load_tree_text
from bt_grasp.testing.families import chain
from bt_grasp.verifier.summary.bounds import summarise
from bt_grasp.verifier_api import verify_tree

# Five parallels in a row, each a retried call under a timeout beside a perception call. The
# summary (asked first: the tree has parallels) proves that every run decides but its witnesses do
# not reach every bound; the search then settles the tree exactly (about 1100 advances, past its
# first check of the work done), well within the work it is given for that. Timed, a slow enough
# machine answered with the summary's upper bounds instead.
_BLOCK = """\
            - parallel:
                policy: success_on_all
                children:
                  - timeout: {seconds: 0.5, child: {retry: {attempts: 2, child: lift}}}
                  - survey_scene
"""
PARALLEL_TIMEOUTS = ("""\
tree: parallel_timeouts
root:
  selector:
    children:
      - sequence:
          children:
""" + _BLOCK * 5 + """\
            - finalize: {reason: ok}
      - wait_clarify: {reason: failed}
""")


def _race(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on every clock of the time module advances 1000 s per reading."""
    for name in ("perf_counter", "process_time", "monotonic", "time"):
        counter = itertools.count(start=1_000_000, step=1000)
        monkeypatch.setattr(time, name, lambda c=counter: float(next(c)))


@pytest.fixture
def racing_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    _race(monkeypatch)


def _verdict(result: Any) -> dict[str, Any]:
    return {"proven": result.proven, "method": result.method, "bounds": result.bounds,
            "unreached": sorted(result.unreached), "witnesses": result.witnesses,
            "endings": result.endings, "complete": result.complete,
            "counterexample": result.counterexample}


def _verify(text: str, **kwargs: Any) -> dict[str, Any]:
    return _verdict(verify_tree(load_tree_text(text, "<tree>"), **kwargs))


@pytest.mark.parametrize("engine", ["auto", "reference"])
def test_a_racing_clock_changes_no_verdict(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calm = _verify(PARALLEL_TIMEOUTS, engine=engine)
    _race(monkeypatch)
    assert _verify(PARALLEL_TIMEOUTS, engine=engine) == calm


def test_exact_bounds_whatever_the_clock(racing_clock: None) -> None:
    verdict = _verify(PARALLEL_TIMEOUTS)
    assert verdict["proven"] and verdict["complete"]
    assert verdict["method"] == "symbolic" and verdict["unreached"] == []
    assert verdict["bounds"] == {"actions": 0, "perception": 5, "primitive:lift": 10, "ticks": 52}


def test_the_witness_search_is_the_same_whatever_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = load_tree_text(chain(2), "<chain>")
    calm = summarise(spec)
    _race(monkeypatch)
    raced = summarise(load_tree_text(chain(2), "<chain>"))
    assert raced.witnesses == calm.witnesses and raced.bounds == calm.bounds
