"""Measured outcome rates (bt_grasp/bench/rates.py): what the bench writes for `verify --rates`.

Specification pinned here:
- an episode's counts are exactly the outcomes its leaves answered (checked against the answers
  an oracle gave the Runner), except calls two leaves of one tick overwrote, counted apart;
- the counts of many records become, per method, a rates file whose rates are the frequencies,
  with the counts beside them, that `verify --rates` reads and solves on a shipped tree;
- records without counts (an older results file, errors) are left out, never break the report;
- the index rates.yaml given to `verify --rates` is one line naming the per-method files.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from helpers import ROOT, run_oracle

from bt_grasp.bench.rates import LeafOutcomeCounter, method_counts, write_rates
from bt_grasp.cli import main
from bt_grasp.oracles import RandomOracle
from bt_grasp.spec.loader import load_tree
from bt_grasp.verifier.probability.rates import load_rates

OPEN_LOOP = str(ROOT / "trees" / "open_loop.yaml")
TYPES = {"locate": "locate_object", "grasp": "grasp", "lift": "lift", "place": "place"}


class Recording(RandomOracle):
    """A random oracle that keeps every outcome question it answered."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.asked: dict[str, dict[str, int]] = {}

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        outcome = super().choose(node_id, alphabet)
        if not node_id.endswith(("#running", "#deadline")):
            row = self.asked.setdefault(node_id, {})
            row[outcome] = row.get(outcome, 0) + 1
        return outcome


def test_counts_are_the_outcomes_the_leaves_answered() -> None:
    """On clutter.yaml, 40 random runs: every counted outcome was answered, and the answers not
    counted are at most the calls reported as unattributed."""
    spec = load_tree(ROOT / "trees" / "clutter.yaml")
    counted_any = False
    for seed in range(40):
        oracle, counter = Recording(seed), LeafOutcomeCounter()
        run_oracle(spec, oracle, observers=[counter])
        for question, row in counter.counts.items():
            for outcome, n in row.items():
                assert n <= oracle.asked.get(question, {}).get(outcome, 0), (seed, question, outcome)
        missing = sum(sum(r.values()) for r in oracle.asked.values()) - \
            sum(sum(r.values()) for r in counter.counts.values())
        assert 0 <= missing <= counter.unattributed, seed
        counted_any = counted_any or "watchdog#semantic" in counter.counts
        rec = counter.record()
        assert set(rec["leaf_types"]) == {q.partition("#")[0] for q in counter.counts}
    assert counted_any


def record(method: str, outcomes: dict[str, dict[str, int]], **extra) -> dict:
    return {"method": method, "perception": "sim", "lighting": "easy", "leaf_outcomes": outcomes,
            "leaf_types": {i: TYPES[i] for i in outcomes}, **extra}


RECORDS = [
    record("open_loop", {"locate": {"found": 1}, "grasp": {"done": 1}, "lift": {"done": 1},
                         "place": {"done": 1}}),
    record("open_loop", {"locate": {"found": 1}, "grasp": {"infeasible": 1}}),
    record("open_loop", {"locate": {"not_found": 1}}),
    record("open_loop", {"grasp": {"done": 5}}, error="RuntimeError: crashed"),
    {"method": "open_loop", "perception": "sim", "lighting": "easy"},  # an older record: no counts
]


def test_records_become_rates_with_their_counts(tmp_path: Path) -> None:
    """Three episodes with counts: locate found 2 of 3, grasp done 1 of 2; the error and the
    older record are left out."""
    files = write_rates(RECORDS, tmp_path)
    assert [f.name for f in files] == ["rates.yaml", "rates-open_loop-sim-easy.yaml"]
    rates = load_rates(tmp_path / "rates-open_loop-sim-easy.yaml")
    assert rates.table["locate_object"] == {"found": 2 / 3, "not_found": 1 / 3}
    assert rates.table["grasp"] == {"done": 0.5, "infeasible": 0.5}
    assert rates.counts["locate_object"] == {"found": 2, "not_found": 1}
    assert rates.counts["grasp"] == {"done": 1, "infeasible": 1}
    index = yaml.safe_load((tmp_path / "rates.yaml").read_text())["methods"]["open_loop-sim-easy"]
    assert index["file"] == "rates-open_loop-sim-easy.yaml" and index["episodes"] == 3
    assert index["node_counts"]["locate"] == {"found": 2, "not_found": 1}


def test_verify_solves_a_shipped_tree_with_the_measured_rates(tmp_path: Path, capsys) -> None:
    """open_loop FINALIZEs when found (2/3) and grasped (1/2), then lifted and placed (1): 1/3."""
    write_rates(RECORDS, tmp_path)
    assert main(["verify", OPEN_LOOP, "--rates", str(tmp_path / "rates-open_loop-sim-easy.yaml")]) == 0
    out = capsys.readouterr().out
    assert "exact" in out and "FINALIZE      0.3333" in out


def test_the_index_names_the_files_verify_reads(tmp_path: Path, capsys) -> None:
    """The index is not a rates file: one line, exit 2, the per-method file named."""
    write_rates(RECORDS, tmp_path)
    assert main(["verify", OPEN_LOOP, "--rates", str(tmp_path / "rates.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith(str(tmp_path / "rates-open_loop-sim-easy.yaml"))


def test_records_without_counts_write_no_rates(tmp_path: Path) -> None:
    """An older results file (no counts in its records) writes no rates file and no error."""
    assert write_rates(RECORDS[-1:], tmp_path) == []
    assert not (tmp_path / "rates.yaml").exists()


def test_a_leaf_whose_parameters_change_its_outcomes_is_rated_under_its_id() -> None:
    """A `place` that checks the delivery answers `delivered`: its id, not `place`, is rated."""
    rec = record("t", {"place": {"done": 2}})
    rec["leaf_outcomes"]["deliver/place"] = {"delivered": 3}
    rec["leaf_types"]["deliver/place"] = "place"
    rec["leaf_own_rates"] = ["deliver/place"]
    _, by_id, by_key = method_counts([rec])["t-sim-easy"]
    assert by_key == {"place": {"done": 2}, "deliver/place": {"delivered": 3}}
    assert by_id == by_key
