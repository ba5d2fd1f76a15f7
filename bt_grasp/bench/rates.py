"""Measured outcome rates: how often each leaf answered each outcome in the benchmark's episodes,
written as rates files that `bt-grasp verify TREE --rates FILE` reads (verifier/probability/rates.py).

Per episode, `LeafOutcomeCounter` watches the run and counts, per leaf id, the outcome each call
that finished answered, as the leaf itself reported the call (and, for a Watchdog with a
semantic check, the check's verdict as `<id>#semantic`), with the ticks the call spanned: what
the episode actually did, not what the tree could do. A call halted while running (a deadline,
a decision) answered no outcome and is not counted. The worker stores the counts in the
episode's record; `write_rates` sums them per method (tree x perception x lighting) into:

- `OUT/rates-<tree>-<perception>-<lighting>.yaml`: a rates file per method, `rates:` per node
  type (a new tree's leaves of the same types take them), `counts:` the calls behind each, and
  `source:` where they come from with the counts per node id of the measured tree. A leaf whose
  parameters change what it answers (a `place` that checks the delivery answers `delivered`,
  not `done`) is rated under its own id instead, so its type's rates fit the other leaves;
  `durations:` the mean ticks per finished call of each node type (expected ticks as a figure);
- `OUT/rates.yaml`: every method's file, episodes, rates and counts in one `methods:` map.

An outcome a type never answered gets rate 0; the counts say how few calls that may rest on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from bt_grasp.observers import RunObserver, Tick
from bt_grasp.structure import iter_structure

if TYPE_CHECKING:
    from bt_grasp.context import RunContext

__all__ = ["LeafOutcomeCounter", "MethodCounts", "method_counts", "rates_from_counts", "write_rates"]

_UNATTRIBUTED = "(unattributed)"  # node_counts row of older records' calls counted apart
Counts = dict[str, dict[str, int]]


class LeafOutcomeCounter(RunObserver):
    """Counts, per leaf id, the outcomes its finished calls answered and the ticks they spanned,
    from each call's own report (`Tick.calls`: node id, outcome, ticks, sub-answers such as a
    Watchdog's semantic verdict as `<id>#semantic`). Every answer is its leaf's, even when two
    leaves of one tick write the same blackboard key (the blackboard keeps only the last)."""

    def __init__(self) -> None:
        self.types: dict[str, str] = {}  # leaf id -> its node type
        self.own: set[str] = set()  # leaf ids whose parameters change their outcomes (own rates)
        self.counts: Counts = {}
        self.ticks: dict[str, list[int]] = {}  # leaf id -> [finished calls, ticks they spanned]

    def started(self, header: dict[str, Any], ctx: RunContext) -> None:
        for _, _, node in iter_structure(header["structure"]):
            nt = ctx.registry.get(node["type"])
            if nt is None:
                continue
            self.types[node["id"]] = node["type"]
            if nt.outcomes_for is not None:
                defaults = {p.name: p.default for p in nt.ports.values()}
                if nt.alphabet({**defaults, **(node.get("params") or {})}) != nt.alphabet(defaults):
                    self.own.add(node["id"])

    def ticked(self, tick: Tick) -> None:
        for call in tick.calls:
            self._add(call.node, call.outcome)
            for question, answer in call.answers.items():
                self._add(f"{call.node}#{question}", answer)
            spent = self.ticks.setdefault(call.node, [0, 0])
            spent[0] += 1
            spent[1] += call.ticks

    def _add(self, question: str, outcome: str) -> None:
        row = self.counts.setdefault(question, {})
        row[outcome] = row.get(outcome, 0) + 1

    def record(self) -> dict[str, Any]:
        """The episode record's fields: counts per leaf id (`<id>#semantic` too), the leaves'
        types, the ones rated under their own id, and [calls, ticks] per leaf id."""
        asked = {q.partition("#")[0] for q in self.counts}
        return {"leaf_outcomes": self.counts,
                "leaf_types": {i: t for i, t in self.types.items() if i in asked},
                "leaf_own_rates": sorted(self.own & asked),
                "leaf_ticks": {i: list(v) for i, v in sorted(self.ticks.items())}}


def method_name(rec: dict[str, Any]) -> str:
    """A method as the report groups it, as one file-name-safe word."""
    return f"{rec.get('method', 'tree')}-{rec.get('perception', 'default')}-{rec.get('lighting', 'easy')}"


@dataclass
class MethodCounts:
    """One method's counts over its episodes: per node id, per rates key (the node type, or the
    node id for a leaf whose parameters change its outcomes), and [calls, ticks] per node type."""

    episodes: int = 0
    by_id: Counts = field(default_factory=dict)
    by_key: Counts = field(default_factory=dict)
    ticks: dict[str, list[int]] = field(default_factory=dict)

    def durations(self) -> dict[str, float]:
        """Mean ticks per finished call, per node type (what `verify --rates` reads as durations)."""
        return {t: round(ticks / calls, 4) for t, (calls, ticks) in sorted(self.ticks.items()) if calls}


def method_counts(records: Iterable[dict[str, Any]]) -> dict[str, MethodCounts]:
    """Per method, the counts of its records. Records without counts (older results files,
    errors, skipped episodes) are left out. Older records' calls counted apart (two leaves
    writing one key in a tick) are kept per node id under the key `(unattributed)`."""
    out: dict[str, MethodCounts] = {}
    for rec in records:
        leaf = rec.get("leaf_outcomes")
        if not isinstance(leaf, dict) or "error" in rec or "skipped" in rec:
            continue
        got = out.setdefault(method_name(rec), MethodCounts())
        types, own = rec.get("leaf_types") or {}, set(rec.get("leaf_own_rates") or ())
        for question, row in leaf.items():
            base, sep, suffix = question.partition("#")
            typed = base if base in own else types.get(base)
            targets = [got.by_id.setdefault(question, {})]
            if typed is not None:
                targets.append(got.by_key.setdefault(typed + sep + suffix, {}))
            for outcome, n in row.items():
                for target in targets:
                    target[outcome] = target.get(outcome, 0) + int(n)
        for node, (calls, ticks) in (rec.get("leaf_ticks") or {}).items():
            if node in types:
                spent = got.ticks.setdefault(types[node], [0, 0])
                spent[0] += int(calls)
                spent[1] += int(ticks)
        lost = int(rec.get("leaf_unattributed") or 0)
        if lost:
            row = got.by_id.setdefault(_UNATTRIBUTED, {})
            row["calls"] = row.get("calls", 0) + lost
        got.episodes += 1
    return out


def rates_from_counts(counts: Counts) -> dict[str, dict[str, float]]:
    """Each row's frequencies (rows with no calls are left out: no rates, an open question)."""
    out = {}
    for key, row in sorted(counts.items()):
        total = sum(row.values())
        if total > 0:
            out[key] = {o: n / total for o, n in sorted(row.items())}
    return out


