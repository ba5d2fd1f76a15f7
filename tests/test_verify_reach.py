"""Proofs that reach the trees a user writes first (docs/semantics.md, "The verifier").

Specification pinned here:
- a tree without `budgets.max_ticks` whose retries bound it is PROVEN under the default budgets;
  the cap in force is at least the tree's own tick bound, and `verify` says where it came from;
- a `parallel` of retry{2}(grasp) branches under the default budgets is PROVEN, each policy: a
  parallel lasts as long as its longest branch (1200 ticks: two 600-tick grasps), its grasps add up
  to the action budget, and every bound's witness replays on the Runner to exactly that bound;
- where the search does not settle soon and the structure proves that every run decides, the
  result is PROVEN with upper bounds, those no witness reached marked (`unreached`, "<=" in the
  text); `--exact` searches on instead;
- a given cap too small for the longest run is NOT PROVEN, naming the call, its ticks and the
  smallest cap that proves the tree.
"""

from __future__ import annotations

import json

import pytest
from helpers import tree

from bt_grasp.cli import main
from bt_grasp.oracles import ScriptedOracle, scripts_of
from bt_grasp.verifier.replay import Setup
from bt_grasp.verifier.summary.witness import run_costs
from bt_grasp.verifier_api import verify_tree

TWO_GRASPS = """
    tree: two_grasps
    root:
      selector:
        children:
          - retry:
              attempts: 3
              child:
                sequence:
                  children:
                    - grasp: {id: g}
                    - evaluate_grasp: {id: e}
                    - finalize: {}
          - wait_clarify: {}
"""


def parallel(k: int, policy: str) -> str:
    branches = "\n".join(f"                    - retry: {{attempts: 2, child: {{grasp: {{id: g{i}}}}}}}"
                         for i in range(k))
    return f"""
    tree: par
    root:
      selector:
        children:
          - sequence:
              children:
                - parallel:
                    policy: {policy}
                    children:
{branches}
                - finalize: {{}}
          - wait_clarify: {{}}
"""


def replays_to_its_bounds(spec, res) -> None:
    setup = Setup(spec, spec.registry, None)
    for key, steps in res.witnesses.items():
        run = setup.replay(ScriptedOracle(scripts_of([(s["node"], s["outcome"]) for s in steps])))
        assert run_costs(run).get(key, 0) == res.bounds[key], key


def test_two_grasps_under_default_budgets_are_proven_with_the_cap_from_the_structure(capsys):
    spec = tree(TWO_GRASPS)
    res = verify_tree(spec)
    assert res.proven and res.bounds["primitive:grasp"] == 3 and res.bounds["ticks"] == 1800
    assert res.tick_cap == {"value": 1800, "source": "structure"}
    replays_to_its_bounds(spec, res)


@pytest.mark.parametrize("policy", ["success_on_all", "success_on_one"])
@pytest.mark.parametrize("k", [2, 4])
def test_a_parallel_of_retried_grasps_is_proven_under_default_budgets(k, policy):
    spec = tree(parallel(k, policy))
    res = verify_tree(spec)
    assert res.proven and not res.unreached, res.problem
    assert res.bounds["primitive:grasp"] == res.bounds["actions"] == 2 * k
    assert res.bounds["ticks"] == 1200  # the longest branch: two grasps of 600 ticks, not 2k
    replays_to_its_bounds(spec, res)


def test_a_parallel_the_search_cannot_settle_soon_is_proven_with_marked_upper_bounds(tmp_path, capsys):
    # seven branches share ten actions: the longest branch cannot run both of its grasps to
    # their maximum, so the summary's 1200 ticks is an upper bound no run reaches
    spec = tree(parallel(7, "success_on_one"))
    res = verify_tree(spec)
    assert res.proven and res.method == "summary" and res.unreached == ["ticks"]
    assert res.bounds["actions"] == 10 and "ticks" not in res.witnesses
    replays_to_its_bounds(spec, res)
    path = tmp_path / "par7.yaml"
    path.write_text(parallel(7, "success_on_one"))
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "<= 1200" in out and "upper bound" in out
    assert main(["verify", str(path), "--json", "--max-runs", "2000", "--exact"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["proven"] is False and data["complete"] is False and data["unreached"] == []


def test_a_given_cap_below_the_longest_run_names_the_call_and_the_cap_that_proves(capsys):
    spec = tree(TWO_GRASPS.replace("tree: two_grasps", "tree: two_grasps\n    budgets: {max_ticks: 1000}"))
    res = verify_tree(spec)
    assert not res.proven and res.counterexample
    assert "'g'" in res.problem and "600 ticks" in res.problem and "1800" in res.problem
