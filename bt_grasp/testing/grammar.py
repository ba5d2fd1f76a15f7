"""Hypothesis strategies for generated trees: the random-tree grammar (nodes the termination
and property tests run on a robot or an oracle) and the differential grammar (everything the
verifier models, for tools/perf/verify_soundness.py and the verifier's differential tests).

hypothesis comes with the test extra (`pip install '.[test]'`), not with the package, so it is
imported when a strategy is built, never when this module is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import yaml

from bt_grasp.outcomes import LABELS
from bt_grasp.resources import TREES, shipped_dir
from bt_grasp.spec.loader import load_tree_text

if TYPE_CHECKING:
    from types import ModuleType

    from hypothesis.strategies import SearchStrategy

    from bt_grasp.spec.model import TreeSpec


def _strategies() -> ModuleType:
    """hypothesis.strategies, or an ImportError that names the extra to install."""
    try:
        from hypothesis import strategies
    except ImportError as exc:  # pragma: no cover - the test extra is installed wherever tests run
        raise ImportError("bt_grasp.testing.grammar draws trees with hypothesis: "
                          "pip install 'bt_grasp[test]'") from exc
    return strategies


# -- the random-tree grammar -----------------------------------------------------------------------

Node = dict[str, Any] | str

PRIMITIVES = ("grasp", "lift", "place", "open_gripper")
WORLD_LEAVES: tuple[Node, ...] = (
    "grasp", "evaluate_grasp", "lift", "place", "open_gripper",
    {"locate_object": {"target": "{goal.object}"}},
)
DECISION_LEAVES: tuple[Node, ...] = (
    {"finalize": {"reason": "generated finalize"}},
    {"wait_clarify": {"reason": "generated wait_clarify"}},
)
# switch key -> the labels the leaves writing it can produce
SWITCH_KEYS: dict[str, tuple[str, ...]] = {
    "{grasp.outcome}": ("done", "infeasible", "fault"),
    "{grasp.label}": LABELS,
    "{lift.outcome}": ("done", "fault"),
    "{target.outcome}": ("found", "occluded", "not_found"),
}


GUARDS: tuple[Node, ...] = (
    {"label_is": {"key": "{grasp.outcome}", "label": "done"}},
    {"inverter": {"child": {"label_is": {"key": "{lift.outcome}", "label": "fault"}}}},
    {"locate_object": {"target": "{goal.object}"}},
    "listen",  # a guard: the oracle's answer each tick, passing changes nothing
    {"selector": {"children": ["listen", {"wait_clarify": {"reason": "generated revision"}}]}},
)


def leaves() -> SearchStrategy[Node]:
    st = _strategies()
    return st.one_of(st.sampled_from(WORLD_LEAVES), st.sampled_from(DECISION_LEAVES))


def _extend(children: SearchStrategy[Node], *, reactive: bool, repeat: bool, unbounded: bool,
            timeouts_anywhere: bool) -> SearchStrategy[Node]:
    """One grammar level above `children`."""
    st = _strategies()
    kids = st.lists(children, min_size=1, max_size=3)
    memory = st.booleans() if reactive else st.just(True)
    options: list[SearchStrategy[Node]] = [
        st.builds(lambda t, m, c: {t: {"memory": m, "children": c}},
                  st.sampled_from(["sequence", "selector"]), memory, kids),
        st.builds(lambda n, c: {"retry": {"attempts": n, "child": c}}, st.integers(1, 3), children),
        _switch(children),
        st.builds(lambda t, c: {t: {"child": c}},
                  st.sampled_from(["force_success", "force_failure", "inverter"]), children),
    ]
    # A timeout around one primitive: the deadline reaches the driver (never_finish stops there).
    options.append(st.builds(lambda s, p: {"timeout": {"seconds": s, "child": p}},
                             st.sampled_from([0.5, 3.0, 8.0, 20.0]), st.sampled_from(PRIMITIVES)))
    if timeouts_anywhere:
        options.append(st.builds(lambda s, c: {"timeout": {"seconds": s, "child": c}},
                                 st.sampled_from([0.5, 3.0, 8.0]), children))
    if reactive:
        # a guard re-checked every tick before a child that may run across ticks: a label some
        # leaf writes, or a perception call whose outcome may change at any tick (a halt)
        options.append(st.builds(lambda t, g, c: {t: {"children": [g, *c]}},
                                 st.sampled_from(["reactive_sequence", "reactive_selector"]),
                                 st.sampled_from(GUARDS), kids))
    if repeat:
        times = st.one_of(st.integers(1, 3), st.none()) if unbounded else st.integers(1, 3)
        options.append(st.builds(lambda n, c: {"repeat": ({"times": n} if n is not None else {}) | {"child": c}},
                                 times, children))
        options.append(st.builds(lambda n, c: {"budget": {"actions": n, "child": c}}, st.integers(0, 3), children))
    return st.one_of(*options)


def _switch(children: SearchStrategy[Node]) -> SearchStrategy[Node]:
    """A switch on a label key; its cases are labels some leaf can write there."""
    st = _strategies()

    @st.composite
    def draw_switch(draw: Callable) -> Node:
        key = draw(st.sampled_from(sorted(SWITCH_KEYS)))
        picked = draw(st.lists(st.sampled_from(SWITCH_KEYS[key]), unique=True, max_size=3))
        body: dict[str, Any] = {"on": key, "cases": {label: draw(children) for label in picked}}
        if not picked or draw(st.booleans()):
            body["default"] = draw(children)
        return {"switch": body}

    return draw_switch()


def bodies(max_leaves: int = 8, *, reactive: bool = False, repeat: bool = False, unbounded: bool = False,
           timeouts_anywhere: bool = False) -> SearchStrategy[Node]:
    return _strategies().recursive(
        leaves(), lambda c: _extend(c, reactive=reactive, repeat=repeat, unbounded=unbounded,
                                    timeouts_anywhere=timeouts_anywhere),
        max_leaves=max_leaves)


def wrap(body: Node) -> Node:
    """Root pattern of every shipped tree: the body, then a decision whichever way it ends."""
    return {"selector": {"children": [
        {"sequence": {"children": [body, {"finalize": {"reason": "body succeeded"}}]}},
        {"wait_clarify": {"reason": "body failed"}},
    ]}}


def tree_texts(max_leaves: int = 8, wrapped: bool = True, max_ticks: int = 100_000,
               **grammar: bool) -> SearchStrategy[str]:
    """YAML text of a valid tree built from the grammar, with literal budgets (a tick cap room
    enough for primitives that each run their max_ticks, unless told)."""
    st = _strategies()

    @st.composite
    def draw_text(draw: Callable) -> str:
        body = draw(bodies(max_leaves, **grammar))
        doc = {"tree": "generated",
               "budgets": {"actions": draw(st.integers(0, 6)), "perception_streak": draw(st.integers(1, 4)),
                           "max_ticks": max_ticks},
               "root": wrap(body) if wrapped else body}
        return yaml.safe_dump(doc, sort_keys=False)

    return draw_text()


# -- the differential grammar: everything the verifier models ---------------------------------------

OPAQUE_IDS = ("Spin", "Wait", "BackUp", "FollowPath")
OPAQUE_OUTCOMES = (["success", "failure"], ["success", "failure", "running"], ["failure"],
                   ["success", "running"])
# Timeout lengths: shorter than a tick, not a multiple of the tick period, exactly a multiple.
TIMEOUT_SECONDS = (0.0, 0.05, 0.12, 0.5, 2.0, 3.0)
INCLUDES = ("subtrees/remove_occluder.yaml",)


def diff_leaves() -> SearchStrategy[Node]:
    """bt_grasp leaves, decisions, opaque BT.CPP leaves (some may answer RUNNING) and includes."""
    st = _strategies()
    opaque = st.builds(lambda t, i, o: {t: {"btcpp_id": i, "outcomes": o}},
                       st.sampled_from(["opaque_action", "opaque_condition"]),
                       st.sampled_from(OPAQUE_IDS), st.sampled_from(OPAQUE_OUTCOMES))
    include = st.builds(lambda f: {"include": {"file": f}}, st.sampled_from(INCLUDES))
    extra: tuple[Node, ...] = (
        "push", "survey_scene", {"evaluate_grasp": {"semantic": True}},
        {"label_is": {"key": "{grasp.label}", "label": "SUCCESS"}},
        {"label_is": {"key": "{target.outcome}", "label": "occluded"}})
    return st.one_of(st.sampled_from(WORLD_LEAVES), st.sampled_from(WORLD_LEAVES + extra),
                     st.sampled_from(DECISION_LEAVES), opaque, include)


def _extend_diff(children: SearchStrategy[Node]) -> SearchStrategy[Node]:
    """One level of the differential grammar: the random-tree grammar plus BT.CPP controls,
    timeouts that start after the clock has moved, and scopes shared between nodes."""
    st = _strategies()
    kids = st.lists(children, min_size=1, max_size=3)
    pair = st.lists(children, min_size=2, max_size=2)
    scope = st.sampled_from([None, "shared"])
    return st.one_of(
        _extend(children, reactive=True, repeat=True, unbounded=True, timeouts_anywhere=True),
        st.builds(lambda n, c: {"recovery_node": {"number_of_retries": n, "children": c}},
                  st.integers(0, 3), pair),
        st.builds(lambda t, c: {t: {"children": c}},
                  st.sampled_from(["pipeline_sequence", "round_robin"]), kids),
        st.builds(lambda pol, c: {"parallel": {"policy": pol, "children": c}},
                  st.sampled_from(["success_on_all", "success_on_one"]), kids),
        st.builds(lambda sc, fc, c: {"btcpp_parallel": {"success_count": sc, "failure_count": fc, "children": c}},
                  st.sampled_from([-1, 1]), st.sampled_from([-1, 1]), kids),
        st.builds(lambda n, c: {"btcpp_retry": {"num_attempts": n, "child": c}},
                  st.sampled_from([-1, 1, 2, 3]), children),
        st.builds(lambda sc, n, c: {"retry": {"attempts": n, "child": c} | ({"scope": sc} if sc else {})},
                  scope, st.integers(1, 3), children),
        st.builds(lambda sc, n, c: {"budget": {"actions": n, "child": c} | ({"scope": sc} if sc else {})},
                  scope, st.integers(0, 3), children),
        # a timeout started once earlier leaves have moved the clock
        st.builds(lambda first, s, c: {"sequence": {"children": [first, {"timeout": {"seconds": s, "child": c}}]}},
                  st.sampled_from(WORLD_LEAVES), st.sampled_from(TIMEOUT_SECONDS), children),
        st.builds(lambda s, c: {"timeout": {"seconds": s, "child": c}}, st.sampled_from(TIMEOUT_SECONDS), children),
        _loop_over_retry(children),
        _check_beside_task(children),
    )


def _loop_over_retry(children: SearchStrategy[Node]) -> SearchStrategy[Node]:
    """A repeat or retry over a retry of grasp-led attempts: the action budget or the inner
    retry's attempts run out inside the outer loop, which goes on at one tick per iteration."""
    st = _strategies()
    inner = st.builds(lambda m, c: {"retry": {"attempts": m, "child": {"sequence": {"children": ["grasp", *c]}}}},
                      st.integers(1, 3), st.lists(children, max_size=2))
    body = st.one_of(inner, st.builds(lambda r: {"selector": {"children": [r, {"force_success": {
        "child": {"label_is": {"key": "{grasp.label}", "label": "EMPTY"}}}}]}}, inner))
    return st.one_of(
        st.builds(lambda n, b: {"retry": {"attempts": n, "child": b}}, st.integers(2, 5), body),
        st.builds(lambda n, b: {"repeat": {"times": n, "child": b}}, st.integers(2, 5), body))


