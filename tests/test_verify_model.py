"""The verifier's model of a tree ticks as the Runner ticks the compiled tree (verifier/symbolic/ticker.py).

Specification pinned here: on trees drawn from the differential grammar (every bt_grasp control
and decorator, reactive composites with guards, parallels of both policies, timeouts started at
any clock, includes, scoped retries and budgets, the BT.CPP controls and opaque leaves that may
answer RUNNING) and from the random-tree grammar, a random run of the real Runner, with calls
that span ticks and deadlines that pass at random checks, is replayed on the model answer for
answer: the model asks the same questions in the same order, and ends with the same decision,
reason, tick count, ledger and blackboard.
"""

from __future__ import annotations

from bt_strategies import (
    RunningOracle,
    blocking_registry,
    diff_tree_texts,
    load_text,
    profile_settings,
    random_lengths,
    tree_texts,
)
from hypothesis import given
from hypothesis import strategies as st

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import RandomOracle, SequenceOracle
from bt_grasp.runner import Runner
from bt_grasp.tick_budget import episode_limits
from bt_grasp.verifier.symbolic.ticker import ticker_for

GOAL = {"goal.object": "red mug"}
RUNS = 30


def _lockstep(spec, registry, seed: int) -> None:
    limits = episode_limits(spec, registry)
    oracle = RunningOracle(RandomOracle(seed), spec, random_lengths(seed))
    oracle.max_ticks = {n.id: registry.require(n.type).max_ticks for n in spec.root.walk()
                        if registry.get(n.type) is not None}
    ctx = RunContext(registry=registry, limits=limits, oracle=oracle, blackboard=Blackboard(dict(GOAL)),
                     explore_running=True)
    res = Runner(spec, ctx).run()
    model = ticker_for(spec, registry, limits, GOAL)
    replay = SequenceOracle(oracle.choices)
    model.run(replay.choose)
    assert len(replay.choices) == len(oracle.choices), "the model asked fewer questions"
    assert (model.decision, model.reason, model.tick) == (res.decision, res.reason, res.ticks)
    assert model.ledger() == res.counters
    board = {k: v for k, v in ctx.blackboard.items() if not k.endswith(".trial_id")}
    assert model.bb == board


@profile_settings(multiplier=10)
@given(diff_tree_texts(), st.sampled_from([1, 3, 6]))
def test_the_model_replays_every_run_of_the_runner_on_the_differential_grammar(text, cap):
    spec = load_text(text)
    registry = blocking_registry(cap=cap)
    spec.registry = registry
    for seed in range(RUNS):
        _lockstep(spec, registry, seed)


@profile_settings(multiplier=5)
@given(tree_texts(max_leaves=10, reactive=True, repeat=True, timeouts_anywhere=True, max_ticks=5000))
def test_the_model_replays_runs_with_calls_of_every_length(text):
    spec = load_text(text)
    registry = default_registry()
    for seed in range(5):
        _lockstep(spec, registry, seed)


def test_the_model_replays_runs_of_the_shipped_trees():
    from bt_strategies import load_shipped

    for name in ("clutter.yaml", "remove_all.yaml", "fetch_and_place.yaml", "open_loop.yaml"):
        spec = load_shipped(name)
        registry = getattr(spec, "registry", None) or default_registry()
        for seed in range(10):
            _lockstep(spec, registry, seed)
