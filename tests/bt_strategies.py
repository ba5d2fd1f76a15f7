"""Hypothesis strategies for generated trees, the shared settings profiles, and run invariants.

The tree grammars, the RunningOracle and its call lengths live in the package (bt_grasp/testing/),
shared with tools/perf/verify_soundness.py; they are re-exported here under their old names.
Used by tests/test_termination_drivers.py (the trees run on PyBullet and on the simulated
Stretch) and tests/test_property_random_trees.py (the trees run against outcome oracles); the
built-in grammar (BUILTIN_TREES) by tests/test_spec_roundtrip.py and tests/test_spec_schema.py.

Profiles (see docs/testing.md): "ci" (default, few examples) and "thorough", selected with
`BT_GRASP_HYPOTHESIS_PROFILE=thorough`. Modules take their settings from `profile_settings()`, so
loading a profile never changes the settings of other test modules.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from bt_grasp import builtin_types
from bt_grasp.blackboard import Blackboard
from bt_grasp.context import Ledger, RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.oracles import PrefixOracle
from bt_grasp.outcomes import LABELS, Decision
from bt_grasp.registry import Registry
from bt_grasp.runner import EpisodeResult, Runner
from bt_grasp.testing.grammar import (  # noqa: F401  (re-exported: the tests import them from here)
    DECISION_LEAVES,
    GUARDS,
    INCLUDES,
    OPAQUE_IDS,
    OPAQUE_OUTCOMES,
    PRIMITIVES,
    SWITCH_KEYS,
    TIMEOUT_SECONDS,
    WORLD_LEAVES,
    Node,
    bodies,
    diff_leaves,
    diff_tree_texts,
    leaves,
    load_text,
    tree_texts,
    wrap,
)
from bt_grasp.testing.running import RunningOracle, random_lengths  # noqa: F401  (re-exported)
from bt_grasp.tick_budget import episode_limits
from bt_grasp.trace import read_trace
from bt_grasp.verifier_api import VerifyResult

PROFILE_ENV = "BT_GRASP_HYPOTHESIS_PROFILE"
settings.register_profile("ci", max_examples=6, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def profile_settings(multiplier: int = 1) -> settings:
    """The selected profile, with `multiplier` × its examples (cheap oracle tests use more)."""
    base = settings.get_profile(os.environ.get(PROFILE_ENV, "ci"))
    return settings(base, max_examples=base.max_examples * multiplier)


# -- any built-in node type, random valid ports (loader, dump and schema tests) --------------------
# Tree bodies as YAML-ready data, not meant to run: every composite, decorator and leaf type with
# valid port values; ids are `id: True` markers until number_ids() numbers them.

def _builtin_registry() -> Registry:
    """The built-ins only, whatever plug-ins other tests register into the default registry."""
    reg = Registry()
    builtin_types.register_all(reg)
    return reg


BUILTIN_REG = _builtin_registry()
_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_ ", min_size=1, max_size=12).filter(
    lambda s: s.strip() == s)
_REFS = st.sampled_from(["{goal.object}", "{target}", "{scene.objects}", "{bb.x.y}"])


def _port_value(node_type: str, name: str) -> st.SearchStrategy[Any] | None:
    """A valid value for a port, or None to leave it out (outcome keys stay at their default,
    so every switch and label_is below routes on labels some writer can produce)."""
    port = BUILTIN_REG.get(node_type).ports[name]
    if node_type == "label_is":
        return st.just("{grasp.label}") if name == "key" else st.sampled_from(LABELS)
    if port.type == "key":
        return None if name == BUILTIN_REG.get(node_type).outcome_port else st.sampled_from(["r.a", "{r.b}"])
    if port.choices:
        return st.sampled_from(port.choices)
    if port.type == "int":
        low = int(port.minimum or 0)
        return st.integers(low, int(port.maximum) if port.maximum is not None else low + 9)
    if port.type == "float":
        low = port.minimum or 0.0
        high = port.maximum if port.maximum is not None else low + 50
        return st.integers(0, 100).map(lambda k: round(low + (high - low) * k / 100, 4))
    if port.type == "bool":
        return st.booleans()
    if BUILTIN_REG.get(node_type).kind in ("composite", "decorator"):
        return _NAMES  # composite and decorator settings are literals
    return st.one_of(_NAMES, _REFS)


def _fields(node_type: str) -> st.SearchStrategy[dict[str, Any]]:
    """Required ports always, optional ports sometimes, and an id marker sometimes."""
    required, optional = {}, {}
    for name, port in BUILTIN_REG.get(node_type).ports.items():
        strat = _port_value(node_type, name)
        if strat is not None:
            (required if port.required else optional)[name] = strat
    return st.fixed_dictionaries(required, optional=optional).flatmap(
        lambda d: st.booleans().map(lambda with_id: {**({"id": True} if with_id else {}), **d}))


_BUILTIN_LEAF_TYPES = [t.name for t in BUILTIN_REG if t.arity == "none"]
_BUILTIN_LEAVES = st.sampled_from(_BUILTIN_LEAF_TYPES).flatmap(
    lambda t: _fields(t).map(lambda f, t=t: {t: f} if f or BUILTIN_REG.get(t).ports and any(
        p.required for p in BUILTIN_REG.get(t).ports.values()) else t))


def _extend_builtin(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    composites = st.sampled_from(["sequence", "selector", "parallel"]).flatmap(
        lambda t: st.tuples(_fields(t), st.lists(children, min_size=1, max_size=3)).map(
            lambda fc, t=t: {t: {**fc[0], "children": fc[1]}}))
    decorators = st.sampled_from([t.name for t in BUILTIN_REG if t.arity == "one"]).flatmap(
        lambda t: st.tuples(_fields(t), children).map(lambda fc, t=t: {t: {**fc[0], "child": fc[1]}}))
    switches = st.tuples(
        st.dictionaries(st.sampled_from(LABELS), children, min_size=1, max_size=3),
        st.one_of(st.none(), children), st.booleans(),
    ).map(lambda c: {"switch": {**({"id": True} if c[2] else {}), "on": "{grasp.label}",
                                "cases": c[0], **({"default": c[1]} if c[1] is not None else {})}})
    return st.one_of(composites, decorators, switches)


BUILTIN_TREES = st.recursive(_BUILTIN_LEAVES, _extend_builtin, max_leaves=12)


def number_ids(node: Any, counter: list[int]) -> None:
    """Replace the `id: True` markers by unique ids n0, n1, ... in pre-order."""
    if not isinstance(node, dict):
        return
    (fields,) = node.values()
    if fields.get("id") is True:
        fields["id"] = f"n{counter[0]}"
        counter[0] += 1
    for child in fields.get("children", []):
        number_ids(child, counter)
    if "child" in fields:
        number_ids(fields["child"], counter)
    for case in fields.get("cases", {}).values():
        number_ids(case, counter)
    if "default" in fields:
        number_ids(fields["default"], counter)


def shipped(name: str) -> str:
    return (ROOT / "trees" / name).read_text(encoding="utf-8")


def load_shipped(name: str):
    from bt_grasp.spec.loader import load_tree

    return load_tree(str(Path(ROOT / "trees" / name)))


# -- calls that span ticks ------------------------------------------------------------------------

def blocking_registry(cap: int = 1) -> Any:
    """The default registry with every call spanning at most `cap` ticks (1: it ends in the tick
    that starts it, as with a blocking driver): for tests that specify what happens between
    calls, or that explore every length of short calls."""
    from dataclasses import replace

    reg = Registry()
    for nt in default_registry():
        reg.add(replace(nt, max_ticks=min(nt.max_ticks, cap)))
    return reg


# -- running with a ledger that remembers the longest perception streak --------------------------

class TrackingLedger(Ledger):
    """A Ledger that also records the longest perception streak seen (the live one resets)."""

    max_perception_streak: int = 0

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "perception_streak":
            object.__setattr__(self, "max_perception_streak", max(self.max_perception_streak, value))
        object.__setattr__(self, name, value)


def run_tracked(spec: Any, oracle: Any, trace: str | None = None,
                explore_running: bool | None = None) -> tuple[EpisodeResult, TrackingLedger]:
    """tests/helpers.run_oracle with a TrackingLedger in the context. `explore_running`: the
    oracle is asked `<id>#running` each tick a call may go on (default: for a RunningOracle)."""
    ledger = TrackingLedger()
    registry = getattr(spec, "registry", None) or default_registry()
    ctx = RunContext(registry=registry, limits=episode_limits(spec, registry), oracle=oracle,
                     blackboard=Blackboard({"goal.object": "red mug"}), ledger=ledger,
                     explore_running=isinstance(oracle, RunningOracle) if explore_running is None
                     else explore_running)
    return Runner(spec, ctx, trace_path=trace).run(), ledger


def enumerate_runs(spec: Any, cap: int, lengths: Callable[[int], int] | None = None,
                   ) -> list[tuple[EpisodeResult, list[tuple[str, str]]]] | None:
    """Every outcome sequence of `spec` run once on the real Runner (None when there are more
    than `cap`); with `lengths`, each call spans the ticks it gives (RunningOracle)."""
    runs = []
    prefix: list[int] | None = []
    while prefix is not None:
        oracle = PrefixOracle(prefix)
        res, _ = run_tracked(spec, oracle if lengths is None else RunningOracle(oracle, spec, lengths))
        runs.append((res, oracle.choices))
        if len(runs) > cap:
            return None
        prefix = oracle.next_prefix()
    return runs


# -- invariants ------------------------------------------------------------------------------------

def _scope_limits(spec: Any, node_type: str, param: str,
                  pick: Callable[[list[int]], int]) -> dict[str, int]:
    """Scope -> `pick` of the integer `param` over the `node_type` nodes sharing that scope."""
    values: dict[str, list[int]] = {}
    for node in spec.root.walk():
        if node.type == node_type:
            values.setdefault(str(node.params.get("scope") or node.id), []).append(int(node.params[param]))
    return {scope: pick(limits) for scope, limits in values.items()}


def retry_limits(spec: Any) -> dict[str, int]:
    """Retry scope -> the most starts any retry of that scope allows."""
    return _scope_limits(spec, "retry", "attempts", max)


def budget_limits(spec: Any) -> dict[str, int]:
    """Budget scope -> the fewest actions any budget of that scope allows (the tightest binds)."""
    return _scope_limits(spec, "budget", "actions", min)


def assert_decided_within(res: EpisodeResult, ledger: TrackingLedger, spec: Any,
                          verdict: VerifyResult | None) -> None:
    """The run ended in a Decision, inside the verifier's bounds, and no budget was exceeded."""
    assert res.decision in (Decision.FINALIZE, Decision.WAIT_CLARIFY)
    assert res.reason, "every decision has a reason"
    b = spec.budgets
    c = res.counters
    assert res.ticks <= episode_limits(spec).max_ticks
    assert res.actions <= b.actions, f"actions {res.actions} > budget {b.actions}"
    assert ledger.max_perception_streak <= b.perception_streak, (
        f"perception streak {ledger.max_perception_streak} > limit {b.perception_streak}")
    limits = retry_limits(spec)
    for scope, starts in c["retry_starts"].items():
        assert starts <= limits[scope], f"retry {scope}: {starts} starts > {limits[scope]} attempts"
    scoped = budget_limits(spec)
    for scope, used in c["scoped_actions"].items():
        assert used <= scoped[scope], f"budget {scope}: {used} actions > {scoped[scope]}"
    if verdict is not None and verdict.proven:
        bounds = verdict.bounds
        assert res.ticks <= bounds["ticks"], f"ticks {res.ticks} > bound {bounds['ticks']}"
        assert res.actions <= bounds["actions"], f"actions {res.actions} > bound {bounds['actions']}"
        assert c["perception_calls"] <= bounds.get("perception", 0), (
            f"perception {c['perception_calls']} > bound {bounds.get('perception', 0)}")
        for name, calls in c["primitive_calls"].items():
            bound = bounds.get(f"primitive:{name}", 0)
            assert calls <= bound, f"{name}: {calls} calls > bound {bound}"


