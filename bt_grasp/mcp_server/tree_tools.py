"""Verify-and-repair for planners: `verify_tree` and `run_tree`, a whole tree submitted as YAML.

`verify_tree` answers as data a planner can act on: the verdict, the worst-case bounds, each
property HOLDS / VIOLATED with its witness, and for a tree that may not decide the
counterexample (the Runner's answers that lead there, a loop marked). Bad YAML is the loader's
one-line `file:line:col` error, with line and column as fields. `run_tree` runs a submitted tree
as the rest of the episode (its leaves on this robot, the episode's budgets counting on), but
only a tree whose every run is proven to decide and whose every property holds: any other is
refused with the verification, counterexample included, and the robot does not move.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.errors import UserError
from bt_grasp.mcp_server.inputs import InvalidInput
from bt_grasp.mcp_server.summaries import event_summary
from bt_grasp.spec.yaml_pos import MAX_BYTES

__all__ = ["SUBMITTED", "TreeTools", "verification"]

SUBMITTED = "<submitted>"  # the file name errors in a submitted tree point at
VERIFY_SECONDS = 60.0      # a search still running then answers NOT PROVEN (never a guess)
MAX_STEPS = 200            # steps of a witness or counterexample sent (the length always is)


def _steps(steps: list[dict[str, str]]) -> dict[str, Any]:
    return {"length": len(steps), "steps": steps[:MAX_STEPS], "truncated": len(steps) > MAX_STEPS}


def _load(text: Any, registry: Any) -> Any:
    from bt_grasp.resources import TREES, shipped_dir
    from bt_grasp.spec.loader import load_tree_text

    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("tree must be the YAML text of a tree file")
    if len(text.encode()) > MAX_BYTES:
        raise InvalidInput(f"tree is larger than {MAX_BYTES // 1024} kB")
    return load_tree_text(text, file=SUBMITTED, registry=registry, base_dir=shipped_dir(TREES))


def verification(text: Any, registry: Any) -> tuple[dict[str, Any], Any]:
    """(the verification as data, the loaded tree or None when it does not load)."""
    from bt_grasp.verifier_api import verify_tree

    try:
        spec = _load(text, registry)
    except UserError as exc:
        return ({"ok": False, "verdict": "INVALID", "error": str(exc), "file": exc.file,
                 "line": exc.line, "col": exc.col}, None)
    res = verify_tree(spec, time_limit=VERIFY_SECONDS, upper=False)
    props = [p.to_json() for p in res.properties]
    verdict = ("PROVEN" if res.proven else "COUNTEREXAMPLE" if res.counterexample is not None
               else "NOT PROVEN")
    out: dict[str, Any] = {
        "ok": res.proven and res.properties_hold, "verdict": verdict, "tree": spec.name,
        "problem": res.problem, "bounds": res.bounds, "upper_bounds_only": res.unreached,
        "tick_cap": res.tick_cap, "endings": sorted(res.endings), "properties": props,
        "properties_hold": res.properties_hold,
        "witnesses": {k: _steps(v) for k, v in res.witnesses.items() if k != "ticks"},
    }
    for p in props:
        if "witness" in p:
            p["witness"] = _steps(p["witness"])
    if res.counterexample is not None:
        steps = res.counterexample
        cx = _steps(steps[:sum(res.loop)] if res.loop else steps)
        if res.loop:
            cx["loop"] = {"from_step": res.loop[0] + 1, "steps": res.loop[1],
                          "note": "the steps from from_step on repeat until the tick cap"}
        cx["path"] = res.path
        out["counterexample"] = cx
    return out, spec


class TreeTools:
    """`_tool_verify_tree` and `_tool_run_tree` of a ToolSession (see the module docstring)."""

    registry: Any
    decision: Any
    reason: str
    _base: Any
    _run_spec: Any

    def _tool_verify_tree(self, tree: Any = None) -> dict[str, Any]:
        report, _ = verification(tree, self.registry)
        return {**self._base("verify_tree", ok=report["ok"], outcome=report["verdict"]), **report}

    def _tool_run_tree(self, tree: Any = None) -> dict[str, Any]:
        report, spec = verification(tree, self.registry)
        if not report["ok"]:
            result = self._base("run_tree", ok=False, outcome="refused")
            why = ("its properties do not all hold" if report["verdict"] == "PROVEN"
                   else "it is not PROVEN to decide on every run")
            result.update(verification=report, hint=f"not run: {why}; repair it (the "
                          "counterexample or the property witness shows the run) and submit again")
            return result
        episode = self._run_spec(spec)
        self.decision, self.reason = episode.decision, episode.reason  # the tree's: the episode's
        result = self._base("run_tree", ok=True, outcome=episode.decision.value)
        result.update(tree=spec.name, verdict="PROVEN", bounds=report["bounds"],
                      ran={"ticks": episode.ticks, "actions": episode.actions,
                           "events": [event_summary(e) for e in episode.events[:MAX_STEPS]]})
        return result
