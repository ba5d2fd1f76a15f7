"""Measured outcome rates (bt_grasp/bench/rates.py): what the bench writes for `verify --rates`.

Specification pinned here:
- an episode's counts are exactly the outcomes its leaves answered (checked against the answers
  an oracle gave the Runner), two leaves writing one key in one tick included, and each call's
  ticks are the ticks it spanned;
- the counts of many records become, per method, a rates file whose rates are the frequencies,
  with the counts beside them and the mean ticks per call of each type (durations), that
  `verify --rates` reads and solves on a shipped tree (expected ticks then a figure);
- records without counts (an older results file, errors) are left out, never break the report;
- the index rates.yaml given to `verify --rates` is one line naming the per-method files.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from helpers import ROOT, run_oracle

from bt_grasp.bench.rates import LeafOutcomeCounter, method_counts, write_rates
from bt_grasp.cli import main
from bt_grasp.nodes.base import STILL_RUNNING
from bt_grasp.oracles import RandomOracle
from bt_grasp.spec.loader import load_tree
from bt_grasp.verifier.probability.rates import load_rates

OPEN_LOOP = str(ROOT / "trees" / "open_loop.yaml")
TYPES = {"locate": "locate_object", "grasp": "grasp", "lift": "lift", "place": "place"}


class Recording(RandomOracle):
    """A random oracle that keeps every outcome question it answered, and per leaf the ticks a
    call went on running (its `#running` questions answered "running"). With chance `first` it
    answers the alphabet's first outcome (found, done, SUCCESS, ok, or: the call ends now), so
    more runs get as far as the delivery."""

    def __init__(self, seed: int, first: float = 0.0) -> None:
        super().__init__(seed)
        self.first = first
        self.asked: dict[str, dict[str, int]] = {}
        self.running: dict[str, int] = {}

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        outcome = super().choose(node_id, alphabet[:1] if self.rng.random() < self.first else alphabet)
        if node_id.endswith("#running"):
            if outcome == STILL_RUNNING:
                leaf = node_id.partition("#")[0]
                self.running[leaf] = self.running.get(leaf, 0) + 1
        elif not node_id.endswith("#deadline"):
            row = self.asked.setdefault(node_id, {})
            row[outcome] = row.get(outcome, 0) + 1
        return outcome


def test_counts_are_exactly_the_outcomes_the_leaves_answered() -> None:
    """On clutter.yaml, 40 random runs whose calls may span ticks: the counts are exactly the
    answers the oracle gave, per leaf and outcome (`#semantic` too), none unattributed or
    misread, though the delivery checks and `place` write one key in one tick."""
    spec = load_tree(ROOT / "trees" / "clutter.yaml")
    seen: set[str] = set()
    for seed in range(40):
        oracle, counter = Recording(seed, first=0.5), LeafOutcomeCounter()
        run_oracle(spec, oracle, observers=[counter], explore_running=True)
        assert counter.counts == oracle.asked, seed
        rec = counter.record()
        assert set(rec["leaf_types"]) == {q.partition("#")[0] for q in counter.counts}
        assert "leaf_unattributed" not in rec
        for leaf, (calls, ticks) in rec["leaf_ticks"].items():
            assert calls == sum(oracle.asked[leaf].values()) and calls <= ticks, (seed, leaf)
        seen.update(counter.counts)
    assert {"watchdog#semantic", "deliver/confirm", "deliver/reconfirm", "deliver/recheck_held"} <= seen


def test_each_call_counts_the_ticks_it_spanned() -> None:
    """On open_loop (nothing halts a call), 30 random runs: a leaf's calls spanned one tick each
    plus one per tick the oracle let it go on running."""
    spec = load_tree(OPEN_LOOP)
    spanned = False
    for seed in range(30):
        oracle, counter = Recording(seed), LeafOutcomeCounter()
        run_oracle(spec, oracle, observers=[counter], explore_running=True)
        for leaf, (calls, ticks) in counter.record()["leaf_ticks"].items():
            assert calls == sum(oracle.asked[leaf].values()), (seed, leaf)
            assert ticks == calls + oracle.running.get(leaf, 0), (seed, leaf)
            spanned = spanned or ticks > calls
    assert spanned


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


def timed(rec: dict, grasp_ticks: int) -> dict:
    """`rec` with the ticks its calls spanned: each grasp `grasp_ticks`, every other call 1."""
    calls = {i: sum(row.values()) for i, row in rec.get("leaf_outcomes", {}).items()}
    return {**rec, "leaf_ticks": {i: [n, n * (grasp_ticks if i == "grasp" else 1)] for i, n in calls.items()}}


def expected_ticks(out: str) -> str:
    """The expected ticks `verify --rates` printed (a figure, or "lo .. hi")."""
    expected = out[out.index("expected per run:"):]
    line = next(ln for ln in expected.splitlines() if ln.strip().startswith("ticks "))
    return line.split(None, 1)[1].strip()


def test_the_ticks_calls_spanned_become_durations_and_expected_ticks(tmp_path: Path, capsys) -> None:
    """Grasps of 5 ticks, other calls of 1: the rates file gives durations per node type, and
    `verify` the expected ticks as one figure: a run's 1 tick plus 4 more per grasp, of which
    a run makes 2/3 (locate found 2 of 3); without durations, an interval."""
    write_rates([timed(r, 5) for r in RECORDS], tmp_path)
    path = tmp_path / "rates-open_loop-sim-easy.yaml"
    body = yaml.safe_load(path.read_text())
    assert body["durations"] == {"grasp": 5.0, "lift": 1.0, "locate_object": 1.0, "place": 1.0}
    assert load_rates(path).durations == body["durations"]
    assert main(["verify", OPEN_LOOP, "--rates", str(path)]) == 0
    assert abs(float(expected_ticks(capsys.readouterr().out)) - (1 + 4 * 2 / 3)) < 0.05
    write_rates(RECORDS, tmp_path)  # records without ticks (an older results file): no durations
    assert "durations" not in yaml.safe_load(path.read_text())
    assert main(["verify", OPEN_LOOP, "--rates", str(path)]) == 0
    assert ".." in expected_ticks(capsys.readouterr().out)


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
    got = method_counts([rec])["t-sim-easy"]
    assert got.by_key == {"place": {"done": 2}, "deliver/place": {"delivered": 3}}
    assert got.by_id == got.by_key
