"""Outcome rates (RATES.yaml): how often each leaf answers each outcome, per node id or type.

    rates:
      grasp: {done: 0.95, infeasible: 0.05}            # every grasp leaf
      watchdog: {SUCCESS: 0.6, EMPTY: 0.3, SLIP: 0.1}  # the leaf with id watchdog
      evaluate_grasp#semantic: {ok: 0.9, mismatch: 0.1}  # the semantic check's verdict
    counts:                                            # optional: what measured them
      grasp: {done: 190, infeasible: 10}
    durations:                                         # optional: mean ticks per call
      grasp: 40

A duration (per node id or type, as rates) is the mean number of ticks one call of the leaf
runs, 1 up to its type's max_ticks; it turns the expected ticks of a run from an interval (every
call between 1 tick and its longest) into a figure (probability/chances.py says for which calls).

A question the Runner asks (a leaf id, or `<id>#semantic`, ...) takes the rates of its own id
first, then of its leaf's type (with the same `#...`). A question with no rates is left open
(verifier/probability/chances.py gives intervals over its outcomes), never guessed. How long a call runs
(`#running`) and whether a deadline passes (`#deadline`) are always left open: the run graph
holds no time (probability/chances.py). The rates are
assumed independent from question to question: a real scene's outcomes are not (a grasp that
failed once is likelier to fail again), which the docs say where they quote predictions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bt_grasp.errors import UserError, did_you_mean
from bt_grasp.registry import Registry
from bt_grasp.spec.model import Pos
from bt_grasp.spec.parse import fail
from bt_grasp.spec.yaml_pos import PosDict, decode_text, kind_name, load_positioned

__all__ = ["Rates", "RatesOracle", "load_rates", "parse_rates"]

_TOLERANCE = 1e-6  # how far from 1 a distribution written with decimals may sum
_TOP_KEYS = ("rates", "counts", "durations", "source")


@dataclass
class Rates:
    """Distributions by key (node id or type, with an optional `#suffix`), where each was
    written (for errors found when the tree is known), and the optional counts behind them."""

    table: dict[str, dict[str, float]]
    pos: dict[str, Pos] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    file: str = "<rates>"
    durations: dict[str, float] = field(default_factory=dict)  # mean ticks per call

    def duration(self, leaf_id: str, types: dict[str, str]) -> tuple[float, Pos] | None:
        """The mean ticks per call of a leaf (its id first, then its type) and where it was
        written, or None when not given."""
        for key in (leaf_id, types.get(leaf_id)):
            if key is not None and key in self.durations:
                return self.durations[key], self.pos.get("durations:" + key, Pos(self.file, 1, 1))
        return None

    def key_for(self, question: str, types: dict[str, str]) -> str | None:
        """The rates key answering `question`, or None (an open question)."""
        if question in self.table:
            return question
        base, sep, suffix = question.partition("#")
        typed = types.get(base)
        if typed is not None and typed + sep + suffix in self.table:
            return typed + sep + suffix
        return None

    def dist(self, question: str, alphabet: tuple[str, ...], types: dict[str, str]) -> dict[str, float] | None:
        """The question's distribution over its alphabet, or None when it has no rates."""
        key = self.key_for(question, types)
        if key is None:
            return None
        table = self.table[key]
        outside = [o for o, p in table.items() if p > 0 and o not in alphabet]
        if outside:
            pos = self.pos.get(key, Pos(self.file, 1, 1))
            raise UserError(f"rates '{key}' give {', '.join(outside)} to '{question}', which answers "
                            f"only {', '.join(alphabet)} (give its id its own rates)",
                            pos.file, pos.line, pos.col)
        return {o: table.get(o, 0.0) for o in alphabet}


