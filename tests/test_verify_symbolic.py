"""The symbolic search agrees with the reference search (the compiled tree explored itself).

Specification pinned here: on trees drawn from the differential grammar (every bt_grasp control,
reactive composites with guards, parallels of both policies, timeouts started at any clock and
nested, includes, scoped retries and budgets, the BT.CPP controls, opaque leaves that may answer
RUNNING), with calls short enough that the reference search can try every length of every call,
`verify_tree` gives the same verdict (proven or not), the same bounds, the same set of endings and
a counterexample from both engines (each replayed by verify on the Runner); and every witness
of the symbolic search, replayed on the real Runner, reaches its bound. A tree with a parallel is
settled by the compositional summary where it can (summary/proof.py): its bounds must then be the
reference search's exactly (those it marks as upper bounds at least as high), and its endings
some of the reference's.
"""

from __future__ import annotations

from bt_strategies import blocking_registry, diff_tree_texts, load_text, profile_settings, tree_texts
from hypothesis import given
from hypothesis import strategies as st

from bt_grasp.oracles import ScriptedOracle, scripts_of
from bt_grasp.verifier.core import verify_tree
from bt_grasp.verifier.replay import Setup
from bt_grasp.verifier.summary.witness import run_costs

MAX_RUNS = 20_000


def _agree(spec) -> None:
    sym = verify_tree(spec, max_runs=MAX_RUNS, engine="symbolic", replay_all=True)
    ref = verify_tree(spec, max_runs=MAX_RUNS, engine="reference")
    if not (sym.complete and ref.complete):
        return  # an unfinished search promises nothing
    assert sym.proven == ref.proven, (sym.problem, ref.problem)
    if sym.unreached:  # the summary's upper bounds: at least the worst case, the others exact
        assert all(sym.bounds[k] >= ref.bounds.get(k, 0) for k in sym.unreached), (sym.bounds, ref.bounds)
        assert {k: v for k, v in sym.bounds.items() if k not in sym.unreached} == \
            {k: v for k, v in ref.bounds.items() if k not in sym.unreached}
        return
    assert sym.bounds == ref.bounds
    if sym.proven:
        if sym.method == "summary":  # settled by the summary: its endings are its witnesses'
            assert set(sym.endings) <= set(ref.endings)
        else:
            assert set(sym.endings) == set(ref.endings)
        setup = Setup(spec, spec.registry, None)
        for key, steps in sym.witnesses.items():
            res = setup.replay(ScriptedOracle(scripts_of([(s["node"], s["outcome"]) for s in steps])))
            assert run_costs(res).get(key, 0) == sym.bounds[key], key
    else:  # both found a run without a decision (maybe not the same one: a tree can have several)
        assert sym.counterexample is not None and ref.counterexample is not None
        assert "internal error" not in (sym.problem or ""), sym.problem


@profile_settings(multiplier=8)
@given(diff_tree_texts(max_leaves=7), st.sampled_from([1, 2, 4]))
def test_both_searches_agree_on_the_differential_grammar(text, cap):
    spec = load_text(text)
    spec.registry = blocking_registry(cap=cap)
    _agree(spec)


@profile_settings(multiplier=8)
@given(tree_texts(max_leaves=8, reactive=True, repeat=True, timeouts_anywhere=True, max_ticks=400),
       st.sampled_from([2, 4]))
def test_both_searches_agree_with_calls_that_span_ticks(text, cap):
    spec = load_text(text)
    spec.registry = blocking_registry(cap=cap)
    _agree(spec)


LONG_STREAK = """
tree: long_streak
budgets: {actions: 3, perception_streak: 400, max_ticks: 5000}
root:
  selector:
    children:
      - sequence:
          children:
            - repeat:
                times: 300
                child: {force_success: {child: survey_scene}}
            - retry: {attempts: 2, child: grasp}
            - finalize: {reason: done}
      - wait_clarify: {reason: failed}
"""


def test_a_counter_past_two_hundred_is_counted_exactly():
    """A counter compared with a large limit (a perception streak of 300 calls, limit 400)
    grows past the width the search first gives each counter: it is counted exactly all the
    same, with the reference search's bounds and witnesses that reach them."""
    spec = load_text(LONG_STREAK)
    sym = verify_tree(spec, engine="symbolic", replay_all=True)
    assert sym.proven and sym.bounds["perception"] == 300
    _agree(spec)