CHEAP_CHECKS: tuple[Node, ...] = (
    "lift", {"locate_object": {"target": "{goal.object}"}},
    {"label_is": {"key": "{grasp.label}", "label": "SUCCESS"}},
    {"force_success": {"child": {"label_is": {"key": "{lift.outcome}", "label": "fault"}}}},
)


def _check_beside_task(children: SearchStrategy[Node]) -> SearchStrategy[Node]:
    """An unbounded repeat of a cheap leaf (a condition, perception, lift) beside a bounded task:
    a parallel ended by the task, or a reactive guard re-checked before it every tick."""
    st = _strategies()
    task = st.one_of(children, st.builds(
        lambda n: {"retry": {"attempts": n, "child": {"sequence": {"children": ["grasp", "evaluate_grasp"]}}}},
        st.integers(1, 3)))
    watch = st.builds(lambda c: {"repeat": {"child": c}}, st.sampled_from(CHEAP_CHECKS))
    return st.one_of(
        st.builds(lambda w, t: {"parallel": {"policy": "success_on_one", "children": [w, t]}}, watch, task),
        st.builds(lambda c, t: {"reactive_sequence": {"children": [c, t]}},
                  st.sampled_from(CHEAP_CHECKS[2:]), task))


def diff_tree_texts(max_leaves: int = 10) -> SearchStrategy[str]:
    """YAML of a tree from the differential grammar, wrapped so that it normally decides; the tick
    cap is often small (1..60) so that runs also end on it, else room for a few calls that run
    their max_ticks, or not given (the structural cap of tick_budget.py, which no run may reach)."""
    st = _strategies()

    @st.composite
    def draw_text(draw: Callable) -> str:
        body = draw(st.recursive(diff_leaves(), _extend_diff, max_leaves=max_leaves))
        budgets = {"actions": draw(st.integers(0, 6)), "perception_streak": draw(st.integers(1, 4))}
        cap = draw(st.sampled_from([None, None, 1, 2, 3, 5, 8, 13, 30, 60, 700, 3000]))
        if cap is not None:  # else the cap derived from the structure (tick_budget.py) is in force
            budgets["max_ticks"] = cap
        doc = {"tree": "generated", "budgets": budgets,
               "root": wrap(body) if draw(st.integers(0, 3)) else body}
        return yaml.safe_dump(doc, sort_keys=False)

    return draw_text()


def load_text(text: str) -> TreeSpec:
    """A generated tree, its includes read from the shipped trees."""
    return load_tree_text(text, file="<generated>.yaml", base_dir=shipped_dir(TREES))
