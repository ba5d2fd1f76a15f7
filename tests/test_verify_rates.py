"""`verify --rates`: exact probabilities and expected costs from outcome rates.

Specification pinned here:
- on a retried grasp the probabilities and expected calls are the closed-form ones;
- a question without rates is never guessed: the answer becomes an interval over its outcomes;
- on random trees the predictions fall inside the 99 % interval of the real Runner's frequencies
  with a stochastic oracle drawing from the same rates (tools/perf/verify_rates.py: many more);
- expected ticks: each call of an unobserved leaf lasts between 1 tick and its longest (an
  interval) unless the rates give its mean duration (`durations:`), then a figure, checked by hand
  and against the Runner with calls of random lengths of that mean;
- a bad rates file is one `file:line:col` error; `--json` carries the probabilities.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from bt_strategies import load_text, profile_settings, tree_texts
from helpers import tree
from hypothesis import assume, given

from bt_grasp.cli import main
from bt_grasp.errors import UserError
from bt_grasp.spec.yaml_pos import load_positioned
from bt_grasp.testing.chance_check import random_durations, random_rates, validate
from bt_grasp.verifier.probability.chances import Chances, chances
from bt_grasp.verifier.probability.rates import parse_rates
from bt_grasp.verifier.probability.report import rate_tree
from bt_grasp.verifier_api import verify_tree

RETRIED = """
tree: retried
budgets: {actions: 5}
root:
  selector:
    children:
      - sequence:
          children:
            - retry: {id: again, attempts: 3, child: {grasp: {id: g}}}
            - finalize: {reason: grasped}
      - wait_clarify: {reason: no grasp}
"""


def rates_of(text: str):
    return parse_rates(load_positioned(text, "rates.yaml"), "rates.yaml")


def chances_of(spec, rates_text: str) -> Chances:
    res = verify_tree(spec, upper=False)
    got = rate_tree(res, spec, rates_of(rates_text))
    assert isinstance(got, Chances)
    return got


def test_retried_grasp_matches_closed_form() -> None:
    """Three attempts at p(done) = 0.9: FINALIZE with 1 - 0.1^3, grasps 1 + 0.1 + 0.01."""
    got = chances_of(tree(RETRIED), "rates:\n  grasp: {done: 0.9, infeasible: 0.08, fault: 0.02}\n")
    assert got.exact and got.method == "sparse"
    assert got.decisions["FINALIZE"][0] == pytest.approx(1 - 0.1 ** 3, abs=1e-12)
    assert got.endings["WAIT_CLARIFY: no grasp"][0] == pytest.approx(0.001, abs=1e-12)
    assert got.expected["primitive:grasp"] == pytest.approx((1.11, 1.11), abs=1e-12)


def test_a_question_without_rates_gives_an_interval() -> None:
    """No rates for grasp: FINALIZE anywhere in [0, 1], grasps in [1, 3]; never a guess."""
    got = chances_of(tree(RETRIED), "rates:\n  lift: {done: 1.0}\n")
    assert not got.exact and got.open_questions == ["g"]
    assert got.decisions["FINALIZE"] == (0.0, 1.0)
    assert got.expected["primitive:grasp"] == (1.0, 3.0)


def test_expected_ticks_of_a_retried_grasp_by_hand() -> None:
    """Each grasp call takes d ticks and the decision comes in the tick the last call ends, so
    ticks = calls x d, with 1 + 0.5 + 0.25 = 1.75 calls at p(done) = 0.5: without a duration,
    d from 1 to grasp's max_ticks (600); with `durations: {grasp: 10}`, exactly 17.5."""
    rates = "rates:\n  grasp: {done: 0.5, infeasible: 0.5}\n"
    open_ = chances_of(tree(RETRIED), rates)
    assert open_.exact  # the probabilities; the ticks are an interval over call lengths
    assert open_.ticks == pytest.approx((1.75, 1.75 * 600), abs=1e-9)
    assert open_.lengths_open == ["g"]
    timed = chances_of(tree(RETRIED), rates + "durations:\n  grasp: 10\n")
    assert timed.ticks == pytest.approx((17.5, 17.5), abs=1e-9) and timed.lengths_open == []
    by_id = chances_of(tree(RETRIED), rates + "durations:\n  grasp: 10\n  g: 4\n")
    assert by_id.ticks == pytest.approx((7.0, 7.0), abs=1e-9)  # the leaf's id before its type


def test_a_duration_longer_than_a_call_may_run_is_a_positioned_error() -> None:
    """A mean duration above the type's max_ticks cannot be: one error at the duration."""
    with pytest.raises(UserError) as err:
        chances_of(tree(RETRIED), "rates:\n  grasp: {done: 1.0}\ndurations:\n  grasp: 601\n")
    assert (err.value.line, err.value.col) == (4, 10), str(err.value)
    assert "more than one call may run (600" in str(err.value)


def test_ticks_a_watched_call_may_idle_are_bounded_by_the_worst_case() -> None:
    """Under a timeout the grasp is watched: ticks pass that the run graph skips, so the upper
    end of the expected ticks is the most ticks any run takes, never the chain's figure."""
    spec = tree("""
tree: timed
root:
  selector:
    children:
      - sequence:
          children:
            - timeout: {seconds: 2.0, child: {grasp: {id: g}}}
            - finalize: {reason: grasped}
      - wait_clarify: {reason: no grasp}
""")
    res = verify_tree(spec, upper=False)
    got = rate_tree(res, spec, rates_of("rates:\n  grasp: {done: 1.0}\ndurations:\n  grasp: 3\n"))
    assert isinstance(got, Chances) and got.ticks_idle
    assert got.ticks[0] == pytest.approx(1.0) and got.ticks[1] == res.bounds["ticks"] > 1


