"""Measured outcome rates: how often each leaf answered each outcome in the benchmark's episodes,
written as rates files that `bt-grasp verify TREE --rates FILE` reads (verifier/probability/rates.py).

Per episode, `LeafOutcomeCounter` watches the run and counts, per leaf id, the outcome each call
that finished wrote to its outcome port (and, for a Watchdog with a semantic check, the check's
verdict as `<id>#semantic`): what the episode actually did, not what the tree could do. A call
halted while running (a deadline, a decision) answered no outcome and is not counted. The worker
stores the counts in the episode's record; `write_rates` sums them per method (tree x perception
x lighting) into:

- `OUT/rates-<tree>-<perception>-<lighting>.yaml`: a rates file per method, `rates:` per node
  type (a new tree's leaves of the same types take them), `counts:` the calls behind each, and
  `source:` where they come from with the counts per node id of the measured tree. A leaf whose
  parameters change what it answers (a `place` that checks the delivery answers `delivered`,
  not `done`) is rated under its own id instead, so its type's rates fit the other leaves;
- `OUT/rates.yaml`: every method's file, episodes, rates and counts in one `methods:` map.

An outcome a type never answered gets rate 0; the counts say how few calls that may rest on.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from bt_grasp.blackboard import ref_key
from bt_grasp.observers import RunObserver, Tick
from bt_grasp.structure import iter_structure

if TYPE_CHECKING:
    from bt_grasp.context import RunContext

__all__ = ["LeafOutcomeCounter", "method_counts", "rates_from_counts", "write_rates"]

_FINISHED = ("SUCCESS", "FAILURE")
_SEMANTIC = ("ok", "mismatch", "unknown")  # the semantic verdicts (a label other than SUCCESS: "n/a")
_UNATTRIBUTED = "(unattributed)"  # node_counts row of the calls whose outcome a same-tick call overwrote
Counts = dict[str, dict[str, int]]


class LeafOutcomeCounter(RunObserver):
    """Counts, per leaf id, the outcomes its finished calls answered: a primitive's from its event,
    another leaf's from the outcome it wrote to the blackboard that tick. When two finished leaves
    of one tick write the same key (two locates sharing `target.outcome` in one selector), the
    blackboard keeps only the last value: those calls (at most; one may have failed a guard
    and not been called) are counted as unattributed, not guessed."""

    def __init__(self) -> None:
        self.ports: dict[str, str] = {}  # leaf id -> the blackboard key its outcome goes to
        self.types: dict[str, str] = {}  # leaf id -> its node type
        self.primitives: set[str] = set()  # leaf ids whose calls emit events
        self.own: set[str] = set()  # leaf ids whose parameters change their outcomes (own rates)
        self.counts: Counts = {}
        self.unattributed = 0

    def started(self, header: dict[str, Any], ctx: RunContext) -> None:
        for _, _, node in iter_structure(header["structure"]):
            nt = ctx.registry.get(node["type"])
            if nt is None or not nt.outcome_port:
                continue
            value = (node.get("params") or {}).get(nt.outcome_port) or nt.ports[nt.outcome_port].default
            self.ports[node["id"]] = ref_key(value) or str(value)
            self.types[node["id"]] = node["type"]
            if nt.kind == "primitive":
                self.primitives.add(node["id"])
            if nt.outcomes_for is not None:
                defaults = {p.name: p.default for p in nt.ports.values()}
                if nt.alphabet({**defaults, **(node.get("params") or {})}) != nt.alphabet(defaults):
                    self.own.add(node["id"])

    def ticked(self, tick: Tick) -> None:
        for event in tick.events:
            outcome = event.metadata.get("outcome")
            if event.node in self.primitives and isinstance(outcome, str) and outcome != "halted":
                self._add(event.node, outcome)
        writers: dict[str, list[str]] = {}  # key -> the finished leaves of this tick that write it
        for node_id, status in tick.visited:
            key = self.ports.get(node_id)
            if key is not None and status in _FINISHED:
                writers.setdefault(key, []).append(node_id)
        for key, ids in writers.items():
            outcome = tick.blackboard.get(key)
            others = [i for i in ids if i not in self.primitives]
            if not others or not isinstance(outcome, str):  # no call wrote it (a guard failed)
                continue
            if len(ids) > 1:  # which of them wrote the value is unknown
                self.unattributed += len(others)
                continue
            self._add(ids[0], outcome)
            semantic = tick.blackboard.get(f"{key}.semantic")
            if semantic in _SEMANTIC:
                self._add(f"{ids[0]}#semantic", semantic)

    def _add(self, question: str, outcome: str) -> None:
        row = self.counts.setdefault(question, {})
        row[outcome] = row.get(outcome, 0) + 1

    def record(self) -> dict[str, Any]:
        """The episode record's fields: counts per leaf id (`<id>#semantic` too), the leaves'
        types, and the calls whose outcome could not be told apart."""
        asked = {q.partition("#")[0] for q in self.counts}
        return {"leaf_outcomes": self.counts,
                "leaf_types": {i: t for i, t in self.types.items() if i in asked},
                "leaf_own_rates": sorted(self.own & asked),
                "leaf_unattributed": self.unattributed}


def method_name(rec: dict[str, Any]) -> str:
    """A method as the report groups it, as one file-name-safe word."""
    return f"{rec.get('method', 'tree')}-{rec.get('perception', 'default')}-{rec.get('lighting', 'easy')}"


def method_counts(records: Iterable[dict[str, Any]]) -> dict[str, tuple[int, Counts, Counts]]:
    """Per method: (episodes counted, counts per node id, counts per rates key: the node type,
    or the node id for a leaf whose parameters change its outcomes). Records without
    counts (older results files, errors, skipped episodes) are left out. Unattributed calls are
    counted per node id under the key `(unattributed)`."""
    out: dict[str, tuple[int, Counts, Counts]] = {}
    for rec in records:
        leaf = rec.get("leaf_outcomes")
        if not isinstance(leaf, dict) or "error" in rec or "skipped" in rec:
            continue
        episodes, by_id, by_type = out.get(method_name(rec), (0, {}, {}))
        types, own = rec.get("leaf_types") or {}, set(rec.get("leaf_own_rates") or ())
        for question, row in leaf.items():
            base, sep, suffix = question.partition("#")
            typed = base if base in own else types.get(base)
            targets = [by_id.setdefault(question, {})]
            if typed is not None:
                targets.append(by_type.setdefault(typed + sep + suffix, {}))
            for outcome, n in row.items():
                for target in targets:
                    target[outcome] = target.get(outcome, 0) + int(n)
        lost = int(rec.get("leaf_unattributed") or 0)
        if lost:
            row = by_id.setdefault(_UNATTRIBUTED, {})
            row["calls"] = row.get("calls", 0) + lost
        out[method_name(rec)] = (episodes + 1, by_id, by_type)
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
    for name, (episodes, by_id, by_type) in sorted(per_method.items()):
        path = out / f"rates-{name}.yaml"
        source = {"method": name, "episodes": episodes, "node_counts": _sorted(by_id)}
        body = {"source": source, "rates": rates_from_counts(by_type), "counts": _sorted(by_type)}
        path.write_text(f"# Outcome rates measured by `bt-grasp bench` ({name}, {episodes} episodes), per\n"
                        "# node type; `bt-grasp verify TREE --rates this-file` predicts with them.\n"
                        + yaml.safe_dump(body, sort_keys=False, default_flow_style=None, width=100))
        written.append(path)
        index[name] = {"file": path.name, **{k: v for k, v in body.items() if k != "source"},
                       "episodes": episodes, "node_counts": source["node_counts"]}
    summary = out / "rates.yaml"
    summary.write_text("# Outcome rates measured by `bt-grasp bench`, per method; each method's own file\n"
                       "# (rates-<method>.yaml) is what `bt-grasp verify TREE --rates FILE` reads.\n"
                       + yaml.safe_dump({"methods": index}, sort_keys=False, default_flow_style=None,
                                        width=100))
    return [summary, *written]