def assert_trace_complete(path: str | Path, res: EpisodeResult) -> None:
    """A readable, complete trace: header, one line per tick in order, every event, the final line."""
    tr = read_trace(path)
    assert tr.complete
    assert tr.header["tree"]
    assert [t["tick"] for t in tr.ticks] == list(range(1, res.ticks + 1))
    assert tr.final is not None
    assert tr.final["decision"] == res.decision.value and tr.final["reason"] == res.reason
    assert tr.final["ticks"] == res.ticks
    traced = [e["trial_id"] for t in tr.ticks for e in t["events"]]
    assert traced == [e.trial_id for e in res.events], "every event is in the trace, once, in order"
    primitive_events = [e for e in res.events if e.primitive != "evaluate_grasp"]
    assert len(primitive_events) == sum(res.counters["primitive_calls"].values()), (
        "one event per primitive call")


@pytest.fixture(autouse=True)
def blocking_calls(request, monkeypatch):
    """Imported by a test module, every test in it not named for the shipped trees runs with calls
    that end in the tick that starts them (a blocking driver: every max_ticks is 1): they specify
    what happens between calls. Calls that span ticks: tests/test_verify_running.py."""
    from bt_grasp import default_registry as registry_mod

    if "shipped" not in request.node.name:
        monkeypatch.setattr(registry_mod, "_DEFAULT", blocking_registry())