@profile_settings()
@given(text=tree_texts(max_leaves=7))
def test_random_trees_expected_ticks_with_durations_inside_monte_carlo(text: str) -> None:
    """With a mean duration for every leaf whose calls span ticks, the predicted expected ticks
    (and every other prediction) lie in the 99 % interval of 300 Runner runs whose calls last
    random lengths of those means."""
    spec = load_text(text)
    res = verify_tree(spec, max_runs=20_000, upper=False)
    assume(res.proven and res.graph is not None)
    rng = random.Random(len(text))
    rates = random_rates(spec, rng)
    random_durations(spec, rates, rng)
    check = validate(spec, res, rates, runs=300, seed=len(text))
    assert not check.outside, (check.outside, text)


def test_a_guard_asked_while_a_call_runs_gives_no_probabilities() -> None:
    """A guard heard again every tick a lift runs has as many chances to fire as the lift has
    ticks, which the run graph does not hold: no figures rather than wrong ones."""
    spec = tree("""
tree: guarded
root:
  selector:
    children:
      - sequence:
          children:
            - reactive_sequence: {children: [listen: {id: guard}, lift: {id: up}]}
            - finalize: {reason: lifted}
      - wait_clarify: {reason: interrupted}
""")
    res = verify_tree(spec, upper=False)
    got = rate_tree(res, spec, rates_of("rates:\n  listen: {same: 0.9, revised: 0.1}\n"
                                        "  lift: {done: 1.0}\n"))
    assert isinstance(got, str) and "asks guard again in every tick a call runs" in got


@pytest.mark.parametrize(("text", "where", "message"), [
    ("rates:\n  grasp: {done: 0.9}\n", (2, 10), "sum to 0.9, not 1"),
    ("rates:\n  grasp: {held: 1.0}\n", (2, 11), "has no outcome 'held'"),
    ("rates:\n  grasp: {done: 2}\n", (2, 17), "must be a number in 0..1"),
    ("rate:\n  grasp: {done: 1}\n", (1, 1), "'rates:'"),
    ("rates:\n  grasp: {done: 1}\ndurations:\n  grasp: 0.5\n", (4, 10), "a number of ticks >= 1"),
    ("rates:\n  grasp: {done: 1}\ndurations: 3\n", (3, 12), "durations must be a mapping"),
])
def test_bad_rates_are_one_positioned_error(text: str, where: tuple[int, int], message: str) -> None:
    from bt_grasp.default_registry import default_registry

    with pytest.raises(UserError) as err:
        parse_rates(load_positioned(text, "rates.yaml"), "rates.yaml", default_registry())
    assert (err.value.line, err.value.col) == where, str(err.value)
    assert message in str(err.value)


@profile_settings(multiplier=2)
@given(text=tree_texts(max_leaves=7))
def test_random_trees_predictions_inside_monte_carlo_intervals(text: str) -> None:
    """Every predicted ending probability and expected cost lies in the 99 % interval of 300
    Runner runs drawing from the same rates."""
    spec = load_text(text)
    res = verify_tree(spec, max_runs=20_000, upper=False)
    assume(res.proven and res.graph is not None)
    rates = random_rates(spec, random.Random(len(text)))
    check = validate(spec, res, rates, runs=300, seed=len(text))
    assert check.checked >= 3
    assert not check.outside, (check.outside, text)


@profile_settings()
@given(text=tree_texts(max_leaves=8))
def test_sparse_solve_and_interval_walk_agree_when_all_is_rated(text: str) -> None:
    """Two independent computations of the same chain: the sparse LU solve and the level-wise
    walk of the acyclic graph give the same figures when every question has rates."""
    spec = load_text(text)
    res = verify_tree(spec, max_runs=20_000, upper=False)
    assume(res.proven and res.graph is not None)
    rates = random_rates(spec, random.Random(7))
    solved = chances(res.graph, res.graph_root, rates, spec, res.outcome_classes)
    walked = chances(res.graph, res.graph_root, rates, spec, res.outcome_classes, solve=False)
    assume(solved.exact)
    for name in ("endings", "decisions", "expected"):
        a, b = getattr(solved, name), getattr(walked, name)
        assert a.keys() == b.keys()
        for key in a:
            assert a[key][0] == pytest.approx(b[key][0], abs=1e-9)
            assert b[key][0] == pytest.approx(b[key][1], abs=1e-9)
    assert solved.ticks == pytest.approx(walked.ticks, abs=1e-9)


def test_cli_rates_text_and_json(tmp_path: Path, capsys) -> None:
    """`verify --rates` prints exact probabilities; --json carries them as data."""
    tree_file = tmp_path / "t.yaml"
    tree_file.write_text(RETRIED)
    rates_file = tmp_path / "rates.yaml"
    rates_file.write_text("rates:\n  grasp: {done: 0.5, infeasible: 0.5}\n")
    assert main(["verify", str(tree_file), "--rates", str(rates_file)]) == 0
    out = capsys.readouterr().out
    assert "exact (the run graph solved as an absorbing Markov chain)" in out
    assert "FINALIZE      0.8750" in out
    assert main(["verify", str(tree_file), "--rates", str(rates_file), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["probabilities"]["decisions"]["FINALIZE"] == pytest.approx(0.875)
    assert data["probabilities"]["expected"]["primitive:grasp"] == pytest.approx(1.75)
    assert data["probabilities"]["expected"]["ticks"] == pytest.approx([1.75, 1050])
    assert data["probabilities"]["lengths_open"] == ["g"]
    rates_file.write_text("rates:\n  grasp: {done: 0.5}\n")
    assert main(["verify", str(tree_file), "--rates", str(rates_file)]) == 2
    assert "rates.yaml:2:10: rates of 'grasp' sum to 0.5, not 1" in capsys.readouterr().err
