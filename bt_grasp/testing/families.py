"""Tree families that grow with a size k, as YAML text: retry blocks chained in a sequence or
nested in each other's SUCCESS case, and parallels of k retried grasps. tools/perf/verify_scaling.py
times the verifier on them; tests/test_verify_bounds.py checks the bounds they reach."""

from __future__ import annotations

from typing import Any

import yaml

# Generated trees other than the parallels get a tick cap with room for every call to run its
# max_ticks, so that the verdicts are proofs, not tick-cap findings; the parallels are verified
# under the default budgets, as a user would write them.
ROOM = {"max_ticks": 100_000}


def block(i: int, on_success: dict[str, Any]) -> dict[str, Any]:
    """retry{2}(grasp -> evaluate_grasp -> switch on the label: SUCCESS -> `on_success`)."""
    return {"retry": {"id": f"retry_{i}", "attempts": 2, "child": {"sequence": {"id": f"try_{i}", "children": [
        {"grasp": {"id": f"grasp_{i}", "execution": f"{{g{i}.execution}}", "outcome": f"{{g{i}.outcome}}"}},
        {"evaluate_grasp": {"id": f"check_{i}", "execution": f"{{g{i}.execution}}", "label": f"{{g{i}.label}}"}},
        {"switch": {"id": f"route_{i}", "on": f"{{g{i}.label}}", "cases": {"SUCCESS": on_success},
                    "default": {"force_failure": {"id": f"again_{i}",
                                                  "child": {"open_gripper": {"id": f"open_{i}"}}}}}},
    ]}}}}


def wrap(body: dict[str, Any]) -> dict[str, Any]:
    """The body, else a decision to wait for clarification."""
    return {"selector": {"id": "episode", "children": [body, {"wait_clarify": {"id": "give_up"}}]}}


def text(name: str, root: dict[str, Any], budgets: dict[str, Any] | None = ROOM) -> str:
    doc = {"tree": name, **({"budgets": budgets} if budgets else {}), "root": root}
    return yaml.safe_dump(doc, sort_keys=False)


def chain(k: int) -> str:
    """k blocks in a sequence, each lifting what it holds, then a decision."""
    steps = [block(i, {"force_success": {"id": f"held_{i}", "child": {"lift": {"id": f"lift_{i}"}}}})
             for i in range(1, k + 1)]
    return text(f"chain_{k}", wrap({"sequence": {"id": "steps", "children": [*steps, {"finalize": {"id": "done"}}]}}))


def nested(k: int) -> str:
    """k blocks, each in the previous one's SUCCESS case (a tree file nests at most 200 levels)."""
    body: dict[str, Any] = {"finalize": {"id": "done"}}
    for i in range(k, 0, -1):
        body = block(i, body)
    return text(f"nested_{k}", wrap(body))


def parallel(k: int, policy: str) -> str:
    """A `parallel` with `policy` of k branches retry{2}(grasp), under the default budgets."""
    branches = [{"retry": {"id": f"retry_{i}", "attempts": 2, "child": {"grasp": {"id": f"grasp_{i}"}}}}
                for i in range(1, k + 1)]
    body = {"sequence": {"children": [{"parallel": {"policy": policy, "children": branches}},
                                      {"finalize": {"id": "done"}}]}}
    return text(f"parallel_{k}_{policy}", wrap(body), budgets=None)