def _sorted(counts: Counts) -> Counts:
    return {k: dict(sorted(v.items())) for k, v in sorted(counts.items())}


def write_rates(records: list[dict[str, Any]], out_dir: str | Path) -> list[Path]:
    """rates.yaml (every method) and rates-<method>.yaml (one per method, for `verify --rates`)
    into out_dir; nothing when no record has counts. Returns the files written."""
    out = Path(out_dir)
    per_method = method_counts(records)
    if not per_method:
        return []
    index: dict[str, Any] = {}
    written = []
    for name, got in sorted(per_method.items()):
        path = out / f"rates-{name}.yaml"
        source = {"method": name, "episodes": got.episodes, "node_counts": _sorted(got.by_id)}
        body: dict[str, Any] = {"source": source, "rates": rates_from_counts(got.by_key),
                                "counts": _sorted(got.by_key)}
        durations = got.durations()
        if durations:
            body["durations"] = durations
        path.write_text(f"# Outcome rates measured by `bt-grasp bench` ({name}, {got.episodes} episodes), per\n"
                        "# node type, and mean ticks per call (durations); `bt-grasp verify TREE --rates\n"
                        "# this-file` predicts with them.\n"
                        + yaml.safe_dump(body, sort_keys=False, default_flow_style=None, width=100))
        written.append(path)
        index[name] = {"file": path.name, **{k: v for k, v in body.items() if k != "source"},
                       "episodes": got.episodes, "node_counts": source["node_counts"]}
    summary = out / "rates.yaml"
    summary.write_text("# Outcome rates measured by `bt-grasp bench`, per method; each method's own file\n"
                       "# (rates-<method>.yaml) is what `bt-grasp verify TREE --rates FILE` reads.\n"
                       + yaml.safe_dump({"methods": index}, sort_keys=False, default_flow_style=None,
                                        width=100))
    return [summary, *written]