def parse_rates(raw: Any, file: str, registry: Registry | None = None) -> Rates:
    """The `rates:` (and optional `counts:`) blocks, checked: each a distribution summing to 1."""
    if not isinstance(raw, PosDict) or "rates" not in raw:
        pos = getattr(raw, "pos", Pos(file, 1, 1))
        methods = raw.get("methods") if isinstance(raw, PosDict) else None
        if isinstance(methods, dict) and methods:  # `bt-grasp bench`'s rates.yaml: one file per method
            files = [str(Path(file).parent / str(m.get("file"))) for m in methods.values() if isinstance(m, dict)]
            raise fail("this is the benchmark's index of measured rates; pass one method's file: "
                       + ", ".join(files), pos)
        raise fail("a rates file is a mapping with 'rates:' (node id or type -> {outcome: "
                   "probability})", pos)
    for key in raw:
        if key not in _TOP_KEYS:
            raise fail(f"unknown key '{key}'{did_you_mean(str(key), _TOP_KEYS)}; "
                       f"allowed: {', '.join(_TOP_KEYS)}", raw.key_pos[key])
    block = raw["rates"]
    if not isinstance(block, PosDict):
        raise fail(f"rates must be a mapping, got {kind_name(block)}", raw.val_pos["rates"])
    out = Rates({}, file=file)
    for key, dist in block.items():
        where = block.val_pos[key]
        if not isinstance(key, str) or not key:
            raise fail("a rates key is a node id or a node type", block.key_pos[key])
        if not isinstance(dist, PosDict) or not dist:
            raise fail(f"rates of '{key}' must be a mapping outcome: probability, got "
                       f"{kind_name(dist)}", where)
        nt = registry.get(key.partition("#")[0]) if registry is not None else None
        table: dict[str, float] = {}
        for outcome, p in dist.items():
            ppos = dist.val_pos[outcome]
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
                raise fail(f"probability of {outcome!r} must be a number in 0..1, got {kind_name(p)}", ppos)
            if nt is not None and "#" not in key and nt.outcomes_for is None and nt.outcomes \
                    and str(outcome) not in nt.outcomes:
                raise fail(f"'{key}' has no outcome {outcome!r}; its outcomes: {', '.join(nt.outcomes)}",
                           dist.key_pos[outcome])
            table[str(outcome)] = float(p)
        total = sum(table.values())
        if abs(total - 1) > _TOLERANCE:
            raise fail(f"rates of '{key}' sum to {total:g}, not 1", where)
        out.table[key], out.pos[key] = table, block.key_pos[key]
    counts = raw.get("counts") or {}
    if isinstance(counts, PosDict):
        out.counts = {str(k): {str(o): int(n) for o, n in v.items()} for k, v in counts.items()
                      if isinstance(v, dict)}
    _parse_durations(raw, out)
    return out


def _parse_durations(raw: PosDict, out: Rates) -> None:
    """The optional `durations:` block: node id or type -> mean ticks per call (>= 1)."""
    if "durations" not in raw:
        return
    block = raw["durations"]
    if not isinstance(block, PosDict):
        raise fail(f"durations must be a mapping node id or type -> mean ticks per call, got "
                   f"{kind_name(block)}", raw.val_pos["durations"])
    for key, ticks in block.items():
        where = block.val_pos[key]
        if isinstance(ticks, bool) or not isinstance(ticks, (int, float)) or not ticks >= 1:
            raise fail(f"duration of '{key}' must be a number of ticks >= 1 (the mean ticks of "
                       f"one call), got {ticks!r}", where)
        out.durations[str(key)] = float(ticks)
        out.pos["durations:" + str(key)] = where


def load_rates(path: str | Path, registry: Registry | None = None) -> Rates:
    """A rates file, or one `file:line:col` error."""
    display = str(path)
    try:
        text = decode_text(Path(path).read_bytes(), display)
    except OSError as exc:
        raise UserError(f"cannot read rates: {exc.strerror}", display, 1, 1) from None
    return parse_rates(load_positioned(text, display), display, registry)


def node_types(spec: Any) -> dict[str, str]:
    """Node id -> its type, for looking rates up by type."""
    return {n.id: n.type for n in spec.root.walk()}


class RatesOracle:
    """Draws every answer from the rates (the stochastic oracle the predictions are checked
    against); a question without rates takes its alphabet's first outcome."""

    def __init__(self, rates: Rates, spec: Any, seed: int = 0) -> None:
        self.rates, self.types = rates, node_types(spec)
        self.rng = random.Random(seed)
        self.choices: list[tuple[str, str]] = []

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        dist = self.rates.dist(node_id, alphabet, self.types)
        if dist is None:
            outcome = alphabet[0]
        else:
            outcome = self.rng.choices(alphabet, weights=[dist[o] for o in alphabet])[0]
        self.choices.append((node_id, outcome))
        return outcome
